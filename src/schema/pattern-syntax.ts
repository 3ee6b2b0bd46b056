// The syntax of a schema's `pattern`, parsed into a tree the linear-time
// matcher (pattern-match.ts) compiles. The pattern has already compiled as
// `new RegExp(pattern, 'u')`, so this parser only needs to read valid syntax;
// what it meets that cannot run in linear time (backreferences, lookarounds)
// or that it does not implement is refused with the feature and its position.
//
// https://tc39.es/ecma262/#sec-patterns (the grammar with the [UnicodeMode] parameter)

/** A set of code points: sorted inclusive [low, high] pairs, or a one-code-point RegExp where a Unicode property is involved. */
export interface CodeSet {
  readonly ranges: readonly number[];
  readonly negated: boolean;
  /** For classes with `\p{...}`: the class as a sticky RegExp, tested at the code point's index (one code point, constant time). */
  readonly sticky: RegExp | null;
  /** The sticky RegExp's answers for code points below 256, filled as met: 0 not yet asked, 1 out, 2 in. */
  readonly known: Int8Array | null;
}

export const Assertion = { Start: 1, End: 2, WordBoundary: 3, NotWordBoundary: 4 } as const;

export type PatternNode =
  | { readonly kind: 'char'; readonly code: number }
  | { readonly kind: 'set'; readonly set: CodeSet }
  | { readonly kind: 'seq'; readonly items: readonly PatternNode[] }
  | { readonly kind: 'alt'; readonly options: readonly PatternNode[] }
  | { readonly kind: 'repeat'; readonly body: PatternNode; readonly min: number; readonly max: number }
  | { readonly kind: 'assert'; readonly assertion: number };

/** Why a pattern is not run: the feature, and the index in the pattern where it starts (-1: the whole pattern, as for the program bound). */
export interface PatternRefusal {
  readonly feature: string;
  readonly at: number;
}

const MAX_CODE_POINT = 0x10ffff;
const DIGIT: readonly number[] = [0x30, 0x39];
const WORD: readonly number[] = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
// WhiteSpace and LineTerminator: https://tc39.es/ecma262/#sec-characterclassescape
const SPACE: readonly number[] = [
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
];
const LINE_TERMINATOR: readonly number[] = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];

/** The code points not in `ranges` (sorted, merged). */
function complement(ranges: readonly number[]): number[] {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    if ((ranges[i] as number) > next) out.push(next, (ranges[i] as number) - 1);
    next = (ranges[i + 1] as number) + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

/** Sorts and merges [low, high] pairs. */
function normalise(pairs: number[]): number[] {
  const order: [number, number][] = [];
  for (let i = 0; i < pairs.length; i += 2) order.push([pairs[i] as number, pairs[i + 1] as number]);
  order.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [low, high] of order) {
    const last = out.length - 1;
    if (last > 0 && low <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, high);
    else out.push(low, high);
  }
  return out;
}

export const DOT_SET: CodeSet = { ranges: complement(LINE_TERMINATOR), negated: false, sticky: null, known: null };

const CLASS_ESCAPES: Readonly<Record<string, readonly number[]>> = {
  d: DIGIT, D: complement(DIGIT), w: WORD, W: complement(WORD), s: SPACE, S: complement(SPACE),
};

export function isWordCode(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x5f;
}

/** A set V8 decides: `\p{...}` or a class holding one, as a one-code-point sticky RegExp (Unicode's property tables are V8's). */
function propertySet(source: string): CodeSet {
  return { ranges: [], negated: false, sticky: new RegExp(source, 'uy'), known: new Int8Array(256) };
}

class Refused {
  readonly refusal: PatternRefusal;
  constructor(feature: string, at: number) {
    this.refusal = { feature, at };
  }
}

const HEX = /^[0-9A-Fa-f]+$/;

class PatternParser {
  readonly source: string;
  at = 0;

  constructor(source: string) {
    this.source = source;
  }

  peek(): number {
    return this.at < this.source.length ? (this.source.codePointAt(this.at) as number) : -1;
  }

  take(): number {
    const code = this.source.codePointAt(this.at) as number;
    this.at += code > 0xffff ? 2 : 1;
    return code;
  }

