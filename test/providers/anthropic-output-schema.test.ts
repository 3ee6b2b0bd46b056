// response_format json_schema → Anthropic's structured outputs
// (src/providers/anthropic-output-schema.ts): the exact schema sent, what is
// left out when the gateway checks the answer (strict true), and each refusal
// with its param, code and message. Every translated body is also held to the
// strict fake (./anthropic-constraints.ts), so a translation the real API
// would refuse fails here.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatRequest, JsonSchemaFormat } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { toAnthropicRequest } from '../../src/providers/anthropic-translate.ts';
import { CLIENT_SCHEMAS } from '../schema/client-schemas.ts';
import { anthropicRequestViolation } from './anthropic-constraints.ts';

type Json = Record<string, unknown>;

function format(schema: Json | undefined, strict?: boolean, description?: string): JsonSchemaFormat {
  return {
    type: 'json_schema',
    json_schema: { name: 'answer', ...(description === undefined ? {} : { description }), ...(schema === undefined ? {} : { schema }), ...(strict === undefined ? {} : { strict }) },
  };
}

function request(response_format: JsonSchemaFormat): ChatRequest {
  return { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'List the parts.' }], response_format };
}

/** The schema sent, after checking the whole body keeps Anthropic's constraints. */
function sent(schema: Json, strict?: boolean, description?: string): unknown {
  const body = toAnthropicRequest(request(format(schema, strict, description)));
  assert.equal(anthropicRequestViolation(body), undefined);
  assert.equal(body.output_config?.format.type, 'json_schema');
  return body.output_config?.format.schema;
}

function refusal(schema: Json | undefined, strict?: boolean): { param: string | null; code: string | null; message: string } {
  try {
    toAnthropicRequest(request(format(schema, strict)));
  } catch (error) {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 400);
    const { param, code, message, type } = error.toBody().error;
    assert.equal(type, 'invalid_request_error');
    return { param, code, message };
  }
  return assert.fail('expected a refusal');
}

const object = (properties: Json, extra: Json = {}): Json => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra });

// The clients' schemas (test/schema/client-schemas.ts): the openai SDK's
// zodResponseFormat, LangChain's withStructuredOutput and the AI SDK's
// generateObject, each sent with strict true.
const TAG = { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] };
const NOTE = { type: ['string', 'null'] };

describe('json_schema strict true: the SDKs\' schemas translate', () => {
  test('openai zodResponseFormat: $schema, the integer bounds and the pattern left out (the gateway checks them); format kept', () => {
    assert.deepEqual(sent(JSON.parse(CLIENT_SCHEMAS['openai zodResponseFormat'] as string), true), {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: object({ name: { type: 'string' }, qty: { type: 'integer' }, tag: TAG, when: { type: 'string', format: 'date-time' } }),
        },
        note: NOTE,
      },
      required: ['items', 'note'],
      additionalProperties: false,
    });
  });

  for (const name of ['LangChain toJsonSchema', 'AI SDK zodSchema']) {
    test(`${name}: $schema and the ±2^53-1 bounds left out, descriptions kept`, () => {
      assert.deepEqual(sent(JSON.parse(CLIENT_SCHEMAS[name] as string), true), {
        type: 'object',
        properties: {
          items: { type: 'array', items: object({ name: { type: 'string', description: 'the name' }, qty: { type: 'integer' }, tag: TAG }) },
          note: NOTE,
        },
        required: ['items', 'note'],
        additionalProperties: false,
      });
    });
  }
});

