// compileSchema: values that pass, values that fail with the exact JSON path
// and message of the first failure, recursion, anyOf, enum/const, number
// bounds, integer against number, null in type arrays, formats and depth.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileSchema, StrictSchemaError, type CompiledSchema } from '../../src/schema/compile.ts';
import { DEFAULT_STRICT_SCHEMA_LIMITS } from '../../src/schema/strict-schema.ts';

type Schema = Record<string, unknown>;

function object(properties: Record<string, unknown>, extra: Schema = {}): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra };
}

/** Each value passes; each [value, message] fails with that message (its path is the message's head). */
function table(checker: CompiledSchema, passing: unknown[], failing: [unknown, string][]): void {
  for (const value of passing) assert.equal(checker.check(value), null, JSON.stringify(value));
  for (const [value, message] of failing) {
    const violation = checker.check(value);
    assert.notEqual(violation, null, `expected ${JSON.stringify(value)} to fail`);
    assert.deepStrictEqual(violation, { path: message.slice(0, message.indexOf(': ')), message }, JSON.stringify(value));
  }
}

describe('compileSchema', () => {
  it('refuses a schema outside the strict subset with its problem', () => {
    assert.throws(() => compileSchema(object({ a: { type: 'string', minLength: 1 } })), (error: unknown) => {
      assert.ok(error instanceof StrictSchemaError);
      assert.equal(error.message, '$.properties.a.minLength: "minLength" is not supported in strict mode');
      assert.deepStrictEqual(error.problem, { path: '$.properties.a.minLength', keyword: 'minLength', message: error.message });
      return true;
    });
    assert.throws(() => compileSchema(object({ a: object({ b: { type: 'string' } }) }), { limits: { ...DEFAULT_STRICT_SCHEMA_LIMITS, maxObjectDepth: 1 } }),
      { name: 'StrictSchemaError', message: '$.properties.a: objects are nested deeper than 1 levels' });
  });

  it('checks objects: types, required properties, no others', () => {
    const checker = compileSchema(object({ name: { type: 'string' }, age: { type: 'integer' } }));
    table(checker, [{ name: 'Ada', age: 36 }, { age: 36, name: '' }, JSON.parse('{"name":"x","age":1.0}')], [
      [{ name: 'Ada' }, '$: missing the required property "age"'],
      [{ name: 'Ada', age: 36, extra: true }, '$.extra: is not a property of the schema ("additionalProperties": false)'],
      [{ name: 'Ada', age: '36' }, '$.age: expected integer, got string "36"'],
      [{ name: 'Ada', age: 36.5 }, '$.age: expected integer, got number 36.5'],
      [[], '$: expected object, got an array'],
      [null, '$: expected object, got null'],
      ['{}', '$: expected object, got string "{}"'],
      [JSON.parse('{"name":"x","age":1,"__proto__":{}}'), '$.__proto__: is not a property of the schema ("additionalProperties": false)'],
    ]);
  });

  it('reports the first failing path through arrays and nested objects', () => {
    const checker = compileSchema(object({
      items: { type: 'array', items: object({ name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }) },
    }));
    table(checker, [{ items: [] }, { items: [{ name: 'a', tags: [] }, { name: 'b', tags: ['x', 'y'] }] }], [
      [{ items: [{ name: 'a', tags: [] }, { name: 'b', tags: [] }, { name: 3, tags: [] }] }, '$.items[2].name: expected string, got integer 3'],
      [{ items: [{ name: 'a', tags: ['x', null] }, { name: 1, tags: [] }] }, '$.items[0].tags[1]: expected string, got null'],
      [{ items: [{ name: 'a', tags: [], 'odd key': 1 }] }, '$.items[0]["odd key"]: is not a property of the schema ("additionalProperties": false)'],
      [{ items: {} }, '$.items: expected array, got an object'],
    ]);
  });

  it('integer against number', () => {
    const checker = compileSchema(object({ n: { type: 'number' }, i: { type: 'integer' } }));
    table(checker, [{ n: 1, i: 1 }, { n: 1.5, i: -0 }, { n: -1e300, i: 1e21 }], [
      [{ n: true, i: 1 }, '$.n: expected number, got boolean true'],
      [{ n: 1, i: 0.1 }, '$.i: expected integer, got number 0.1'],
      [{ n: 1, i: '1' }, '$.i: expected integer, got string "1"'],
    ]);
  });

  it('null in type arrays', () => {
    const checker = compileSchema(object({ nickname: { type: ['string', 'null'] }, score: { type: ['null', 'integer'] } }));
    table(checker, [{ nickname: null, score: null }, { nickname: 'x', score: 3 }], [
      [{ nickname: 1, score: null }, '$.nickname: expected string or null, got integer 1'],
      [{ nickname: null, score: 2.5 }, '$.score: expected null or integer, got number 2.5'],
      [{ score: null }, '$: missing the required property "nickname"'],
    ]);
  });

  it('enum and const', () => {
    const checker = compileSchema(object({
      colour: { type: 'string', enum: ['red', 'green'] },
      mixed: { enum: ['yes', 1, true, null] },
      kind: { const: 'point' },
    }));
    table(checker, [{ colour: 'red', mixed: null, kind: 'point' }, { colour: 'green', mixed: 1, kind: 'point' }, { colour: 'red', mixed: true, kind: 'point' }], [
      [{ colour: 'blue', mixed: 'yes', kind: 'point' }, '$.colour: string "blue" is not one of the enum values'],
      [{ colour: 'red', mixed: 'no', kind: 'point' }, '$.mixed: string "no" is not one of the enum values'],
      [{ colour: 'red', mixed: '1', kind: 'point' }, '$.mixed: string "1" is not one of the enum values'],
      [{ colour: 'red', mixed: [], kind: 'point' }, '$.mixed: an array is not one of the enum values'],
      [{ colour: 'red', mixed: 1, kind: 'Point' }, '$.kind: expected "point", got string "Point"'],
      [{ colour: 'red', mixed: 1, kind: null }, '$.kind: expected "point", got null'],
    ]);
  });

  it('number bounds', () => {
    const checker = compileSchema(object({
      ratio: { type: 'number', minimum: 0, maximum: 1 },
      open: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 10 },
      step: { type: 'number', multipleOf: 0.1 },
      even: { type: 'integer', multipleOf: 2 },
    }));
    const ok = { ratio: 0, open: 5, step: 0.3, even: 4 };
    table(checker, [ok, { ...ok, ratio: 1, open: 9.99, step: 12.7, even: -6 }, { ...ok, step: 0, even: 0 }], [
      [{ ...ok, ratio: -0.1 }, '$.ratio: -0.1 is below the minimum 0'],
      [{ ...ok, ratio: 1.01 }, '$.ratio: 1.01 is above the maximum 1'],
      [{ ...ok, open: 0 }, '$.open: 0 is not above the exclusive minimum 0'],
      [{ ...ok, open: 10 }, '$.open: 10 is not below the exclusive maximum 10'],
      [{ ...ok, step: 0.35 }, '$.step: 0.35 is not a multiple of 0.1'],
      [{ ...ok, even: 3 }, '$.even: 3 is not a multiple of 2'],
    ]);
  });

  it('array bounds', () => {
    const checker = compileSchema(object({ tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 } }));
    table(checker, [{ tags: ['a'] }, { tags: ['a', 'b'] }], [
      [{ tags: [] }, '$.tags: has 0 items, fewer than the minimum 1'],
      [{ tags: ['a', 'b', 'c'] }, '$.tags: has 3 items, more than the maximum 2'],
    ]);
  });

  it('string pattern (unanchored, Unicode) and formats', () => {
    const checker = compileSchema(object({
      code: { type: 'string', pattern: '^[A-Z]{3}$' },
      word: { type: 'string', pattern: '\\p{Lu}' },
      when: { type: 'string', format: 'date-time' },
    }));
    const ok = { code: 'ABC', word: 'xÄx', when: '2024-02-29T23:59:60.5+01:00' };
    table(checker, [ok, { ...ok, when: '2024-01-01t00:00:00Z' }], [
      [{ ...ok, code: 'ABCD' }, '$.code: string "ABCD" does not match the pattern "^[A-Z]{3}$"'],
      [{ ...ok, word: 'abc' }, '$.word: string "abc" does not match the pattern "\\\\p{Lu}"'],
      [{ ...ok, when: '2023-02-29T00:00:00Z' }, '$.when: string "2023-02-29T00:00:00Z" is not a valid date-time'],
      [{ ...ok, when: '2024-01-01 00:00:00Z' }, '$.when: string "2024-01-01 00:00:00Z" is not a valid date-time'],
      [{ ...ok, when: '2024-01-01T00:00:00' }, '$.when: string "2024-01-01T00:00:00" is not a valid date-time'],
    ]);
  });

  it('each format accepts and refuses', () => {
    const cases: Record<string, [string[], string[]]> = {
      'date-time': [['1985-04-12T23:20:50.52Z', '1996-12-19T16:39:57-08:00'], ['1985-04-12', '1985-13-12T23:20:50Z', '1985-04-12T24:00:00Z']],
      date: [['2000-02-29', '1999-12-31'], ['1900-02-29', '2000-04-31', '2000-4-1', '2000-00-10']],
      time: [['23:59:59Z', '00:00:00.123+05:30'], ['23:59:59', '24:00:00Z', '12:60:00Z']],
      duration: [['P1D', 'PT1H30M', 'P1Y2M3DT4H5M6S', 'P2W'], ['P', 'PT', '1D', 'P1H', 'PT1D']],
      email: [['ada@example.com', 'first.last+tag@sub.example.org'], ['ada', '@example.com', 'ada@', 'a..b@example.com', 'ada@-example.com']],
      hostname: [['example.com', 'a-b.c', 'localhost'], ['-a.com', 'a_b.com', 'a..b']],
      ipv4: [['192.0.2.1', '0.0.0.0', '255.255.255.255'], ['256.0.0.1', '1.2.3', '01.2.3.4', '1.2.3.4.5']],
      ipv6: [['::1', '2001:db8::1', '1:2:3:4:5:6:7:8', '::ffff:192.0.2.1', '::', 'fe80::1:2:3:4:5:6'], ['1:2:3:4:5:6:7', '1::2::3', '12345::', ':::', '::ffff:999.0.0.1', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8']],
      uuid: [['123e4567-e89b-12d3-a456-426614174000', 'A23E4567-E89B-12D3-A456-426614174000'], ['123e4567e89b12d3a456426614174000', '123e4567-e89b-12d3-a456-42661417400g']],
    };
    for (const [format, [good, bad]] of Object.entries(cases)) {
      const checker = compileSchema(object({ v: { type: 'string', format } }));
      for (const text of good) assert.equal(checker.check({ v: text }), null, `${format} ${text}`);
      for (const text of bad) assert.equal(checker.check({ v: text })?.message, `$.v: string ${JSON.stringify(text)} is not a valid ${format}`, `${format} ${text}`);
    }
    const hostname = compileSchema(object({ v: { type: 'string', format: 'hostname' } }));
    assert.equal(hostname.check({ v: `${'a'.repeat(63)}.com` }), null);
    assert.equal(hostname.check({ v: `${'a'.repeat(64)}.com` })?.message, `$.v: string "${'a'.repeat(64)}..." is not a valid hostname`, 'a label of 64 characters');
    assert.equal(hostname.check({ v: `${'a.'.repeat(126)}a` }), null, '253 characters');
    assert.notEqual(hostname.check({ v: `${'a.'.repeat(126)}ab` }), null, '254 characters');
  });

  it('anyOf: the first matching branch passes; otherwise the failure that got furthest', () => {
    const checker = compileSchema(object({
      shape: { anyOf: [object({ kind: { const: 'circle' }, radius: { type: 'number' } }), object({ kind: { const: 'square' }, side: { type: 'number' } })] },
      label: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    }));
    table(checker, [{ shape: { kind: 'circle', radius: 1 }, label: null }, { shape: { kind: 'square', side: 2 }, label: 'x' }], [
      [{ shape: { kind: 'circle', radius: 'big' }, label: null }, '$.shape.radius: expected number, got string "big"'],
      [{ shape: { kind: 'circle', radius: 1 }, label: 1 }, '$.label: integer 1 matches none of the 2 "anyOf" schemas'],
      [{ shape: 'circle', label: null }, '$.shape: string "circle" matches none of the 2 "anyOf" schemas'],
    ]);
    const name = compileSchema(object({ name: { anyOf: [{ type: 'string' }, object({ first: { type: 'string' } })] } }));
    table(name, [{ name: 'Ada' }, { name: { first: 'Ada' } }], [
      [{ name: { first: 1 } }, '$.name.first: expected string, got integer 1'],
      [{ name: 1 }, '$.name: integer 1 matches none of the 2 "anyOf" schemas'],
    ]);
  });

  it('recursion via $defs, and $ref to the root', () => {
    const tree = compileSchema(object({ root: { $ref: '#/$defs/node' } }, {
      $defs: { node: object({ name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }) },
    }));
    const leaf = (name: string): unknown => ({ name, children: [] });
    table(tree, [{ root: leaf('a') }, { root: { name: 'a', children: [leaf('b'), { name: 'c', children: [leaf('d')] }] } }], [
      [{ root: { name: 'a', children: [leaf('b'), { name: 'c', children: [{ name: 'd' }] }] } }, '$.root.children[1].children[0]: missing the required property "children"'],
      [{ root: { name: 'a', children: [{ name: 'c', children: [leaf('d'), { name: 5, children: [] }] }] } }, '$.root.children[0].children[1].name: expected string, got integer 5'],
    ]);
    const list = compileSchema(object({ value: { type: 'integer' }, next: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }));
    table(list, [{ value: 1, next: null }, { value: 1, next: { value: 2, next: { value: 3, next: null } } }], [
      [{ value: 1, next: { value: 2, next: { value: 'x', next: null } } }, '$.next.next.value: expected integer, got string "x"'],
    ]);
    const aliased = compileSchema(object({ a: { $ref: '#/$defs/alias' } }, { $defs: { alias: { $ref: '#/$defs/real' }, real: { type: 'string', enum: ['x'] } } }));
    table(aliased, [{ a: 'x' }], [[{ a: 'y' }, '$.a: string "y" is not one of the enum values']]);
  });

  it('bounds the value depth a recursive schema allows', () => {
    const list = compileSchema(object({ next: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }), { maxValueDepth: 5 });
    let value: unknown = null;
    for (let i = 0; i < 5; i++) value = { next: value };
    assert.equal(list.check(value), null);
    value = { next: value };
    assert.deepStrictEqual(list.check(value), { path: '$.next.next.next.next.next.next', message: '$.next.next.next.next.next.next: nested deeper than 5 levels' });
  });

  it('compiles $ref once: a shared definition is one node, checks do not re-read the schema', () => {
    const schema = object({ a: { $ref: '#/$defs/d' }, b: { $ref: '#/$defs/d' } }, { $defs: { d: object({ x: { type: 'string' } }) } });
    const checker = compileSchema(schema);
    // Changing the schema after compiling changes nothing: the checker holds its own nodes.
    ((schema.$defs as Schema).d as Schema).properties = { y: { type: 'string' } };
    table(checker, [{ a: { x: '1' }, b: { x: '2' } }], [[{ a: { x: '1' }, b: { y: '2' } }, '$.b: missing the required property "x"']]);
  });
});
