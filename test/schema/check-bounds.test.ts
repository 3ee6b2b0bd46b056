// The bounds of a schema check, which runs on the gateway's one thread on an
// answer an upstream wrote and a schema a client sent: work is counted in
// steps (node visits and pattern steps), so these tests pin counts, not time.
// Each schema here is small and accepted; without the bounds each would stall
// the thread for seconds or overflow the stack.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileSchema, DEFAULT_MAX_CHECK_STEPS } from '../../src/schema/compile.ts';
import { checkStrictSchema } from '../../src/schema/strict-schema.ts';

type Schema = Record<string, unknown>;

function object(properties: Record<string, unknown>, extra: Schema = {}): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra };
}

/** d0 .. d{n-1}, each an object whose property x is the next; the last a string. */
function chainThroughProperties(n: number): Schema {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) defs[`d${i}`] = i === n - 1 ? { type: 'string' } : object({ x: { $ref: `#/$defs/d${i + 1}` } });
  return object({ x: { $ref: '#/$defs/d0' } }, { $defs: defs });
}

/** a0 .. a{n-1}, each anyOf [a{i+1}, a{i+1}]: the branches double with every definition. */
function doublingAnyOf(n: number): Schema {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) defs[`a${i}`] = i === n - 1 ? { type: 'string' } : { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  return object({ x: { $ref: '#/$defs/a0' } }, { $defs: defs });
}

