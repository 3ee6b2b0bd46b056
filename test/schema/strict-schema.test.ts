// checkStrictSchema: the schemas OpenAI's strict mode accepts pass, and each
// refusal names its JSON path, its keyword and what to change, exactly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { compileSchema } from '../../src/schema/compile.ts';
import { checkStrictSchema, DEFAULT_STRICT_SCHEMA_LIMITS, type StrictSchemaLimits } from '../../src/schema/strict-schema.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { CLIENT_SCHEMAS } from './client-schemas.ts';

type Schema = Record<string, unknown>;

/** An object schema in strict form: every property required, no others allowed. */
function object(properties: Record<string, unknown>, extra: Schema = {}): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra };
}

function limits(overrides: Partial<StrictSchemaLimits>): StrictSchemaLimits {
  return { ...DEFAULT_STRICT_SCHEMA_LIMITS, ...overrides };
}

function refusal(schema: unknown, options?: StrictSchemaLimits): [string, string, string] {
  const problem = checkStrictSchema(schema, options);
  assert.notEqual(problem, null, `expected a refusal of ${JSON.stringify(schema)}`);
  return [problem!.path, problem!.keyword, problem!.message];
}

describe('checkStrictSchema accepts the strict subset', () => {
  const accepted: [string, Schema][] = [
    ['an empty object', object({})],
    ['every type', object({
      s: { type: 'string' }, n: { type: 'number' }, i: { type: 'integer' }, b: { type: 'boolean' },
      z: { type: 'null' }, o: object({ x: { type: 'string' } }), a: { type: 'array', items: { type: 'string' } },
    })],
    ['null in a type array', object({ nickname: { type: ['string', 'null'] } })],
    ['descriptions everywhere', object({ a: { type: 'string', description: 'the a' } }, { description: 'root' })],
    // what LangChain's withStructuredOutput sends: a title on the root and on every property
    ['titles everywhere', object({ a: { type: 'string', title: 'extract' }, b: { anyOf: [{ type: 'string' }, { type: 'null' }], title: 'extract' } }, { title: 'extract' })],
    ['string pattern and format', object({
      code: { type: 'string', pattern: '^[A-Z]{3}$' },
      when: { type: 'string', format: 'date-time' },
      id: { type: 'string', format: 'uuid' },
      word: { type: 'string', pattern: '\\p{L}+' },
    })],
    // Answers are matched in linear time, so a pattern a backtracking engine would take exponential time on is fine.
    ['patterns with nested and ambiguous repetition', object({
      a: { type: 'string', pattern: '^(a+)+$' }, b: { type: 'string', pattern: '^(\\w+\\s?)*$' }, c: { type: 'string', pattern: '^(a|a)*$' },
      d: { type: 'string', pattern: '^a*a*a*a*a*a*a*a*$' }, e: { type: 'string', pattern: '^(?<year>\\d{4})-(?:0[1-9]|1[0-2])\\b.{0,255}?$' },
    })],
    ['number bounds', object({
      n: { type: 'number', minimum: 0, maximum: 1, exclusiveMinimum: -1, exclusiveMaximum: 2, multipleOf: 0.5 },
      i: { type: 'integer', minimum: -5 },
    })],
    ['array bounds', object({ tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 } })],
    ['enum and const', object({
      colour: { type: 'string', enum: ['red', 'green'] },
      answer: { enum: ['yes', 1, true, null] },
      version: { const: 2 },
      kind: { type: 'string', const: 'point' },
    })],
    ['anyOf below the root', object({ value: { anyOf: [{ type: 'string' }, object({ n: { type: 'number' } })], description: 'either' } })],
    ['$defs with $ref', object({ p: { $ref: '#/$defs/point' } }, { $defs: { point: object({ x: { type: 'number' } }) } })],
    ['recursion through $defs', object({ tree: { $ref: '#/$defs/node' } }, {
      $defs: { node: object({ value: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }) },
    })],
    ['recursion to the root', object({ next: { anyOf: [{ $ref: '#' }, { type: 'null' }] } })],
    ['a definition that is a $ref', object({ a: { $ref: '#/$defs/alias' } }, { $defs: { alias: { $ref: '#/$defs/real' }, real: { type: 'string' } } })],
    ['a definition name with ~ and /', object({ a: { $ref: '#/$defs/a~1b~0c' } }, { $defs: { 'a/b~c': { type: 'string' } } })],
    ['an integer value in a number enum', object({ n: { type: 'number', enum: [1, 2.5] } })],
  ];
  for (const [name, schema] of accepted) {
    it(name, () => assert.equal(checkStrictSchema(schema), null));
  }
});

