// sampleValue: the deterministic instance the demo provider answers a
// json_schema request with. One case per keyword of docs/structured-outputs.md's
// table, each value exact, and every value passes the gateway's own checker.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { compileSchema } from '../../src/schema/compile.ts';
import { buildSample, FORMAT_EXAMPLES, patternInstance, sampleValue } from '../../src/schema/sample-value.ts';
import { STRING_FORMAT_NAMES } from '../../src/schema/string-formats.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { CLIENT_SCHEMAS } from './client-schemas.ts';

type Schema = Record<string, unknown>;

function object(properties: Record<string, unknown>, extra: Schema = {}): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra };
}

/** The value of property `a`, after checking the whole value passes the compiled schema. */
function sampleOf(property: Schema, extra: Schema = {}): unknown {
  const schema = object({ a: property }, extra);
  const value = sampleValue(schema, 'echo') as Record<string, unknown>;
  assert.equal(compileSchema(schema).check(value), null, `${JSON.stringify(value)} should pass ${JSON.stringify(schema)}`);
  return value['a'];
}

/** [keyword of the table, property schema, expected value, extra root keywords]. */
const CASES: Array<[string, Schema, unknown, Schema?]> = [
  ['type string: the echo in the first free string', { type: 'string' }, 'echo'],
  ['type number', { type: 'number' }, 0],
  ['type integer', { type: 'integer' }, 0],
  ['type boolean', { type: 'boolean' }, true],
  ['type null', { type: 'null' }, null],
  ['type object', { type: 'object', properties: {}, required: [], additionalProperties: false }, {}],
  ['type as a list: the first that is not null', { type: ['null', 'integer'] }, 0],
  ['type as a list of null alone', { type: ['null'] }, null],
  ['description', { type: 'boolean', description: 'a flag' }, true],
  ['title', { type: 'boolean', title: 'Flag' }, true],
  ['$schema at the root', { type: 'boolean' }, true, { $schema: 'https://json-schema.org/draft/2020-12/schema' }],
  ['enum: its first value', { type: 'string', enum: ['b', 'a'] }, 'b'],
  ['enum without a type', { enum: [2, 'x', null] }, 2],
  ['const', { type: 'integer', const: 42 }, 42],
  ['const null', { const: null }, null],
  ['anyOf: the first branch', { anyOf: [{ type: 'integer', minimum: 3 }, { type: 'null' }] }, 3],
  ['$ref to a definition', { $ref: '#/$defs/point' }, { x: 0 }, { $defs: { point: object({ x: { type: 'number' } }) } }],
  ['$ref with ~1 and ~0', { $ref: '#/$defs/a~1b~0c' }, 'y', { $defs: { 'a/b~c': { type: 'string', enum: ['y'] } } }],
  ['properties and required, in the schema\'s order', object({ z: { type: 'boolean' }, y: { type: 'null' } }), { z: true, y: null }],
  ['additionalProperties false: nothing more', object({}), {}],
  ['items: one item by default', { type: 'array', items: { type: 'integer' } }, [0]],
  ['minItems', { type: 'array', items: { type: 'boolean' }, minItems: 3 }, [true, true, true]],
  ['maxItems 0', { type: 'array', items: { type: 'boolean' }, maxItems: 0 }, []],
  ['pattern that "demo" matches', { type: 'string', pattern: 'em' }, 'demo'],
  ['pattern spelled by its least match', { type: 'string', pattern: '^[A-Z]{2}-\\d{3}(?:x|y)?$' }, 'AA-000'],
  ['pattern with a negated class and an escape', { type: 'string', pattern: '^[^a0]\\.\\w+$' }, 'A.a'],
  ['format: its example', { type: 'string', format: 'email' }, 'demo@example.com'],
  ['minimum above 0', { type: 'number', minimum: 2.5 }, 2.5],
  ['maximum below 0', { type: 'integer', maximum: -4 }, -4],
  ['minimum and maximum around 0', { type: 'integer', minimum: -3, maximum: 3 }, 0],
  ['exclusiveMinimum, integer', { type: 'integer', exclusiveMinimum: 5 }, 6],
  ['exclusiveMaximum, number', { type: 'number', exclusiveMaximum: -1 }, -2],
  ['multipleOf with a minimum', { type: 'integer', minimum: 10, multipleOf: 4 }, 12],
  ['multipleOf with an exclusiveMinimum on a multiple', { type: 'number', exclusiveMinimum: 0.5, multipleOf: 0.25 }, 0.75],
  ['multipleOf alone', { type: 'number', multipleOf: 0.1 }, 0],
];

