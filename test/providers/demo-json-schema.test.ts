// The demo provider's answer to response_format json_schema: the schema's
// instance (src/schema/sample-value.ts) with the echo in its first free
// string, whole and streamed, and passing the gateway's own check; a refusal
// when that value is larger than the demo builds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { compileSchema } from '../../src/schema/compile.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';
import { collect } from '../support/collect.ts';
import { drive } from '../support/drive-provider.ts';
import { postChat, startGateway, type TestGateway } from '../gateway/harness.ts';

const WEATHER = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    city: { type: 'string' },
    temperature: { type: 'number', minimum: -90, maximum: 60 },
    unit: { type: 'string', enum: ['C', 'F'] },
    days: { type: 'array', items: { type: 'string', format: 'date' }, minItems: 2 },
  },
  required: ['summary', 'city', 'temperature', 'unit', 'days'],
  additionalProperties: false,
};

function call(request: Partial<ChatRequest>): UpstreamCall {
  return {
    request: { model: 'portcullis-demo', messages: [{ role: 'user', content: 'Weather in Oslo?' }], ...request },
    requestId: 'req-1',
    signal: new AbortController().signal,
  };
}

const jsonSchema = (schema: Record<string, unknown> | undefined, strict = true): Partial<ChatRequest> => ({
  response_format: { type: 'json_schema', json_schema: { name: 'weather', strict, ...(schema === undefined ? {} : { schema }) } },
});

const EXPECTED = '{"summary":"Weather in Oslo?","city":"demo","temperature":0,"unit":"C","days":["2000-01-01","2000-01-01"]}';

test('complete: the schema\'s instance, the echo in the first free string, passing the compiled schema', async () => {
  const result = await drive(createDemoProvider()).complete(call(jsonSchema(WEATHER)));
  const content = result.choices[0]?.message.content ?? '';
  assert.equal(content, EXPECTED);
  assert.equal(result.choices[0]?.finish_reason, 'stop');
  assert.equal(compileSchema(WEATHER).check(JSON.parse(content)), null);
  // one completion token per space-separated piece: the JSON has one space, in the echo
  assert.deepEqual(result.usage, { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } });
});

test('stream: the same text in pieces at spaces, then finish and usage', async () => {
  const chunks = await collect(drive(createDemoProvider()).stream(call(jsonSchema(WEATHER))));
  const contents = chunks.map((c) => c.choices[0]?.delta.content).filter((c) => c !== undefined);
  assert.deepEqual(contents, ['', '{"summary":"Weather', ' in', ' Oslo?","city":"demo","temperature":0,"unit":"C","days":["2000-01-01","2000-01-01"]}']);
  assert.equal(contents.join(''), EXPECTED);
  assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
});

test('strict false: the same instance; no schema: the json_object answer', async () => {
  const provider = drive(createDemoProvider());
  const loose = await provider.complete(call(jsonSchema(WEATHER, false)));
  assert.equal(loose.choices[0]?.message.content, EXPECTED);
  const none = await provider.complete(call(jsonSchema(undefined, false)));
  assert.deepEqual(JSON.parse(none.choices[0]?.message.content ?? ''), { demo: true, note: 'Portcullis demo provider (not a language model).', echo: 'Weather in Oslo?', messages: 1 });
});

test('max_tokens cuts the JSON like any text, with finish_reason length', async () => {
  const result = await drive(createDemoProvider()).complete(call({ ...jsonSchema(WEATHER), max_tokens: 2 }));
  assert.equal(result.choices[0]?.message.content, '{"summary":"Weather in');
  assert.equal(result.choices[0]?.finish_reason, 'length');
});

/** A strict schema of 3 KB whose value doubles per definition: 2^21 strings. */
function doubling(n: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const object = (properties: Record<string, unknown>): Record<string, unknown> => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
  for (let i = 0; i < n; i++) defs[`d${i}`] = i === n - 1 ? { type: 'string' } : object({ x: { $ref: `#/$defs/d${i + 1}` }, y: { $ref: `#/$defs/d${i + 1}` } });
  return { ...object({ x: { $ref: '#/$defs/d0' } }), $defs: defs };
}

const TOO_LARGE = 'Portcullis demo provider (not a language model). The demo does not answer this schema: its value would be larger than the demo builds (10,000 values or 1,000,000 characters of JSON).';

test('a schema whose value is too large: a refusal, whole and streamed, strict or not', async () => {
  const schema = doubling(22);
  assert.ok(JSON.stringify(schema).length < 3_500);
  for (const strict of [true, false]) {
    const result = await drive(createDemoProvider()).complete(call(jsonSchema(schema, strict)));
    const choice = result.choices[0];
    assert.deepEqual(choice?.message, { role: 'assistant', content: null, refusal: TOO_LARGE, tool_calls: [] });
    assert.equal(choice?.finish_reason, 'stop');
    assert.equal(result.usage?.completion_tokens, TOO_LARGE.split(' ').length);
  }
  const chunks = await collect(drive(createDemoProvider()).stream(call(jsonSchema(schema))));
  assert.deepEqual(chunks[0]?.choices[0]?.delta, { role: 'assistant', content: null, refusal: '' });
  assert.equal(chunks.map((c) => c.choices[0]?.delta.refusal ?? '').join(''), TOO_LARGE);
  assert.equal(chunks.some((c) => typeof c.choices[0]?.delta.content === 'string' && c.choices[0]?.delta.content !== ''), false);
  assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
});

test('a non-strict schema with a pattern of 200,000 characters: the pattern is not run, the string is "demo"', async () => {
  const schema = { type: 'object', properties: { s: { type: 'string', pattern: 'x'.repeat(200_000) } }, required: ['s'] };
  const result = await drive(createDemoProvider()).complete(call(jsonSchema(schema, false)));
  assert.equal(result.choices[0]?.message.content, '{"s":"demo"}');
});

describe('through the gateway', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      configValue: {
        requestFields: ['json_schema'],
        providers: { demo: { type: 'demo' } },
        aliases: { 'service-d': { targets: [{ provider: 'demo', model: 'demo' }] } },
      },
    });
  });
  after(async () => {
    await gw.close();
  });

  const body = (schema: Record<string, unknown>, strict: boolean): Record<string, unknown> => ({
    model: 'service-d',
    messages: [{ role: 'user', content: 'hi' }],
    response_format: { type: 'json_schema', json_schema: { name: 'n', strict, schema } },
  });

  test('a strict schema of 22 doubling definitions: 200 with the refusal, which the gateway\'s check lets through', async () => {
    const res = await postChat(gw, body(doubling(22), true));
    assert.equal(res.status, 200);
    const message = (JSON.parse(res.text) as { choices: Array<{ message: unknown }> }).choices[0]?.message;
    assert.deepEqual(message, { role: 'assistant', content: null, refusal: TOO_LARGE, tool_calls: [] });
  });

  test('a non-strict pattern of 200,000 characters: 200 with "demo"', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: 'x'.repeat(200_000) } }, required: ['s'] };
    const res = await postChat(gw, body(schema, false));
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.text) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, '{"s":"demo"}');
  });
});
