// LinearPattern.findSpan: the leftmost match and the longest one from there,
// checked against V8: the start is RegExp's match index (leftmost is the same
// for both), the span matches the whole pattern, and no longer span from the
// same start does. Random patterns and texts from a seeded generator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileLinearPattern, Match, type LinearPattern } from '../../src/schema/pattern-match.ts';

function compiled(pattern: string): LinearPattern {
  const result = compileLinearPattern(pattern);
  assert.ok(!('feature' in result), `${pattern}: ${JSON.stringify(result)}`);
  return result;
}

function spans(pattern: string, text: string): Array<[number, number]> {
  const linear = compiled(pattern);
  const out: Array<[number, number]> = [];
  const budget = { steps: 1e9 };
  for (let from = 0; from <= text.length;) {
    const found = linear.findSpan(text, from, budget);
    assert.notEqual(found, Match.OutOfSteps);
    if (found === null || found === Match.OutOfSteps) break;
    out.push([found.start, found.end]);
    from = found.end > found.start ? found.end : found.end + 1;
  }
  return out;
}

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('findSpan', () => {
  it('finds every non-overlapping match, leftmost then longest', () => {
    assert.deepEqual(spans('INC-[0-9]{6}', 'x INC-123456, INC-12345 INC-6543210'), [[2, 12], [24, 34]]);
    assert.deepEqual(spans('a|ab', 'xab ab a'), [[1, 3], [4, 6], [7, 8]]);
    assert.deepEqual(spans('a+', 'baaab aa'), [[1, 4], [6, 8]]);
    assert.deepEqual(spans('^ab', 'abab'), [[0, 2]]);
    assert.deepEqual(spans('ab$', 'abab'), [[2, 4]]);
    assert.deepEqual(spans('\\bcat\\b', 'cat concat cat.'), [[0, 3], [11, 14]]);
    assert.deepEqual(spans('😀+', 'a😀😀b'), [[1, 5]]);
    assert.deepEqual(spans('x', ''), []);
  });

  it('starts where V8 starts, and the span is the longest match from there (random patterns)', () => {
    const next = random(32);
    const atoms = ['a', 'b', 'ab', '[ab]', '.', 'a?', 'b*', '(a|ab)', '(b|ba)+', '\\d', '[^a]'];
    for (let round = 0; round < 400; round++) {
      let pattern = '';
      for (let k = 1 + Math.floor(next() * 4); k > 0; k--) pattern += atoms[Math.floor(next() * atoms.length)];
      let text = '';
      for (let k = Math.floor(next() * 12); k > 0; k--) text += 'ab1 '[Math.floor(next() * 4)];
      const found = compiled(pattern).findSpan(text, 0, { steps: 1e9 });
      const v8 = new RegExp(pattern, 'u').exec(text);
      if (v8 === null) {
        assert.equal(found, null, `${pattern} on ${JSON.stringify(text)}`);
        continue;
      }
      assert.ok(found !== null && found !== Match.OutOfSteps, `${pattern} on ${JSON.stringify(text)}`);
      assert.equal(found.start, v8.index, `${pattern} on ${JSON.stringify(text)}`);
      const whole = new RegExp(`^(?:${pattern})$`, 'u');
      assert.ok(whole.test(text.slice(found.start, found.end)), `${pattern} on ${JSON.stringify(text)}: ${found.start}-${found.end}`);
      for (let end = found.end + 1; end <= text.length; end++) assert.ok(!whole.test(text.slice(found.start, end)), `${pattern}: longer to ${end}`);
    }
  });

  it('a search costs steps in proportion to the text: (a|a)*b over 100,000 a', () => {
    const linear = compiled('(a|a)*b');
    const budget = { steps: 1e9 };
    assert.equal(linear.findSpan('a'.repeat(100_000), 0, budget), null);
    assert.ok(1e9 - budget.steps <= 12 * 100_000, `${1e9 - budget.steps}`);
  });

  it('out of steps is reported, not a wrong answer', () => {
    assert.equal(compiled('(a|a)*b').findSpan('a'.repeat(1000), 0, { steps: 100 }), Match.OutOfSteps);
  });

  it('test() still answers as before after findSpan on the same pattern', () => {
    const linear = compiled('a+b');
    linear.findSpan('xaab', 0, { steps: 1e6 });
    assert.equal(linear.test('aab', { steps: 1e6 }), Match.Yes);
    assert.equal(linear.test('aa', { steps: 1e6 }), Match.No);
  });
});