  startsWith(text: string): boolean {
    return this.source.startsWith(text, this.at);
  }

  alternation(): PatternNode {
    const options = [this.sequence()];
    while (this.peek() === 0x7c /* | */) {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] as PatternNode : { kind: 'alt', options };
  }

  sequence(): PatternNode {
    const items: PatternNode[] = [];
    for (let code = this.peek(); code !== -1 && code !== 0x7c && code !== 0x29 /* ) */; code = this.peek()) items.push(this.quantified());
    return items.length === 1 ? items[0] as PatternNode : { kind: 'seq', items };
  }

  quantified(): PatternNode {
    const body = this.atom();
    if (body.kind === 'assert') return body;
    let min: number;
    let max: number;
    const code = this.peek();
    if (code === 0x2a /* * */) [min, max] = [0, Infinity];
    else if (code === 0x2b /* + */) [min, max] = [1, Infinity];
    else if (code === 0x3f /* ? */) [min, max] = [0, 1];
    else if (code === 0x7b /* { */) {
      const close = this.source.indexOf('}', this.at);
      const [low, high] = this.source.slice(this.at + 1, close).split(',');
      min = Number(low);
      max = high === undefined ? min : high === '' ? Infinity : Number(high);
      this.at = close;
    } else return body;
    this.at++;
    // A lazy quantifier matches the same strings; only which match is found first differs, and test() asks only whether one exists.
    if (this.peek() === 0x3f) this.at++;
    return { kind: 'repeat', body, min, max };
  }

  atom(): PatternNode {
    const start = this.at;
    const code = this.take();
    switch (code) {
      case 0x5e: return { kind: 'assert', assertion: Assertion.Start };
      case 0x24: return { kind: 'assert', assertion: Assertion.End };
      case 0x2e: return { kind: 'set', set: DOT_SET };
      case 0x5b: return this.characterClass(start);
      case 0x28: return this.group(start);
      case 0x5c: return this.atomEscape(start);
      default: return { kind: 'char', code };
    }
  }

  group(start: number): PatternNode {
    if (this.startsWith('?=')) throw new Refused('a lookahead "(?="', start);
    if (this.startsWith('?!')) throw new Refused('a negative lookahead "(?!"', start);
    if (this.startsWith('?<=')) throw new Refused('a lookbehind "(?<="', start);
    if (this.startsWith('?<!')) throw new Refused('a negative lookbehind "(?<!"', start);
    if (this.startsWith('?:')) this.at += 2;
    else if (this.startsWith('?<')) this.at = this.source.indexOf('>', this.at) + 1;
    else if (this.startsWith('?')) throw new Refused('a group with modifiers "(?"', start);
    const body = this.alternation();
    this.at++; // ')'
    // A group holding only an assertion may be quantified ("(?:^)?"); wrapped, quantified() does not take it for a bare one.
    return body.kind === 'assert' ? { kind: 'seq', items: [body] } : body;
  }

  atomEscape(start: number): PatternNode {
    const code = this.peek();
    if (code >= 0x31 && code <= 0x39) throw new Refused('a backreference', start);
    if (code === 0x6b /* k */) throw new Refused('a named backreference "\\k"', start);
    if (code === 0x62 /* b */ || code === 0x42 /* B */) {
      this.at++;
      return { kind: 'assert', assertion: code === 0x62 ? Assertion.WordBoundary : Assertion.NotWordBoundary };
    }
    const set = this.setEscape(start);
    if (set !== null) return { kind: 'set', set };
    return { kind: 'char', code: this.characterEscape(start) };
  }

  /** `\d \D \w \W \s \S` and `\p{..} \P{..}` as a set, or null for any other escape (the backslash already read). */
  setEscape(start: number): CodeSet | null {
    const code = this.peek();
    const letter = String.fromCharCode(code);
    if (code !== -1 && Object.hasOwn(CLASS_ESCAPES, letter)) {
      this.at++;
      return { ranges: CLASS_ESCAPES[letter] as readonly number[], negated: false, sticky: null, known: null };
    }
    if (code === 0x70 /* p */ || code === 0x50 /* P */) {
      this.at = this.source.indexOf('}', this.at) + 1;
      return propertySet(this.source.slice(start, this.at));
    }
    return null;
  }

