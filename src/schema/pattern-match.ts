// A schema's `pattern` run in linear time: the pattern's tree (pattern-syntax.ts)
// is compiled to a small program and run as a Thompson NFA simulation (a Pike
// VM without captures) over the text's code points. Every position keeps at
// most one thread per instruction, so a test costs at most O(text × program)
// steps, whatever the pattern: `^(a|a)*$` or `^a*a*a*a*$` cannot backtrack.
// Each step is counted against the caller's budget.
//
// https://swtch.com/~rsc/regexp/regexp2.html (the Pike VM)
// Semantics are those of `new RegExp(pattern, 'u').test(text)`: an unanchored
// search, `^` and `$` at the text's ends only, `.` any code point but a line
// terminator, `\b` between a `\w` and a non-`\w` code point.

import { Assertion, isWordCode, parsePattern, type CodeSet, type PatternNode, type PatternRefusal } from './pattern-syntax.ts';

/** Instructions a compiled pattern may have: counted repetition (`a{1000}`) expands the body, so the program is bounded. */
export const MAX_PATTERN_PROGRAM = 10_000;

const Op = { Char: 1, Set: 2, Split: 3, Jump: 4, Assert: 5, Match: 6 } as const;

export const Match = { No: 0, Yes: 1, OutOfSteps: 2 } as const;
export type MatchResult = (typeof Match)[keyof typeof Match];

/** Work left to a check: a pattern test takes its steps from it. */
export interface StepBudget {
  steps: number;
}

/** Instructions `node` compiles to (Infinity past the bound). */
function programSize(node: PatternNode): number {
  switch (node.kind) {
    case 'char':
    case 'set':
    case 'assert': return 1;
    case 'seq': return node.items.reduce((sum, item) => sum + programSize(item), 0);
    case 'alt': return node.options.reduce((sum, option) => sum + programSize(option) + 2, -2);
    case 'repeat': {
      const body = programSize(node.body);
      if (body === Infinity) return Infinity;
      const size = node.min * body + (node.max === Infinity ? body + 2 : (node.max - node.min) * (body + 1));
      return size > MAX_PATTERN_PROGRAM ? Infinity : size;
    }
  }
}

class ProgramBuilder {
  readonly ops: number[] = [];
  readonly xs: number[] = [];
  readonly ys: number[] = [];
  readonly sets: CodeSet[] = [];

  emit(op: number, x = 0, y = 0): number {
    this.ops.push(op);
    this.xs.push(x);
    this.ys.push(y);
    return this.ops.length - 1;
  }

  node(node: PatternNode): void {
    switch (node.kind) {
      case 'char':
        this.emit(Op.Char, node.code);
        return;
      case 'set':
        this.sets.push(node.set);
        this.emit(Op.Set, this.sets.length - 1);
        return;
      case 'assert':
        this.emit(Op.Assert, node.assertion);
        return;
      case 'seq':
        for (const item of node.items) this.node(item);
        return;
      case 'alt': {
        const jumps: number[] = [];
        node.options.forEach((option, i) => {
          if (i === node.options.length - 1) return this.node(option);
          const split = this.emit(Op.Split, this.ops.length + 1);
          this.node(option);
          jumps.push(this.emit(Op.Jump));
          this.ys[split] = this.ops.length;
        });
        for (const jump of jumps) this.xs[jump] = this.ops.length;
        return;
      }
      case 'repeat': {
        for (let i = 0; i < node.min; i++) this.node(node.body);
        if (node.max === Infinity) {
          const loop = this.emit(Op.Split, this.ops.length + 1);
          this.node(node.body);
          this.emit(Op.Jump, loop);
          this.ys[loop] = this.ops.length;
          return;
        }
        const splits: number[] = [];
        for (let i = node.min; i < node.max; i++) {
          splits.push(this.emit(Op.Split, this.ops.length + 1));
          this.node(node.body);
        }
        for (const split of splits) this.ys[split] = this.ops.length;
      }
    }
  }
}

function inSet(set: CodeSet, code: number, text: string, index: number): boolean {
  if (set.sticky !== null) {
    const known = set.known as Int8Array;
    if (code < 256 && known[code] !== 0) return known[code] === 2;
    set.sticky.lastIndex = index;
    const found = set.sticky.test(text);
    if (code < 256) known[code] = found ? 2 : 1;
    return found;
  }
  const ranges = set.ranges;
  let found = false;
  for (let i = 0; i < ranges.length; i += 2) {
    if (code < (ranges[i] as number)) break;
    if (code <= (ranges[i + 1] as number)) {
      found = true;
      break;
    }
  }
  return found !== set.negated;
}

function assertionHolds(assertion: number, text: string, at: number): boolean {
  switch (assertion) {
    case Assertion.Start: return at === 0;
    case Assertion.End: return at === text.length;
    default: {
      const before = at > 0 && isWordCode(text.charCodeAt(at - 1));
      const after = at < text.length && isWordCode(text.charCodeAt(at));
      return (before !== after) === (assertion === Assertion.WordBoundary);
    }
  }
}

