// LangChain's withStructuredOutput() with its default method (json_schema; a zod
// schema makes it strict) and the AI SDK's generateObject through the
// OpenAI-compatible provider, through the gateway, in front of an
// OpenAI-compatible fake that answers by the schema or off it: the typed
// object, or an error that carries the gateway's 502 upstream_schema_mismatch,
// never an answer that breaks the schema as if it held it.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const TEST_TIMEOUT = { timeout: 20_000 };
/** LangChain's zod interop puts "title" on every subschema, and the strict checker (src/schema/) refuses the keyword: 400 unsupported_schema at $.title. */

const ShoppingList = z.object({ items: z.array(z.object({ name: z.string(), qty: z.number().int() })) });

const VALID = '{"items":[{"name":"milk","qty":1},{"name":"tea","qty":2}]}';
const INVALID = '{"items":[{"name":"milk","qty":1},{"name":"tea","qty":"two"}]}';
const MISMATCH = {
  message: 'The upstream\'s answer does not match the response_format json_schema: $.items[1].qty: expected integer, got string "two"',
  type: 'upstream_error',
  param: null,
  code: 'upstream_schema_mismatch',
};

let upstream: FakeUpstream;
let gw: TestGateway;
let content = VALID;

before(async () => {
  upstream = await startFakeUpstream((_req, res) => whole(res, content));
  gw = await startGateway({
    configValue: {
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, retry: { maxAttempts: 1 } } },
      aliases: { 'service-lists': { provider: 'fake', model: 'upstream-model-1', requestFields: ['json_schema'] } },
    },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

function whole(res: http.ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: 'chatcmpl-u',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model-1',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 },
  }));
}

function responseFormatSent(): { type: string; json_schema?: { strict?: boolean } } {
  return (upstream.requests[0]?.body as { response_format: { type: string; json_schema?: { strict?: boolean } } }).response_format;
}

const langchain = () => new ChatOpenAI({ model: 'service-lists', apiKey: gw.key, configuration: { baseURL: `${gw.baseUrl}/v1` }, maxRetries: 0 }).withStructuredOutput(ShoppingList);

test('LangChain withStructuredOutput(): an answer by the schema comes back parsed', TEST_TIMEOUT, async () => {
  content = VALID;
  assert.deepEqual(await langchain().invoke('My shopping list'), { items: [{ name: 'milk', qty: 1 }, { name: 'tea', qty: 2 }] });
  assert.equal(responseFormatSent().type, 'json_schema');
  assert.equal(responseFormatSent().json_schema?.strict, true);
});

test('LangChain withStructuredOutput(): an answer off the schema throws the gateway\'s 502', TEST_TIMEOUT, async () => {
  content = INVALID;
  await assert.rejects(langchain().invoke('My shopping list'), (error: unknown) => {
    assert.equal((error as { status?: unknown }).status, 502);
    assert.deepEqual((error as { error?: unknown }).error, MISMATCH);
    return true;
  });
});

const aiSdk = () => createOpenAICompatible({ name: 'portcullis', baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, supportsStructuredOutputs: true })('service-lists');

test('AI SDK generateObject(): an answer by the schema comes back as the object', TEST_TIMEOUT, async () => {
  content = VALID;
  const { object } = await generateObject({ model: aiSdk(), schema: ShoppingList, prompt: 'My shopping list', maxRetries: 0 });
  assert.deepEqual(object, { items: [{ name: 'milk', qty: 1 }, { name: 'tea', qty: 2 }] });
  assert.equal(responseFormatSent().type, 'json_schema');
});

test('AI SDK generateObject(): an answer off the schema is an API error carrying the gateway\'s 502', TEST_TIMEOUT, async () => {
  content = INVALID;
  await assert.rejects(generateObject({ model: aiSdk(), schema: ShoppingList, prompt: 'My shopping list', maxRetries: 0 }), (error: unknown) => {
    assert.equal((error as { statusCode?: unknown }).statusCode, 502, String(error));
    assert.deepEqual(JSON.parse((error as { responseBody?: string }).responseBody ?? ''), { error: MISMATCH });
    return true;
  });
});