describe('sampleValue: one case per keyword', () => {
  for (const [name, property, expected, extra] of CASES) {
    it(name, () => assert.deepEqual(sampleOf(property, extra), expected));
  }

  it('every format has its example, and the example passes the format', () => {
    assert.deepEqual(Object.keys(FORMAT_EXAMPLES).sort(), [...STRING_FORMAT_NAMES].sort());
    for (const format of STRING_FORMAT_NAMES) assert.equal(sampleOf({ type: 'string', format }), FORMAT_EXAMPLES[format], format);
  });

  it('format wins over a pattern it matches (zod\'s date-time sends both)', () => {
    const pattern = JSON.parse(CLIENT_SCHEMAS['openai zodResponseFormat'] as string).properties.items.items.properties.when.pattern as string;
    assert.equal(sampleOf({ type: 'string', format: 'date-time', pattern }), '2000-01-01T00:00:00Z');
  });

  it('the echo fills the first free string only; strings with an enum, format or pattern do not take it', () => {
    const schema = object({ kind: { type: 'string', enum: ['k'] }, day: { type: 'string', format: 'date' }, first: { type: 'string' }, second: { type: 'string' } });
    assert.deepEqual(sampleValue(schema, 'You said hi'), { kind: 'k', day: '2000-01-01', first: 'You said hi', second: 'demo' });
    assert.deepEqual(sampleValue(object({ a: { type: 'string' } })), { a: 'demo' });
  });

  it('a property name that is __proto__ is an own property', () => {
    const schema = object({ ['__proto__']: { type: 'integer', const: 1 } });
    const value = sampleValue(schema) as Record<string, unknown>;
    assert.deepEqual(Object.keys(value), ['__proto__']);
    assert.equal(compileSchema(schema).check(value), null);
  });
});

describe('sampleValue: recursion and size', () => {
  it('a recursive schema through # ends in null where the type list allows it', () => {
    const schema = object({ name: { type: 'string' }, child: { anyOf: [{ $ref: '#' }, { type: 'null' }] } });
    const value = sampleValue(schema);
    assert.equal(compileSchema(schema).check(value), null);
    let depth = 0;
    for (let node = value as { child: unknown } | null; node !== null; node = node.child as { child: unknown } | null) depth++;
    assert.equal(depth, 4);
  });

  it('a recursive array of itself ends with minItems items', () => {
    const schema = object({ children: { type: 'array', items: { $ref: '#' } } });
    const value = sampleValue(schema);
    assert.equal(compileSchema(schema).check(value), null);
    assert.equal(JSON.stringify(value), '{"children":[{"children":[{"children":[{"children":[]}]}]}]}');
  });

  it('nested minItems of a million make at most 10,000 values', () => {
    const schema = object({ rows: { type: 'array', minItems: 1_000_000, items: { type: 'array', minItems: 1_000_000, items: { type: 'integer' } } } });
    const value = sampleValue(schema) as { rows: number[][] };
    const count = value.rows.reduce((sum, row) => sum + 1 + row.length, 0);
    assert.ok(count <= 10_000, `${count} values`);
  });
});

/** Definitions d0..d(n-1), each an object of two required properties naming the next: a value of 2^(n-1) strings. */
function doubling(n: number): Schema {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) defs[`d${i}`] = i === n - 1 ? { type: 'string' } : object({ x: { $ref: `#/$defs/d${i + 1}` }, y: { $ref: `#/$defs/d${i + 1}` } });
  return object({ x: { $ref: '#/$defs/d0' } }, { $defs: defs });
}