/** A pattern compiled for linear-time tests. Not reentrant: its thread lists are reused from test to test (the gateway runs one check at a time). */
export class LinearPattern {
  readonly source: string;
  readonly ops: Int32Array;
  readonly xs: Int32Array;
  readonly ys: Int32Array;
  readonly sets: readonly CodeSet[];
  /** The program starts with `^`: no thread starts past position 0. */
  readonly anchored: boolean;
  current: Int32Array;
  next: Int32Array;
  readonly marks: Int32Array;
  readonly stack: Int32Array;
  generation = 0;
  /** Code points every match starts with (the program's leading character tests): findSpan jumps between their occurrences. */
  readonly literalPrefix: string;
  /** Thread start offsets for findSpan, made on its first use. */
  starts: Int32Array | null = null;
  nextStarts: Int32Array | null = null;
  /** Set by follow(..., throughMatch): the closure reached the match instruction. */
  reachedMatch = false;
  /** The best match findSpan has seen so far, [bestStart, bestEnd); -1 while none: fields, so a search makes no closure. */
  bestStart = -1;
  bestEnd = -1;

  constructor(source: string, builder: ProgramBuilder) {
    this.source = source;
    this.ops = Int32Array.from(builder.ops);
    this.xs = Int32Array.from(builder.xs);
    this.ys = Int32Array.from(builder.ys);
    this.sets = builder.sets;
    this.anchored = builder.ops[0] === Op.Assert && builder.xs[0] === Assertion.Start;
    let prefix = '';
    for (let pc = 0; builder.ops[pc] === Op.Char; pc++) prefix += String.fromCodePoint(builder.xs[pc] as number);
    this.literalPrefix = prefix;
    const size = builder.ops.length;
    this.current = new Int32Array(size);
    this.next = new Int32Array(size);
    this.marks = new Int32Array(size);
    // Each instruction is pushed at most twice per closure (once as a Split's branch, once more from a Jump).
    this.stack = new Int32Array(2 * size + 2);
  }

  /**
   * Adds the threads reachable from `start` at text index `at` to `list` (from
   * `length` on); returns the new length, or -1 when the match instruction is
   * reached (with `throughMatch`, sets reachedMatch and goes on instead).
   */
  follow(start: number, list: Int32Array, length: number, text: string, at: number, budget: StepBudget, throughMatch = false): number {
    const { ops, xs, ys, marks, stack } = this;
    this.reachedMatch = false;
    const generation = this.generation;
    let top = 0;
    stack[top++] = start;
    let steps = 0;
    while (top > 0) {
      const pc = stack[--top] as number;
      if (marks[pc] === generation) continue;
      marks[pc] = generation;
      steps++;
      switch (ops[pc]) {
        case Op.Char:
        case Op.Set:
          list[length++] = pc;
          break;
        case Op.Split:
          stack[top++] = ys[pc] as number;
          stack[top++] = xs[pc] as number;
          break;
        case Op.Jump:
          stack[top++] = xs[pc] as number;
          break;
        case Op.Assert:
          if (assertionHolds(xs[pc] as number, text, at)) stack[top++] = pc + 1;
          break;
        default:
          if (throughMatch) {
            this.reachedMatch = true;
            break;
          }
          budget.steps -= steps;
          return -1;
      }
    }
    budget.steps -= steps;
    return length;
  }

  nextGeneration(): void {
    if (++this.generation === 0x7fffffff) {
      this.marks.fill(0);
      this.generation = 1;
    }
  }

  /** Whether `text` holds a match (RegExp.prototype.test with the `u` flag), or OutOfSteps when `budget` ran out first. */
  test(text: string, budget: StepBudget): MatchResult {
    const { ops, xs, sets } = this;
    this.nextGeneration();
    let count = this.follow(0, this.current, 0, text, 0, budget);
    if (count === -1) return Match.Yes;
    for (let at = 0; at < text.length;) {
      if (budget.steps < 0) return Match.OutOfSteps;
      if (count === 0 && this.anchored) return Match.No;
      const code = text.codePointAt(at) as number;
      const after = at + (code > 0xffff ? 2 : 1);
      this.nextGeneration();
      const current = this.current;
      const next = this.next;
      let nextCount = 0;
      budget.steps -= count;
      for (let i = 0; i < count; i++) {
        const pc = current[i] as number;
        const taken = ops[pc] === Op.Char ? xs[pc] === code : inSet(sets[xs[pc] as number] as CodeSet, code, text, at);
        if (!taken) continue;
        const following = pc + 1;
        const op = ops[following];
        // Most instructions are followed by a character test: added here, without a closure walk.
        if (op === Op.Char || op === Op.Set) {
          if (this.marks[following] !== this.generation) {
            this.marks[following] = this.generation;
            next[nextCount++] = following;
            budget.steps--;
          }
          continue;
        }
        nextCount = this.follow(following, next, nextCount, text, after, budget);
        if (nextCount === -1) return Match.Yes;
      }
      // The search is unanchored: a match may also start at the next position.
      if (!this.anchored) {
        nextCount = this.follow(0, next, nextCount, text, after, budget);
        if (nextCount === -1) return Match.Yes;
      }
      this.current = next;
      this.next = current;
      count = nextCount;
      at = after;
    }
    return budget.steps < 0 ? Match.OutOfSteps : Match.No;
  }
  /** Threads starting at `start` from index `at` added to `list` (their start in `listStarts`); a match reached there is noted as the best when it is. */
  seed(text: string, budget: StepBudget, list: Int32Array, listStarts: Int32Array, length: number, at: number, start: number): number {
    const added = this.follow(0, list, length, text, at, budget, true);
    for (let k = length; k < added; k++) listStarts[k] = start;
    if (this.reachedMatch && (this.bestStart === -1 || start < this.bestStart || (start === this.bestStart && at > this.bestEnd))) {
      this.bestStart = start;
      this.bestEnd = at;
    }
    return added;
  }