  /** The code point an escape stands for (the backslash already read). */
  characterEscape(start: number): number {
    const code = this.take();
    switch (code) {
      case 0x74: return 0x09; // \t
      case 0x6e: return 0x0a; // \n
      case 0x76: return 0x0b; // \v
      case 0x66: return 0x0c; // \f
      case 0x72: return 0x0d; // \r
      case 0x30: return 0x00; // \0 (never followed by a digit in Unicode mode)
      case 0x62: return 0x08; // \b, in a class
      case 0x2d: return 0x2d; // \-, in a class
      case 0x63: return this.take() % 32; // \cX
      case 0x78: return this.hex(2, start); // \xHH
      case 0x75: return this.unicodeEscape(start); // \uHHHH, \u{H...}
      default:
        // An identity escape: in Unicode mode only syntax characters and "/" may be escaped, and they stand for themselves.
        if ('^$\\.*+?()[]{}|/'.includes(String.fromCodePoint(code))) return code;
        throw new Refused(`the escape "\\${String.fromCodePoint(code)}"`, start);
    }
  }

  hex(digits: number, start: number): number {
    const text = this.source.slice(this.at, this.at + digits);
    if (text.length !== digits || !HEX.test(text)) throw new Refused('a malformed escape', start);
    this.at += digits;
    return parseInt(text, 16);
  }

  unicodeEscape(start: number): number {
    if (this.peek() === 0x7b /* { */) {
      const close = this.source.indexOf('}', this.at);
      const value = parseInt(this.source.slice(this.at + 1, close), 16);
      this.at = close + 1;
      return value;
    }
    const lead = this.hex(4, start);
    // In Unicode mode `\uD83D\uDE00` is one code point, as the pair of literal surrogates would be.
    if (lead >= 0xd800 && lead <= 0xdbff && this.startsWith('\\u') && /^[Dd][C-Fc-f][0-9A-Fa-f]{2}$/.test(this.source.slice(this.at + 2, this.at + 6))) {
      const trail = parseInt(this.source.slice(this.at + 2, this.at + 6), 16);
      this.at += 6;
      return (lead - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000;
    }
    return lead;
  }

  characterClass(start: number): PatternNode {
    let negated = false;
    if (this.peek() === 0x5e /* ^ */) {
      negated = true;
      this.at++;
    }
    const pairs: number[] = [];
    let property = false;
    while (this.peek() !== 0x5d /* ] */) {
      const itemStart = this.at;
      const low = this.classAtom(pairs);
      if (low === -2) property = true;
      if (low < 0 || this.peek() !== 0x2d /* - */ || this.source.codePointAt(this.at + 1) === 0x5d) {
        if (low >= 0) pairs.push(low, low);
        continue;
      }
      this.at++; // '-'
      const high = this.classAtom(pairs);
      if (high < 0) throw new Refused('a class range ending in a class escape', itemStart);
      pairs.push(low, high);
    }
    this.at++; // ']'
    if (property) return { kind: 'set', set: propertySet(this.source.slice(start, this.at)) };
    return { kind: 'set', set: { ranges: normalise(pairs), negated, sticky: null, known: null } };
  }

  /** One class atom: its code point, or -1 when it was a class escape whose ranges went into `pairs` (-2: a Unicode property). */
  classAtom(pairs: number[]): number {
    const start = this.at;
    const code = this.take();
    if (code !== 0x5c /* \ */) return code;
    const set = this.setEscape(start);
    if (set === null) return this.characterEscape(start);
    if (set.sticky !== null) return -2;
    for (const bound of set.ranges) pairs.push(bound);
    return -1;
  }
}

/**
 * The tree of a pattern that compiles as `new RegExp(pattern, 'u')`, or the
 * first feature the linear-time matcher does not run, with its position.
 */
export function parsePattern(pattern: string): PatternNode | PatternRefusal {
  const parser = new PatternParser(pattern);
  try {
    const node = parser.alternation();
    if (parser.at < pattern.length) return { feature: `an unmatched "${pattern[parser.at]}"`, at: parser.at };
    return node;
  } catch (error) {
    if (error instanceof Refused) return error.refusal;
    throw error;
  }
}