describe('json_schema strict true: what is sent', () => {
  test('the exact body: output_config.format after the sampling fields, the schema as Anthropic takes it', () => {
    const body = toAnthropicRequest({ ...request(format(object({ a: { type: 'string' } }), true)), temperature: 0 });
    assert.equal(
      JSON.stringify(body),
      JSON.stringify({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'List the parts.' }] }],
        temperature: 0,
        output_config: { format: { type: 'json_schema', schema: object({ a: { type: 'string' } }) } },
      }),
    );
  });

  test('numeric bounds, maxItems and pattern left out; minItems above 1 sent as 1; 0 and 1 as they are', () => {
    const schema = object({
      n: { type: 'number', minimum: 0, maximum: 10, exclusiveMinimum: -1, exclusiveMaximum: 11, multipleOf: 0.5, description: 'n' },
      list: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, minItems: 3, maxItems: 5 },
      one: { type: 'array', items: { type: 'integer' }, minItems: 1 },
      none: { type: 'array', items: { type: 'integer' }, minItems: 0 },
    });
    assert.deepEqual(
      sent(schema, true),
      object({
        n: { type: 'number', description: 'n' },
        list: { type: 'array', items: { type: 'string' }, minItems: 1 },
        one: { type: 'array', items: { type: 'integer' }, minItems: 1 },
        none: { type: 'array', items: { type: 'integer' }, minItems: 0 },
      }),
    );
  });

  test('enum, const, anyOf, $defs and non-recursive $ref are sent as they are', () => {
    const schema = object(
      { kind: { type: 'string', enum: ['x', 'y'] }, fixed: { type: 'integer', const: 3 }, part: { $ref: '#/$defs/part' }, either: { anyOf: [{ $ref: '#/$defs/part' }, { type: 'null' }] } },
      { $defs: { part: object({ id: { type: 'string', format: 'uuid' } }) } },
    );
    assert.deepEqual(sent(schema, true), schema);
  });

  test('the format\'s description goes to the schema\'s, before the schema\'s own', () => {
    assert.deepEqual(sent(object({}), true, 'The parts.'), { ...object({}), description: 'The parts.' });
    assert.deepEqual(sent({ ...object({}), description: 'Parts list.' }, true, 'The parts.'), { ...object({}), description: 'The parts.\n\nParts list.' });
    assert.deepEqual(sent({ ...object({}), description: 'Same.' }, true, 'Same.'), { ...object({}), description: 'Same.' });
  });

  test('a property or definition named __proto__ is sent as one, not lost to the prototype', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"$ref":"#/$defs/__proto__"}},"required":["__proto__"],"additionalProperties":false,"$defs":{"__proto__":{"type":"string"}}}') as Json;
    const body = toAnthropicRequest(request(format(schema, true)));
    assert.equal(JSON.stringify(body.output_config?.format.schema), JSON.stringify(schema));
  });

  test('the request is not modified', () => {
    const req = request(format(JSON.parse(CLIENT_SCHEMAS['openai zodResponseFormat'] as string), true));
    const before = JSON.stringify(req);
    toAnthropicRequest(req);
    assert.equal(JSON.stringify(req), before);
  });
});

describe('json_schema without strict true: sent only as it is', () => {
  test('a schema inside Anthropic\'s subset is sent as it is (strict false or absent); $schema is left out', () => {
    const schema = object({ a: { type: 'string', format: 'uri', title: 'A' }, b: { type: 'array', items: { type: 'integer' }, minItems: 1 } });
    assert.deepEqual(sent({ ...schema, $schema: 'https://json-schema.org/draft/2020-12/schema' }, false), schema);
    assert.deepEqual(sent(schema), schema);
  });

  test('optional properties (not in required) are sent as they are, up to 24', () => {
    const properties = Object.fromEntries(Array.from({ length: 24 }, (_, k) => [`p${k}`, { type: 'string' }]));
    const schema = { type: 'object', properties, additionalProperties: false };
    assert.deepEqual(sent(schema), schema);
  });

  const unchecked: [string, Json, string, string][] = [
    ['minimum', object({ a: { type: 'integer', minimum: 1 } }), 'response_format.json_schema.schema.properties.a.minimum', '"minimum" is not supported by the provider behind this model alias without "strict": true. Set "strict": true (the gateway then checks the answer against it), or remove it.'],
    ['pattern', object({ a: { type: 'string', pattern: '^a' } }), 'response_format.json_schema.schema.properties.a.pattern', '"pattern" is not supported by the provider behind this model alias without "strict": true. Set "strict": true (the gateway then checks the answer against it), or remove it.'],
    ['maxLength', object({ a: { type: 'string', maxLength: 3 } }), 'response_format.json_schema.schema.properties.a.maxLength', '"maxLength" is not supported by the provider behind this model alias without "strict": true. Set "strict": true (the gateway then checks the answer against it), or remove it.'],
    ['minItems 2', object({ a: { type: 'array', items: { type: 'string' }, minItems: 2 } }), 'response_format.json_schema.schema.properties.a.minItems', '"minItems" above 1 is not supported by the provider behind this model alias without "strict": true. Set "strict": true (the gateway then checks the answer against it), or remove it.'],
    ['an object without additionalProperties', { type: 'object', properties: { 'first name': { type: 'object', properties: {} } }, additionalProperties: false }, 'response_format.json_schema.schema.properties["first name"].additionalProperties', 'the provider behind this model alias needs "additionalProperties": false on every object.'],
    ['additionalProperties true', { type: 'object', properties: {}, additionalProperties: true }, 'response_format.json_schema.schema.additionalProperties', 'the provider behind this model alias takes only "additionalProperties": false.'],
    ['oneOf', object({ a: { oneOf: [{ type: 'string' }] } }), 'response_format.json_schema.schema.properties.a.oneOf', '"oneOf" is not supported by the provider behind this model alias.'],
    ['a format Anthropic does not take', object({ a: { type: 'string', format: 'regex' } }), 'response_format.json_schema.schema.properties.a.format', 'the format "regex" is not supported by the provider behind this model alias; it takes date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid.'],
    ['an enum of objects', object({ a: { enum: [{ x: 1 }] } }), 'response_format.json_schema.schema.properties.a.enum', 'the provider behind this model alias takes an "enum" only of strings, numbers, booleans and null.'],
    ['an external $ref', object({ a: { $ref: 'https://example.com/s.json' } }), 'response_format.json_schema.schema.properties.a.$ref', 'only a "$ref" within the schema ("#", "#/$defs/<name>") is taken by the provider behind this model alias.'],
    ['a $ref to no definition', object({ a: { $ref: '#/$defs/none' } }), 'response_format.json_schema.schema.properties.a.$ref', 'the definition "$defs/none" does not exist.'],
    ['a boolean schema', object({ a: true as unknown as Json }), 'response_format.json_schema.schema.properties.a', 'the provider behind this model alias takes a schema only as a JSON object.'],
    ['25 optional properties', { type: 'object', properties: Object.fromEntries(Array.from({ length: 25 }, (_, k) => [`p${k}`, { type: 'string' }])), additionalProperties: false }, 'response_format.json_schema.schema', 'it has 25 optional properties (not listed in "required"); the provider behind this model alias takes at most 24.'],
  ];
  for (const [name, schema, param, why] of unchecked) {
    test(`refused: ${name}`, () => {
      assert.deepEqual(refusal(schema, false), { param, code: 'unsupported_schema', message: `Invalid schema for response_format: '${param}': ${why}` });
    });
  }

  test('strict absent is the same as false', () => {
    assert.equal(refusal(object({ a: { type: 'integer', minimum: 1 } })).param, 'response_format.json_schema.schema.properties.a.minimum');
  });

  test('no schema at all', () => {
    assert.deepEqual(refusal(undefined, false), {
      param: 'response_format.json_schema.schema',
      code: 'unsupported_schema',
      message: "Invalid schema for response_format: 'response_format.json_schema.schema': a json_schema without a schema is not supported by the provider behind this model alias.",
    });
  });
});