  /**
   * The leftmost match at or after `from`, the longest one starting there, as
   * [start, end) UTF-16 offsets; null when there is none, OutOfSteps when
   * `budget` ran out first. One search costs O((end of the scan - from) ×
   * program) steps: it stops once every thread that began at or before the
   * match's start has ended.
   */
  findSpan(text: string, from: number, budget: StepBudget, maxLength = Number.POSITIVE_INFINITY): { start: number; end: number } | null | typeof Match.OutOfSteps {
    const { ops, xs, sets } = this;
    if (this.starts === null) {
      this.starts = new Int32Array(this.ops.length);
      this.nextStarts = new Int32Array(this.ops.length);
    }
    let starts = this.starts;
    let nextStarts = this.nextStarts as Int32Array;
    this.bestStart = -1;
    this.bestEnd = -1;
    this.nextGeneration();
    let count = from === 0 || !this.anchored ? this.seed(text, budget, this.current, starts, 0, from, from) : 0;
    const prefix = this.literalPrefix;
    for (let at = from; at < text.length;) {
      if (budget.steps < 0) return Match.OutOfSteps;
      if (count === 0 && (this.anchored || this.bestStart !== -1)) break;
      // A match is not made longer past maxLength: threads that could (`a|a.*b`) would otherwise read to the text's end for every match.
      if (this.bestStart !== -1 && at - this.bestStart >= maxLength) break;
      if (prefix !== '' && this.bestStart === -1 && count === 1 && this.current[0] === 0) {
        // Only the thread starting here is alive: a match can only start where the pattern's fixed prefix occurs.
        const next = text.indexOf(prefix, at);
        if (next === -1) break;
        if (next > at) {
          budget.steps -= next - at;
          at = next;
          this.nextGeneration();
          count = this.seed(text, budget, this.current, starts, 0, at, at);
        }
      }
      const code = text.codePointAt(at) as number;
      const after = at + (code > 0xffff ? 2 : 1);
      this.nextGeneration();
      const current = this.current;
      const next = this.next;
      let nextCount = 0;
      budget.steps -= count;
      for (let i = 0; i < count; i++) {
        const pc = current[i] as number;
        const start = starts[i] as number;
        // Past a match, only threads that could make it longer or earlier go on.
        if (this.bestStart !== -1 && start > this.bestStart) continue;
        const taken = ops[pc] === Op.Char ? xs[pc] === code : inSet(sets[xs[pc] as number] as CodeSet, code, text, at);
        if (!taken) continue;
        const before = nextCount;
        nextCount = this.follow(pc + 1, next, nextCount, text, after, budget, true);
        for (let k = before; k < nextCount; k++) nextStarts[k] = start;
        if (this.reachedMatch && (this.bestStart === -1 || start < this.bestStart || (start === this.bestStart && after > this.bestEnd))) {
          this.bestStart = start;
          this.bestEnd = after;
        }
      }
      if (!this.anchored && this.bestStart === -1) nextCount = this.seed(text, budget, next, nextStarts, nextCount, after, after);
      this.current = next;
      this.next = current;
      const swap = starts;
      starts = nextStarts;
      nextStarts = swap;
      count = nextCount;
      at = after;
    }
    this.starts = starts;
    this.nextStarts = nextStarts;
    if (budget.steps < 0) return Match.OutOfSteps;
    return this.bestStart === -1 ? null : { start: this.bestStart, end: this.bestEnd };
  }
}

/**
 * Compiles a pattern that compiles as `new RegExp(pattern, 'u')` for linear-time
 * tests, or names the first feature it cannot run (or the program bound).
 */
export function compileLinearPattern(pattern: string): LinearPattern | PatternRefusal {
  const tree = parsePattern(pattern);
  if (!('kind' in tree)) return tree;
  if (programSize(tree) + 1 > MAX_PATTERN_PROGRAM) return { feature: `compiles to more than ${MAX_PATTERN_PROGRAM} instructions (counted repetition copies what it repeats)`, at: -1 };
  const builder = new ProgramBuilder();
  builder.node(tree);
  builder.emit(Op.Match);
  return new LinearPattern(pattern, builder);
}