/** The schema with every object in it wrapped to count the reads of its keys: the walk's work. */
function counted(schema: unknown, reads: { count: number }): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const inner = (Array.isArray(schema) ? [] : {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(schema)) inner[key] = counted(value, reads);
  return new Proxy(inner, {
    get(target, key, receiver) {
      reads.count++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/** Every regular expression tested while `run` runs, by its source. */
function patternsRun(run: () => void): string[] {
  const test = RegExp.prototype.test;
  const sources: string[] = [];
  RegExp.prototype.test = function (this: RegExp, subject: string): boolean {
    sources.push(this.source);
    return test.call(this, subject);
  };
  try {
    run();
  } finally {
    RegExp.prototype.test = test;
  }
  return sources;
}

describe('sampleValue: bounded work and size for every schema', () => {
  it('definitions that double the value each: the walk gives up after 10,000 values, with a bounded value', () => {
    // 16 definitions: 2^15 strings, 65,535 values; 22 of them stalled the gateway for seconds.
    for (const strict of [true, false]) {
      const schema = doubling(16);
      if (!strict) delete schema['additionalProperties'];
      const reads = { count: 0 };
      const sample = buildSample(counted(schema, reads), 'echo');
      assert.equal(sample.complete, false);
      assert.equal(sample.values, 10_000);
      assert.ok(reads.count < 150_000, `${reads.count} reads of the schema`);
      assert.ok(JSON.stringify(sample.value).length < 150_000, `${JSON.stringify(sample.value).length} characters`);
    }
  });

  it('twelve definitions (8,191 values) are built whole', () => {
    const sample = buildSample(doubling(12), 'echo');
    assert.equal(sample.complete, true);
    assert.equal(sample.values, 1 + 2 * (2 ** 12 - 1));
    assert.equal(compileSchema(doubling(12)).check(sample.value), null);
  });

  it('nested minItems of a million: the walk gives up after 10,000 values', () => {
    const schema = object({ rows: { type: 'array', minItems: 1_000_000, items: { type: 'array', minItems: 1_000_000, items: { type: 'integer' } } } });
    const sample = buildSample(schema);
    assert.equal(sample.complete, false);
    assert.equal(sample.values, 10_000);
  });

  it('a large const repeated: the walk gives up after 1,000,000 characters, measuring the const once', () => {
    const big = 'x'.repeat(100_000);
    const reads = { count: 0 };
    const schema = object({ rows: { type: 'array', minItems: 50, items: { $ref: '#/$defs/big' } } }, { $defs: { big: { type: 'string', const: big } } });
    const sample = buildSample(counted(schema, reads));
    assert.equal(sample.complete, false);
    assert.ok(sample.characters <= 1_000_000 + big.length + 2, `${sample.characters} characters`);
    assert.ok(reads.count < 1_000, `${reads.count} reads`);
  });

  it('an object of many properties costs a step per property, even when they are not required', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) properties[`p${i}`] = { type: 'integer' };
    const wide = { type: 'object', properties, required: [] };
    const sample = buildSample(object({ rows: { type: 'array', minItems: 1_000, items: wide } }));
    assert.equal(sample.complete, false);
    assert.ok(sample.values < 100, `${sample.values} values`);
  });

  it('a schema of 5,000 required properties (OpenAI\'s limit) is built whole', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) properties[`p${i}`] = { type: 'integer' };
    const sample = buildSample(object(properties));
    assert.equal(sample.complete, true);
    assert.equal(Object.keys(sample.value as object).length, 5_000);
  });
});