const RECURSIVE = 'a recursive schema is not supported by the provider behind this model alias: this "$ref" leads back to the schema that holds it.';

describe('json_schema: refused with strict true too', () => {
  const refused: [string, Json, string, string][] = [
    ['recursion through the root', object({ children: { type: 'array', items: { $ref: '#' } } }), 'response_format.json_schema.schema.properties.children.items.$ref', RECURSIVE],
    [
      'recursion through a definition',
      object({ tree: { $ref: '#/$defs/node' } }, { $defs: { node: object({ kids: { type: 'array', items: { $ref: '#/$defs/node' } } }) } }),
      'response_format.json_schema.schema.$defs.node.properties.kids.items.$ref',
      RECURSIVE,
    ],
    [
      'recursion through two definitions',
      object({ a: { $ref: '#/$defs/a' } }, { $defs: { a: object({ b: { anyOf: [{ $ref: '#/$defs/b' }, { type: 'null' }] } }), b: object({ a: { $ref: '#/$defs/a' } }) } }),
      'response_format.json_schema.schema.$defs.a.properties.b.anyOf[0].$ref',
      RECURSIVE,
    ],
    [
      '17 parameters with union types',
      object(Object.fromEntries(Array.from({ length: 17 }, (_, k) => [`p${k}`, k % 2 === 0 ? { type: ['string', 'null'] } : { anyOf: [{ type: 'string' }, { type: 'null' }] }]))),
      'response_format.json_schema.schema',
      'it has 17 parameters with union types (anyOf, or a type array such as ["string", "null"]); the provider behind this model alias takes at most 16.',
    ],
  ];
  for (const [name, schema, param, why] of refused) {
    test(name, () => {
      assert.deepEqual(refusal(schema, true), { param, code: 'unsupported_schema', message: `Invalid schema for response_format: '${param}': ${why}` });
    });
  }

  test('16 parameters with union types are sent', () => {
    const schema = object(Object.fromEntries(Array.from({ length: 16 }, (_, k) => [`p${k}`, { type: ['string', 'null'] }])));
    assert.deepEqual(sent(schema, true), schema);
  });

  test('thousands of definitions: a chain is sent, a cycle through all of them is found at its first $ref (in linear time)', () => {
    const chain = (n: number, closed: boolean): Json => {
      const $defs: Json = {};
      for (let k = 0; k < n; k++) {
        const next = k + 1 < n ? k + 1 : closed ? 0 : -1;
        $defs[`d${k}`] = next === -1 ? object({}) : object({ x: { $ref: `#/$defs/d${next}` } });
      }
      return object(Object.fromEntries(Array.from({ length: n }, (_, k) => [`p${k}`, { $ref: `#/$defs/d${k}` }])), { $defs });
    };
    // Not through the fake, which expands every $ref it meets.
    const open = chain(4000, false);
    assert.deepEqual(toAnthropicRequest(request(format(open, true))).output_config?.format.schema, open);
    assert.deepEqual(refusal(chain(4000, true), true), {
      param: 'response_format.json_schema.schema.$defs.d0.properties.x.$ref',
      code: 'unsupported_schema',
      message: `Invalid schema for response_format: 'response_format.json_schema.schema.$defs.d0.properties.x.$ref': ${RECURSIVE}`,
    });
  });

  test('a definition used twice is not recursion', () => {
    const schema = object({ a: { $ref: '#/$defs/d' }, b: { type: 'array', items: { $ref: '#/$defs/d' } } }, { $defs: { d: object({ x: { type: 'string' } }) } });
    assert.deepEqual(sent(schema, true), schema);
  });
});