describe('a check is bounded', () => {
  it('compiles a chain of 2,000 definitions through properties (230 KB) without recursion, and bounds the value depth', () => {
    const schema = chainThroughProperties(2000);
    assert.ok(JSON.stringify(schema).length > 100_000);
    assert.equal(checkStrictSchema(schema), null);
    const checker = compileSchema(schema);
    let value: unknown = 'end';
    for (let i = 0; i < 2000; i++) value = { x: value };
    const violation = checker.check(value);
    assert.equal(violation?.message, `${violation?.path}: nested deeper than 512 levels`);
    assert.equal(violation?.path, `$${'.x'.repeat(513)}`);
    let short: unknown = 'end';
    for (let i = 0; i < 2000; i++) short = i < 5 ? { x: short } : short;
    const small = compileSchema(chainThroughProperties(5));
    assert.equal(small.check(short), null);
    assert.equal(small.check({ x: { x: { x: { x: { x: 1 } } } } })?.message, '$.x.x.x.x.x: expected string, got integer 1');
  });

  it('checks a definition shared by many anyOf branches once per value', () => {
    const schema = doublingAnyOf(25);
    assert.ok(JSON.stringify(schema).length < 2000);
    const checker = compileSchema(schema);
    const { violation, steps } = checker.checkCounted({ x: 1 });
    assert.equal(violation?.message, '$.x: integer 1 matches none of the 2 "anyOf" schemas');
    // Per definition: its anyOf node, a second branch that is remembered, and two failed branches at 4 steps each.
    assert.ok(steps <= 10 * 25, `${steps} steps`);
    assert.deepStrictEqual(checker.checkCounted({ x: 'ok' }), { violation: null, steps: 27 });
  });

  it('a remembered anyOf failure reports the same path as the first', () => {
    const item = object({ n: { type: 'integer' } });
    const schema = object({ x: { anyOf: [{ $ref: '#/$defs/either' }, { $ref: '#/$defs/either' }] } }, { $defs: { either: { anyOf: [item, { type: 'null' }] } } });
    assert.equal(compileSchema(schema).check({ x: { n: 'one' } })?.message, '$.x.n: expected integer, got string "one"');
  });

  it('fails closed when the steps run out', () => {
    const checker = compileSchema(object({ list: { type: 'array', items: { type: 'integer' } } }), { maxCheckSteps: 10 });
    // The root, the list, an item each, and the root's one key counted.
    assert.deepStrictEqual(checker.checkCounted({ list: [1, 2, 3, 4, 5, 6, 7] }), { violation: null, steps: 10 });
    assert.deepStrictEqual(checker.check({ list: [1, 2, 3, 4, 5, 6, 7, 8] }), {
      path: '$', message: '$: the answer could not be checked within the gateway\'s bounds (more than 10 steps)',
    });
    assert.equal(DEFAULT_MAX_CHECK_STEPS, 2_000_000);
  });

  it('a chain of 4,999 definitions that stand for each other through anyOf is checked within a frame bound, not the stack', () => {
    const chain = (n: number): Schema => {
      const defs: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) defs[`a${i}`] = i === n - 1 ? { type: ['string', 'null'] } : { anyOf: [{ $ref: `#/$defs/a${i + 1}` }] };
      return object({ x: { $ref: '#/$defs/a0' } }, { $defs: defs });
    };
    const long = chain(4999);
    assert.equal(checkStrictSchema(long), null);
    const outOfBounds = { path: '$', message: '$: the answer could not be checked within the gateway\'s bounds (schemas nested more than 2048 deep)' };
    assert.deepStrictEqual(compileSchema(long).check({ x: 'text' }), outOfBounds);
    assert.deepStrictEqual(compileSchema(long).check({ x: 1 }), outOfBounds);
    const short = compileSchema(chain(2000));
    assert.equal(short.check({ x: 'text' }), null);
    assert.equal(short.check({ x: 1 })?.message, '$.x: integer 1 matches none of the 1 "anyOf" schemas');
  });

  it('a recursive schema and a value nested 100,000 deep stop at the value depth', () => {
    const list = compileSchema(object({ next: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }));
    let value: unknown = null;
    for (let i = 0; i < 100_000; i++) value = { next: value };
    const { violation, steps } = list.checkCounted(value);
    assert.equal(violation?.path, `$${'.next'.repeat(513)}`);
    // Per level: the object, its anyOf, and two failed branches (4 steps each) as the failure unwinds.
    assert.ok(steps < 12 * 513, `${steps} steps`);
  });

  it('matches a pattern in steps linear in the answer: "^a*a*a*a*a*a*a*a*$" on 40 a and "!" (7.6 s with backtracking)', () => {
    const cases: [string, string, number][] = [
      ['^a*a*a*a*a*a*a*a*$', `${'a'.repeat(40)}!`, 3_000],
      // 241 s with backtracking.
      ['^a*a*a*a*a*a*a*a*a*a*a*a*$', `${'a'.repeat(60)}!`, 6_000],
      // 5 s with backtracking.
      ['^(a|a)*$', `${'a'.repeat(26)}!`, 500],
      ['^(a|a)*$', `${'a'.repeat(100_000)}!`, 1_500_000],
    ];
    for (const [pattern, text, most] of cases) {
      const checker = compileSchema(object({ s: { type: 'string', pattern } }));
      const { violation, steps } = checker.checkCounted({ s: text });
      assert.equal(violation?.message, `$.s: string ${JSON.stringify(`${text.slice(0, 64)}${text.length > 64 ? '...' : ''}`)} does not match the pattern ${JSON.stringify(pattern)}`);
      assert.ok(steps <= most, `${pattern} on ${text.length} characters: ${steps} steps`);
      assert.equal(checker.check({ s: text.slice(0, -1) }), null);
    }
  });

  it('pattern steps count against the budget: a long answer string fails closed', () => {
    const checker = compileSchema(object({ s: { type: 'string', pattern: '^(a|b|ab)*$' } }), { maxCheckSteps: 10_000 });
    assert.equal(checker.check({ s: 'ab'.repeat(300) }), null);
    assert.deepStrictEqual(checker.check({ s: 'ab'.repeat(5_000) }), {
      path: '$', message: '$: the answer could not be checked within the gateway\'s bounds (more than 10000 steps)',
    });
  });

  it('an enum costs a step per value compared, an object a step per key counted', () => {
    const values = Array.from({ length: 1000 }, (_, i) => `v${i}`);
    const list = compileSchema(object({ list: { type: 'array', items: { type: 'string', enum: values } } }));
    // The root, the object's key count (1), the list, then per item its visit and 1,000 values.
    assert.deepStrictEqual(list.checkCounted({ list: ['v0', 'v999', 'v5'] }), { violation: null, steps: 3 + 3 * 1001 });
    const small = compileSchema(object({ list: { type: 'array', items: { type: 'string', enum: values } } }), { maxCheckSteps: 5_000 });
    assert.deepStrictEqual(small.check({ list: ['v0', 'v1', 'v2', 'v3', 'v4'] }), {
      path: '$', message: '$: the answer could not be checked within the gateway\'s bounds (more than 5000 steps)',
    });
  });
});
