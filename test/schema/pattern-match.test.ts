// The linear-time pattern matcher agrees with `new RegExp(pattern, 'u').test`:
// random patterns from the supported grammar against random strings (short
// enough that V8's backtracking stays quick), every BMP code point against the
// class escapes, and hostile patterns whose steps grow with the text, not
// exponentially. What it does not run is refused with the feature and position.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileLinearPattern, Match, MAX_PATTERN_PROGRAM, type LinearPattern } from '../../src/schema/pattern-match.ts';

function compiled(pattern: string): LinearPattern {
  const result = compileLinearPattern(pattern);
  assert.ok(!('feature' in result), `${pattern}: ${JSON.stringify(result)}`);
  return result;
}

/** The matcher's answer (true or false) and the steps it took. */
function run(pattern: LinearPattern, text: string): { matched: boolean; steps: number } {
  const budget = { steps: 1e9 };
  const result = pattern.test(text, budget);
  assert.notEqual(result, Match.OutOfSteps);
  return { matched: result === Match.Yes, steps: 1e9 - budget.steps };
}

/** A seeded generator (mulberry32), so a failure is found again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LITERALS = ['a', 'b', 'c', '1', '_', ' ', '-', ',', 'é', '😀', 'Ω', '/'];
const ESCAPES = [
  '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '\\t', '\\n', '\\x61', '\\u0062', '\\u{1F600}', '\\uD83D\\uDE00', '\\uD83D', '\\0', '\\cJ',
  '\\.', '\\*', '\\+', '\\?', '\\(', '\\)', '\\[', '\\]', '\\{', '\\}', '\\|', '\\/', '\\^', '\\$', '\\\\', '\\p{L}', '\\P{L}', '\\p{Lu}', '\\p{Script=Greek}',
];
const ASSERTIONS = ['^', '$', '\\b', '\\B'];
const QUANTIFIERS = ['*', '+', '?', '{0}', '{1}', '{2}', '{1,}', '{0,2}', '{2,3}'];
const CLASS_ITEMS = ['a', 'b', '1', ' ', 'é', '😀', 'a-c', '0-9', 'a-a', '\\u0061-\\u0063', '😀-🙂', ' -/', '\\d', '\\W', '\\s', '\\S', '\\-', '\\]', '\\\\', '\\b', '\\n', '\\u{1F600}'];
const TEXT_UNITS = ['a', 'b', 'c', 'A', '1', '_', ' ', '-', '\n', 'é', '😀', '🙂', '\uD83D', '\uDE00', 'Ω', '.', '*', '/', '\b', '\u2028'];

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/;

function patternGenerator(next: () => number): () => string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  let names = 0;
  const characterClass = (): string => {
    let items = next() < 0.3 ? '^' : '';
    const count = Math.floor(next() * 4);
    for (let i = 0; i < count; i++) items += pick(CLASS_ITEMS);
    if (next() < 0.05) items += '\\p{L}';
    if (next() < 0.1) items += '-';
    return `[${items}]`;
  };
  const alternation = (depth: number): string => {
    const options = next() < 0.25 ? 2 : 1;
    const out: string[] = [];
    for (let i = 0; i < options; i++) out.push(sequence(depth));
    return out.join('|');
  };
  const sequence = (depth: number): string => {
    let out = '';
    const count = Math.floor(next() * 4);
    for (let i = 0; i < count; i++) out += term(depth);
    return out;
  };
  const term = (depth: number): string => {
    const r = next();
    if (r < 0.1) return pick(ASSERTIONS);
    let atom: string;
    if (r < 0.4) atom = pick(LITERALS);
    else if (r < 0.48) atom = '.';
    else if (r < 0.6) atom = characterClass();
    else if (r < 0.75 || depth >= 3) atom = pick(ESCAPES);
    else {
      const open = pick(['(', '(?:', '(?<g>']).replace('g', `g${names++}`);
      atom = `${open}${alternation(depth + 1)})`;
    }
    if (next() < 0.35) atom += pick(QUANTIFIERS) + (next() < 0.3 ? '?' : '');
    return atom;
  };
  return () => {
    names = 0;
    return alternation(0);
  };
}

describe('the linear-time pattern matcher', () => {
  it('agrees with RegExp(pattern, "u").test on random patterns and strings', () => {
    const next = random(0x28d);
    const pattern = patternGenerator(next);
    let patterns = 0;
    let matches = 0;
    for (let attempt = 0; patterns < 2500 && attempt < 10_000; attempt++) {
      const source = pattern();
      let expected: RegExp;
      try {
        expected = new RegExp(source, 'u');
      } catch {
        continue;
      }
      patterns++;
      const mine = compiled(source);
      for (let k = 0; k < 24; k++) {
        let text = '';
        const length = Math.floor(next() * 9);
        for (let i = 0; i < length; i++) text += TEXT_UNITS[Math.floor(next() * TEXT_UNITS.length)];
        // V8 also tries an empty match between the two halves of a surrogate pair, where only "\B" holds ("\B" finds
        // one in "b😀a"); ECMAScript's unanchored search starts at code points only (AdvanceStringIndex), as the matcher does.
        if (source.includes('\\B') && SURROGATE_PAIR.test(text)) continue;
        const want = expected.test(text);
        if (want) matches++;
        assert.equal(run(mine, text).matched, want, `pattern ${JSON.stringify(source)} on ${JSON.stringify(text)}`);
      }
    }
    assert.equal(patterns, 2500);
    // Both answers occur often, so agreement is not agreement on "false".
    assert.ok(matches > 15_000 && matches < 45_000, `${matches} matches`);
  });

  it('agrees on every BMP code point (and some astral ones) for the class escapes, ".", and a negated class', () => {
    const sets = ['.', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '[^\\s\\d]', '[\\0-\\x1f\\u2000-\\u200f]', '\\p{L}', '[^\\p{N}a]'];
    const texts: string[] = [];
    for (let code = 0; code <= 0xffff; code++) texts.push(String.fromCharCode(code));
    for (let code = 0x10000; code <= 0x10ffff; code += 0x3fb) texts.push(String.fromCodePoint(code));
    for (const set of sets) {
      const source = `^${set}$`;
      const expected = new RegExp(source, 'u');
      const mine = compiled(source);
      for (const text of texts) if (run(mine, text).matched !== expected.test(text)) assert.fail(`${source} on U+${(text.codePointAt(0) as number).toString(16)}`);
    }
  });

  it('finds "\\B" at code points only, as ECMAScript specifies (V8 also finds it inside a surrogate pair)', () => {
    assert.equal(run(compiled('\\B'), 'b😀a').matched, false);
    assert.equal(run(compiled('\\B'), '😀😀').matched, true, 'between two astral characters');
    assert.equal(run(compiled('\\B.'), 'b😀a').matched, new RegExp('\\B.', 'u').test('b😀a'));
  });

  it('agrees on word boundaries and anchors around astral characters and lone surrogates', () => {
    const cases = ['\\bé', 'a\\B', '\\b😀', '😀$', '^.a', '^\\uD83D', '\\uDE00', '.\\uDE00', '^..$', '[😀-🙂]{2}'];
    const texts = ['😀a', 'aé', '\uD83D', '\uD83Da', '😀', 'a\uDE00', '🙂😀', 'é', ''];
    for (const source of cases) {
      const mine = compiled(source);
      for (const text of texts) assert.equal(run(mine, text).matched, new RegExp(source, 'u').test(text), `${source} on ${JSON.stringify(text)}`);
    }
  });

  it('takes steps in proportion to the text where a backtracking engine takes exponential time', () => {
    const program = (source: string): number => compiled(source).ops.length;
    const hostile: [string, string][] = [
      ['^a*a*a*a*a*a*a*a*$', `${'a'.repeat(40)}!`],
      ['^a*a*a*a*a*a*a*a*a*a*a*a*$', `${'a'.repeat(60)}!`],
      ['^(a|a)*$', `${'a'.repeat(26)}!`],
      ['^(a+)+$', `${'a'.repeat(5000)}!`],
      ['^(\\w+\\s?)*$', `${'word '.repeat(2000)}!`],
    ];
    for (const [source, text] of hostile) {
      const { matched, steps } = run(compiled(source), text);
      assert.equal(matched, false, source);
      // At most every instruction twice per position (its closure visit and its character test).
      assert.ok(steps <= 2 * (text.length + 1) * program(source), `${source}: ${steps} steps for ${text.length} characters`);
    }
    const twice = (source: string, unit: string): number => {
      const pattern = compiled(source);
      return run(pattern, `${unit.repeat(2000)}!`).steps / run(pattern, `${unit.repeat(1000)}!`).steps;
    };
    for (const [source, unit] of [['^(a|a)*$', 'a'], ['^a*a*a*a*a*a*a*a*$', 'a'], ['(x+x+)+y', 'x']] as const) {
      const ratio = twice(source, unit);
      assert.ok(ratio > 1.9 && ratio < 2.1, `${source}: twice the text took ${ratio} times the steps`);
    }
  });

  it('stops when the budget runs out', () => {
    const pattern = compiled('^[a-z]+$');
    const budget = { steps: 100 };
    assert.equal(pattern.test('a'.repeat(1000), budget), Match.OutOfSteps);
    assert.ok(budget.steps < 0);
    assert.equal(pattern.test('abc', { steps: 100 }), Match.Yes);
  });

  it('refuses what cannot run in linear time or is not implemented, naming it and where it starts', () => {
    const refused: [string, string, number][] = [
      ['(a)\\1', 'a backreference', 3],
      ['(?<x>a)\\k<x>', 'a named backreference "\\k"', 7],
      ['a(?=b)', 'a lookahead "(?="', 1],
      ['a(?!b)', 'a negative lookahead "(?!"', 1],
      ['(?<=a)b', 'a lookbehind "(?<="', 0],
      ['x(?<!a)b', 'a negative lookbehind "(?<!"', 1],
    ];
    for (const [source, feature, at] of refused) {
      new RegExp(source, 'u');
      assert.deepStrictEqual(compileLinearPattern(source), { feature, at }, source);
    }
  });

  it(`bounds the program at ${MAX_PATTERN_PROGRAM} instructions, counted repetition expanded`, () => {
    const bound = { feature: `compiles to more than ${MAX_PATTERN_PROGRAM} instructions (counted repetition copies what it repeats)`, at: -1 };
    assert.equal(compiled('a{9999}').ops.length, MAX_PATTERN_PROGRAM);
    assert.deepStrictEqual(compileLinearPattern('a{10000}'), bound);
    assert.deepStrictEqual(compileLinearPattern('(a{100}){100}'), bound);
    assert.deepStrictEqual(compileLinearPattern('((a{100}){100}){100}'), bound);
    assert.deepStrictEqual(compileLinearPattern('(?:(?:a{1000}){1000}){0}'), bound);
    assert.deepStrictEqual(compileLinearPattern('a{0,4294967295}'), bound);
  });
});