describe('sampleValue: a client\'s pattern runs only where it is bounded', () => {
  it('a pattern of 200,000 characters is never compiled nor run: "demo"', () => {
    const pattern = 'x'.repeat(200_000);
    let value: unknown;
    const run = patternsRun(() => (value = sampleValue({ type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'] })));
    assert.deepEqual(value, { s: 'demo' });
    assert.deepEqual(run.filter((source) => source.length > 1_000), []);
  });

  it('patterns that backtrack for ages in V8 run on the linear-time matcher, never on RegExp', () => {
    const cases: Array<[string, string]> = [
      // 140 of these take V8 about a second on 4 characters (the speller gives up on it: "demo").
      [`${'[demo]*'.repeat(140)}x`, 'demo'],
      // Polynomial backtracking on a long string.
      [`^${'[a-z]*'.repeat(3)}a{100}x$`, `${'a'.repeat(100)}x`],
      // An alternation inside a repeated group, and a repeated group holding a repetition.
      ['^(?:a|b)*(?:c{60})$', 'c'.repeat(60)],
      ['^(a+)+b$', 'ab'],
    ];
    for (const [pattern, expected] of cases) {
      let value: unknown;
      const run = patternsRun(() => (value = sampleValue(object({ s: { type: 'string', pattern } }))));
      assert.deepEqual(value, { s: expected }, pattern);
      assert.deepEqual(run.filter((source) => source === pattern), [], pattern);
    }
  });

  it('patterns with a few quantifiers and alternations run on "demo" and on their spelled string', () => {
    assert.deepEqual(sampleOf({ type: 'string', pattern: '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$' }), '0.0.0');
    assert.deepEqual(sampleOf({ type: 'string', pattern: '^a{50}(?:x|y)?b$' }), `${'a'.repeat(50)}b`);
    assert.deepEqual(sampleOf({ type: 'string', pattern: '^(?:a|b)+c$' }), 'ac');
  });

  it('a pattern that is not a valid regular expression: "demo"', () => {
    assert.deepEqual(sampleValue({ type: 'object', properties: { s: { type: 'string', pattern: '(' } }, required: ['s'] }), { s: 'demo' });
  });
});

describe('sampleValue passes the checker for the clients\' schemas', () => {
  for (const [client, text] of Object.entries(CLIENT_SCHEMAS)) {
    it(client, () => {
      const schema = JSON.parse(text) as Schema;
      const value = sampleValue(schema, 'Weather in Oslo?');
      assert.equal(compileSchema(schema).check(value), null);
      assert.deepEqual((value as { note: unknown }).note, 'demo');
    });
  }
});

describe('patternInstance', () => {
  const cases: Array<[string, string | undefined]> = [
    ['^abc$', 'abc'],
    ['a+b*c?', 'a'],
    ['^(ab|cd){2}$', 'abab'],
    ['^\\p{Lu}\\d{2,}$', 'A00'],
    ['^\\u0041\\x42\\n$', 'AB\n'],
    ['^[\\s]$', ' '],
    ['(?=a)a', undefined],
    ['(a)\\1', undefined],
    ['[\\u4e00-\\u9fff]', undefined],
    ['^a{1000}$', 'a'.repeat(1000)],
    ['^((a{1000}){1000}){1000}$', undefined],
  ];
  for (const [pattern, expected] of cases) {
    it(pattern, () => assert.equal(patternInstance(pattern), expected));
  }

  it('a pattern it cannot spell makes the string "demo" (which then fails the check)', () => {
    assert.deepEqual(sampleValue(object({ a: { type: 'string', pattern: '^[\\u4e00-\\u9fff]$' } }), 'x'), { a: 'demo' });
  });
});

describe('docs/structured-outputs.md', () => {
  it('every keyword of the table has a case here', () => {
    const text = readFileSync(path.join(repositoryRoot(), 'docs', 'structured-outputs.md'), 'utf8');
    const table = text.slice(text.indexOf('| keyword |'), text.indexOf('## Limits'));
    const keywords = [...table.matchAll(/^\| ((?:`[^`]+`(?:, )?)+) \|/gm)].flatMap((m) => [...(m[1] as string).matchAll(/`([^`]+)`/g)].map((k) => k[1] as string));
    assert.ok(keywords.length >= 20, keywords.join(' '));
    const covered = JSON.stringify(CASES);
    for (const keyword of keywords) assert.ok(covered.includes(`"${keyword}":`), `no case for ${keyword}`);
  });
});
