// The demo provider's answer to response_format json_schema: the schema's
// instance (src/schema/sample-value.ts) with the echo in its first free
// string, whole and streamed, and passing the gateway's own check.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { compileSchema } from '../../src/schema/compile.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';
import { collect } from '../support/collect.ts';
import { drive } from '../support/drive-provider.ts';

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