describe('checkStrictSchema accepts what clients send', () => {
  for (const [name, text] of Object.entries(CLIENT_SCHEMAS)) {
    it(name, () => {
      const schema = JSON.parse(text) as Record<string, unknown>;
      assert.equal(typeof schema.$schema, 'string');
      assert.equal(checkStrictSchema(schema), null);
      const checker = compileSchema(schema);
      const item = { name: 'bolt', qty: 2, tag: null, ...(text.includes('"when"') ? { when: '2024-02-29T10:00:00Z' } : {}) };
      assert.equal(checker.check({ items: [item], note: null }), null);
      assert.deepStrictEqual(checker.check({ items: [item, { ...item, tag: 'c' }], note: 'x' }),
        { path: '$.items[1].tag', message: '$.items[1].tag: string "c" matches none of the 2 "anyOf" schemas' });
    });
  }
});

describe('checkStrictSchema refuses, naming path and keyword', () => {
  const refused: [string, unknown, [string, string, string]][] = [
    ['a root that is not an object', [], ['$', 'type', '$: a schema must be a JSON object, not array']],
    ['a root of another type', { type: 'string' }, ['$', 'type', '$: the root must be a schema of "type": "object"']],
    ['an anyOf root', { anyOf: [object({})] }, ['$', 'anyOf', '$: the root must be a schema of "type": "object"']],
    ['a $ref root', { $ref: '#/$defs/a', $defs: { a: object({}) } }, ['$', '$ref', '$: the root must be a schema of "type": "object"']],
    ['an unknown keyword', object({ a: { oneOf: [{ type: 'string' }] } }),
      ['$.properties.a.oneOf', 'oneOf', '$.properties.a.oneOf: "oneOf" is not supported in strict mode']],
    ['allOf', object({ a: { type: 'string', allOf: [] } }), ['$.properties.a.allOf', 'allOf', '$.properties.a.allOf: "allOf" is not supported in strict mode']],
    ['$schema below the root', object({ a: { type: 'string', $schema: 'http://json-schema.org/draft-07/schema#' } }),
      ['$.properties.a.$schema', '$schema', '$.properties.a.$schema: "$schema" is allowed only at the root']],
    ['a $schema that is not a string', { ...object({}), $schema: 7 }, ['$.$schema', '$schema', '$.$schema: "$schema" must be a string']],
    ['minLength', object({ a: { type: 'string', minLength: 1 } }), ['$.properties.a.minLength', 'minLength', '$.properties.a.minLength: "minLength" is not supported in strict mode']],
    ['a keyword of another type', object({ a: { type: 'string', minimum: 1 } }),
      ['$.properties.a.minimum', 'minimum', '$.properties.a.minimum: "minimum" needs a type that uses it (type is string)']],
    ['a typed keyword with no type', object({ a: { enum: ['x'], pattern: 'x' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" needs a type that uses it (no type is given)']],
    ['an unknown type', object({ a: { type: 'date' } }),
      ['$.properties.a.type', 'type', '$.properties.a.type: "type" must be one of string, number, integer, boolean, object, array, null']],
    ['an empty type array', object({ a: { type: [] } }), ['$.properties.a.type', 'type', '$.properties.a.type: "type" must name at least one type']],
    ['a type named twice', object({ a: { type: ['string', 'string'] } }), ['$.properties.a.type', 'type', '$.properties.a.type: "type" names string twice']],
    ['a schema with nothing to check', object({ a: { description: 'anything' } }),
      ['$.properties.a', 'type', '$.properties.a: a schema needs "type", "enum", "const", "anyOf" or "$ref"']],
    ['a schema that is not an object', object({ a: true }), ['$.properties.a', 'type', '$.properties.a: a schema must be a JSON object, not boolean']],
    ['an object without additionalProperties', { type: 'object', properties: {}, required: [] },
      ['$.additionalProperties', 'additionalProperties', '$.additionalProperties: an object must set "additionalProperties": false']],
    ['additionalProperties: true', object({ a: object({}, { additionalProperties: true }) }),
      ['$.properties.a.additionalProperties', 'additionalProperties', '$.properties.a.additionalProperties: an object must set "additionalProperties": false']],
    ['an object without properties', object({ a: { type: 'object', additionalProperties: false } }),
      ['$.properties.a.properties', 'properties', '$.properties.a.properties: an object must list its "properties" (an object of schemas)']],
    ['an optional property', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'], additionalProperties: false },
      ['$.required', 'required', '$.required: every property must be required: add "b" to "required" (allow null in its type to make it optional)']],
    ['a required name without a property', object({ a: { type: 'string' } }, { required: ['a', 'b'] }),
      ['$.required', 'required', '$.required: "required" names "b", which "properties" does not define']],
    ['a required name twice', object({ a: { type: 'string' } }, { required: ['a', 'a'] }), ['$.required', 'required', '$.required: "required" names "a" twice']],
    ['required that is not an array', object({}, { required: 'a' }), ['$.required', 'required', '$.required: "required" must be an array of property names']],
    ['an array without items', object({ a: { type: 'array' } }), ['$.properties.a.items', 'items', '$.properties.a.items: an array must give its "items" schema']],
    ['a tuple (items as an array)', object({ a: { type: 'array', items: [{ type: 'string' }] } }),
      ['$.properties.a.items', 'type', '$.properties.a.items: a schema must be a JSON object, not array']],
    ['minItems above maxItems', object({ a: { type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 2 } }),
      ['$.properties.a.minItems', 'minItems', '$.properties.a.minItems: "minItems" is larger than "maxItems"']],
    ['a negative maxItems', object({ a: { type: 'array', items: { type: 'string' }, maxItems: -1 } }),
      ['$.properties.a.maxItems', 'maxItems', '$.properties.a.maxItems: "maxItems" must be a non-negative integer']],
    ['a fractional minItems', object({ a: { type: 'array', items: { type: 'string' }, minItems: 1.5 } }),
      ['$.properties.a.minItems', 'minItems', '$.properties.a.minItems: "minItems" must be a non-negative integer']],
    ['an unknown format', object({ a: { type: 'string', format: 'uri' } }),
      ['$.properties.a.format', 'format', '$.properties.a.format: "format" must be one of date-time, date, time, duration, email, hostname, ipv4, ipv6, uuid']],
    ['a format named like an Object method', object({ a: { type: 'string', format: 'toString' } }),
      ['$.properties.a.format', 'format', '$.properties.a.format: "format" must be one of date-time, date, time, duration, email, hostname, ipv4, ipv6, uuid']],
    ['a pattern that does not compile', object({ a: { type: 'string', pattern: '(' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" is not a valid regular expression (Invalid regular expression: /(/u: Unterminated group)']],
    ['a pattern valid only without the u flag', object({ a: { type: 'string', pattern: '\\-' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" is not a valid regular expression (Invalid regular expression: /\\-/u: Invalid escape)']],
    ['a pattern with a backreference', object({ a: { type: 'string', pattern: '^(a+)b\\1$' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" uses a backreference at character 6, which the gateway\'s linear-time matcher does not support']],
    ['a pattern with a lookahead', object({ a: { type: 'string', pattern: '^(?=.*\\d)\\w+$' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" uses a lookahead "(?=" at character 1, which the gateway\'s linear-time matcher does not support']],
    ['a pattern with a lookbehind', object({ a: { type: 'string', pattern: '(?<!x)y' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" uses a negative lookbehind "(?<!" at character 0, which the gateway\'s linear-time matcher does not support']],
    ['a pattern whose counted repetition expands past the bound', object({ a: { type: 'string', pattern: '^(?:[0-9a-f]{100}){101}$' } }),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" compiles to more than 10000 instructions (counted repetition copies what it repeats)']],
    ['a pattern that is not a string', object({ a: { type: 'string', pattern: 1 } }), ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" must be a string']],
    ['a bound that is not a number', object({ a: { type: 'number', maximum: '5' } }), ['$.properties.a.maximum', 'maximum', '$.properties.a.maximum: "maximum" must be a number']],
    ['multipleOf 0', object({ a: { type: 'integer', multipleOf: 0 } }), ['$.properties.a.multipleOf', 'multipleOf', '$.properties.a.multipleOf: "multipleOf" must be a number above 0']],
    ['an empty enum', object({ a: { enum: [] } }), ['$.properties.a.enum', 'enum', '$.properties.a.enum: "enum" must be a non-empty array']],
    ['an enum of objects', object({ a: { enum: [{}] } }), ['$.properties.a.enum', 'enum', '$.properties.a.enum: enum values must be strings, numbers, booleans or null']],
    ['an enum value of another type', object({ a: { type: 'string', enum: ['x', 1] } }), ['$.properties.a.enum', 'enum', '$.properties.a.enum: enum value 1 is not of type string']],
    ['a fraction in an integer enum', object({ a: { type: 'integer', enum: [1, 1.5] } }), ['$.properties.a.enum', 'enum', '$.properties.a.enum: enum value 1.5 is not of type integer']],
    ['an enum value twice', object({ a: { enum: ['x', 'x'] } }), ['$.properties.a.enum', 'enum', '$.properties.a.enum: enum value "x" is listed twice']],
    ['a const of another type', object({ a: { type: 'number', const: 'x' } }), ['$.properties.a.const', 'const', '$.properties.a.const: "const" "x" is not of type number']],
    ['a const array', object({ a: { const: [1] } }), ['$.properties.a.const', 'const', '$.properties.a.const: "const" must be a string, number, boolean or null']],
    ['a description that is not a string', object({ a: { type: 'string', description: 1 } }),
      ['$.properties.a.description', 'description', '$.properties.a.description: "description" must be a string']],
    ['a title that is not a string', object({ a: { type: 'string', title: 1 } }),
      ['$.properties.a.title', 'title', '$.properties.a.title: "title" must be a string']],
    ['an empty anyOf', object({ a: { anyOf: [] } }), ['$.properties.a.anyOf', 'anyOf', '$.properties.a.anyOf: "anyOf" must be a non-empty array of schemas']],
    ['type beside anyOf', object({ a: { type: 'string', anyOf: [{ type: 'string' }] } }),
      ['$.properties.a.type', 'type', '$.properties.a.type: "type" cannot stand beside "anyOf"']],
    ['a bad anyOf branch', object({ a: { anyOf: [{ type: 'string' }, { not: {} }] } }),
      ['$.properties.a.anyOf[1].not', 'not', '$.properties.a.anyOf[1].not: "not" is not supported in strict mode']],
    ['a keyword beside $ref', object({ a: { $ref: '#', type: 'object' } }), ['$.properties.a.type', 'type', '$.properties.a.type: "type" cannot stand beside "$ref"']],
    ['a remote $ref', object({ a: { $ref: 'https://example.com/s.json' } }), ['$.properties.a.$ref', '$ref', '$.properties.a.$ref: "$ref" must be "#" or "#/$defs/<name>"']],
    ['a $ref to definitions', object({ a: { $ref: '#/definitions/x' } }), ['$.properties.a.$ref', '$ref', '$.properties.a.$ref: "$ref" must be "#" or "#/$defs/<name>"']],
    ['a $ref to a missing definition', object({ a: { $ref: '#/$defs/nope' } }),
      ['$.properties.a.$ref', '$ref', '$.properties.a.$ref: "$ref" names "nope", which "$defs" does not define']],
    ['$defs below the root', object({ a: { type: 'string', $defs: {} } }), ['$.properties.a.$defs', '$defs', '$.properties.a.$defs: "$defs" is allowed only at the root']],
    ['$defs that is not an object', object({}, { $defs: [] }), ['$.$defs', '$defs', '$.$defs: "$defs" must be an object of schemas']],
    ['a bad definition', object({}, { $defs: { a: { type: 'object' } } }),
      ['$.$defs.a.additionalProperties', 'additionalProperties', '$.$defs.a.additionalProperties: an object must set "additionalProperties": false']],
    ['definitions standing for each other', object({ a: { $ref: '#/$defs/a' } }, { $defs: { a: { $ref: '#/$defs/b' }, b: { anyOf: [{ $ref: '#/$defs/a' }, { type: 'null' }] } } }),
      ['$.$defs.a', '$ref', '$.$defs.a: definitions refer to each other with no object or array between (a -> b -> a)']],
    ['a definition standing for itself', object({}, { $defs: { self: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/self' }] } } }),
      ['$.$defs.self', '$ref', '$.$defs.self: definitions refer to each other with no object or array between (self -> self)']],
    ['a key that is not an identifier', object({ 'first name': { type: 'string', maxLength: 3 } }),
      ['$.properties["first name"].maxLength', 'maxLength', '$.properties["first name"].maxLength: "maxLength" is not supported in strict mode']],
  ];
  for (const [name, schema, expected] of refused) {
    it(name, () => assert.deepStrictEqual(refusal(schema), expected));
  }
});

describe('checkStrictSchema bounds', () => {
  /** Objects nested `levels` deep, the root counted. */
  function nestedObjects(levels: number): Schema {
    let schema = object({ leaf: { type: 'string' } });
    for (let i = 1; i < levels; i++) schema = object({ next: schema });
    return schema;
  }

  it('allows 10 levels of objects and refuses 11', () => {
    assert.equal(checkStrictSchema(nestedObjects(10)), null);
    const path = `$${'.properties.next'.repeat(10)}`;
    assert.deepStrictEqual(refusal(nestedObjects(11)), [path, 'type', `${path}: objects are nested deeper than 10 levels`]);
  });

  it('counts arrays between objects toward the schema depth, not the object depth', () => {
    let schema: Schema = { type: 'string' };
    for (let i = 0; i < 5; i++) schema = { type: 'array', items: schema };
    assert.equal(checkStrictSchema(object({ a: schema }), limits({ maxSchemaDepth: 6 })), null);
    const path = `$.properties.a${'.items'.repeat(5)}`;
    assert.deepStrictEqual(refusal(object({ a: schema }), limits({ maxSchemaDepth: 5 })), [path, 'type', `${path}: subschemas are nested deeper than 5 levels`]);
  });

  it('bounds the total properties (5,000 by default)', () => {
    const properties = (count: number): Record<string, unknown> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string' }]));
    assert.equal(checkStrictSchema(object(properties(4999))), null);
    assert.equal(checkStrictSchema(object({ a: object(properties(4999)) })), null);
    assert.deepStrictEqual(refusal(object({ a: object(properties(5000)) })),
      ['$.properties.a.properties', 'properties', '$.properties.a.properties: the schema has more than 5000 properties']);
  });

  it('bounds the subschemas', () => {
    const schema = object({ a: { type: 'string' }, b: { type: 'string' } });
    assert.equal(checkStrictSchema(schema, limits({ maxSchemaNodes: 3 })), null);
    assert.deepStrictEqual(refusal(schema, limits({ maxSchemaNodes: 2 })), ['$.properties.b', 'type', '$.properties.b: the schema has more than 2 subschemas']);
  });

  it('bounds the enum values of all enums together (1,000 by default)', () => {
    const values = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);
    assert.equal(checkStrictSchema(object({ a: { enum: values(0, 500) }, b: { enum: values(0, 500) } })), null);
    assert.deepStrictEqual(refusal(object({ a: { enum: values(0, 500) }, b: { enum: values(0, 501) } })),
      ['$.properties.b.enum', 'enum', '$.properties.b.enum: the schema has more than 1000 enum values']);
  });

  it('bounds a large string enum to 15,000 characters', () => {
    const values = (count: number, width: number): string[] => Array.from({ length: count }, (_, i) => String(i).padStart(width, '0'));
    assert.equal(checkStrictSchema(object({ a: { enum: values(250, 100) } })), null, '250 values may be longer');
    assert.equal(checkStrictSchema(object({ a: { enum: values(300, 50) } })), null, '300 x 50 = 15,000');
    assert.deepStrictEqual(refusal(object({ a: { enum: values(251, 60) } })),
      ['$.properties.a.enum', 'enum', '$.properties.a.enum: an enum of more than 250 values may hold 15000 characters, this one holds 15060']);
  });

  it('bounds the names and enum strings together (120,000 characters by default)', () => {
    const name = 'n'.repeat(60_000);
    assert.equal(checkStrictSchema(object({ [name]: { type: 'string', const: 'x'.repeat(59_999) } })), null);
    const [path, keyword, message] = refusal(object({ [name]: { type: 'string', const: 'x'.repeat(60_001) } }));
    assert.deepStrictEqual([keyword, message.slice(path.length)], ['const', ': the schema\'s names and enum values are longer than 120000 characters together']);
    assert.equal(path, `$.properties["${'n'.repeat(64)}..."].const`);
    assert.deepStrictEqual(refusal(object({}, { $defs: { abcd: { type: 'string' } } }), limits({ maxNameLength: 3 })),
      ['$.$defs', '$defs', '$.$defs: the schema\'s names and enum values are longer than 3 characters together']);
  });

  it('bounds the pattern length', () => {
    assert.equal(checkStrictSchema(object({ a: { type: 'string', pattern: 'a'.repeat(1000) } })), null);
    assert.deepStrictEqual(refusal(object({ a: { type: 'string', pattern: 'a'.repeat(1001) } })),
      ['$.properties.a.pattern', 'pattern', '$.properties.a.pattern: "pattern" is longer than 1000 characters']);
  });
});

describe('docs/structured-outputs.md', () => {
  it('lists every limit with its default', () => {
    const text = readFileSync(path.join(repositoryRoot(), 'docs', 'structured-outputs.md'), 'utf8');
    const documented = new Map<string, number>();
    for (const match of text.matchAll(/^\| `(\w+)`(?:, `(\w+)`)? \| ([\d, ]+) \|/gm)) {
      const values = (match[3] as string).split(', ').map(Number);
      documented.set(match[1] as string, values[0] as number);
      if (match[2] !== undefined) documented.set(match[2], values[1] as number);
    }
    assert.deepStrictEqual(Object.fromEntries(documented), { ...DEFAULT_STRICT_SCHEMA_LIMITS });
  });
});
