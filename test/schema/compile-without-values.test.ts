// A compiled schema's checker that shows no values (withoutValues): what the
// gateway says of an answer under the egress guard. Every message names the
// path and the kinds expected and found, and the schema's own words; never
// the answer's text, nor a property name the schema does not have. The plain
// checker of the same schema is unchanged beside it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileSchema } from '../../src/schema/compile.ts';

const SECRET = '4111111111111111';
const schema = {
  type: 'object',
  properties: {
    n: { type: 'integer', minimum: 3 },
    x: { type: 'number', multipleOf: 0.5 },
    tag: { type: 'string', enum: ['a', 'b'] },
    code: { type: 'string', pattern: '^[A-Z]+$' },
    day: { type: 'string', format: 'date' },
    kind: { type: 'string', const: 'fixed' },
    either: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] },
  },
  required: ['n', 'x', 'tag', 'code', 'day', 'kind', 'either'],
  additionalProperties: false,
};
const VALID = { n: 3, x: 1.5, tag: 'a', code: 'AB', day: '2026-11-29', kind: 'fixed', either: 1 };

describe('a checker that shows no values', () => {
  const plain = compileSchema(schema);
  const quiet = plain.withoutValues;

  it('each failure: the path and the kinds, never the value', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ n: SECRET }, '$.n: expected integer, got a string', `$.n: expected integer, got string "${SECRET}"`],
      [{ n: -4111 }, '$.n: an integer is below the minimum 3', '$.n: -4111 is below the minimum 3'],
      [{ x: 4111.3 }, '$.x: a number is not a multiple of 0.5', '$.x: 4111.3 is not a multiple of 0.5'],
      [{ tag: SECRET }, '$.tag: a string is not one of the enum values', `$.tag: string "${SECRET}" is not one of the enum values`],
      [{ code: SECRET }, '$.code: a string does not match the pattern "^[A-Z]+$"', `$.code: string "${SECRET}" does not match the pattern "^[A-Z]+$"`],
      [{ day: SECRET }, '$.day: a string is not a valid date', `$.day: string "${SECRET}" is not a valid date`],
      [{ kind: SECRET }, '$.kind: expected "fixed", got a string', `$.kind: expected "fixed", got string "${SECRET}"`],
      [{ either: SECRET }, '$.either: a string matches none of the 2 "anyOf" schemas', `$.either: string "${SECRET}" matches none of the 2 "anyOf" schemas`],
      [{ [SECRET]: 1 }, '$: has a property that is not in the schema ("additionalProperties": false)', `$["${SECRET}"]: is not a property of the schema ("additionalProperties": false)`],
    ];
    for (const [change, quietMessage, plainMessage] of cases) {
      const value = { ...VALID, ...change };
      assert.equal(quiet.check(value)?.message, quietMessage);
      assert.equal(plain.check(value)?.message, plainMessage);
    }
  });

  it('the same checker each time, and itself when asked again; a passing value passes', () => {
    assert.equal(plain.withoutValues, quiet);
    assert.equal(quiet.withoutValues, quiet);
    assert.equal(quiet.check(VALID), null);
  });
});
