// The real clients' structured output through the gateway to an Anthropic
// alias: LangChain's withStructuredOutput(), the openai SDK's
// chat.completions.parse() with zodResponseFormat and the AI SDK's
// generateObject, in front of the strict fake Anthropic (a translation the
// real API would refuse is its 400 and fails the test). Each gets the typed
// object, or the gateway's 502 when the answer breaks the schema.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { SHOPPING_LIST_SCHEMA } from '../support/shopping-list.ts';
import { refuseLikeAnthropic } from '../providers/anthropic-constraints.ts';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';

const TEST_TIMEOUT = { timeout: 20_000 };
const ShoppingList = z.object({ items: z.array(z.object({ name: z.string(), qty: z.number().int() })) });
const VALID = '{"items":[{"name":"milk","qty":1},{"name":"tea","qty":2}]}';
const INVALID = '{"items":[{"name":"milk","qty":1},{"name":"tea","qty":"two"}]}';
const MISMATCH = {
  message: 'The upstream\'s answer does not match the response_format json_schema: $.items[1].qty: expected integer, got string "two"',
  type: 'upstream_error',
  param: null,
  code: 'upstream_schema_mismatch',
};

let claude: FakeUpstream;
let gw: TestGateway;
let content = VALID;

before(async () => {
  claude = await startFakeUpstream((record, res) => {
    if (refuseLikeAnthropic(res, record.body)) return;
    message(res, content);
  });
  gw = await startGateway({
    configValue: {
      providers: { claude: { type: 'anthropic', baseUrl: claude.baseUrl, apiKeyEnv: 'CLAUDE_KEY', retry: { maxAttempts: 1 } } },
      aliases: { 'service-lists': { provider: 'claude', model: 'claude-test-1', requestFields: ['json_schema'] } },
    },
    env: { CLAUDE_KEY: 'sk-ant-test' },
  });
});
after(async () => {
  await gw.close();
  await claude.close();
});
beforeEach(() => {
  claude.requests.length = 0;
});

function message(res: http.ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: 'msg_l',
    type: 'message',
    role: 'assistant',
    model: 'claude-test-1',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 20 },
  }));
}

type Schema = Record<string, unknown>;

/** The schema Anthropic received, with the SDK's `title`s set aside (LangChain puts one on every subschema). */
function schemaSent(): Schema {
  const body = claude.requests[0]?.body as { output_config?: { format?: { type: string; schema: Schema } } };
  assert.equal(body.output_config?.format?.type, 'json_schema');
  return JSON.parse(JSON.stringify(body.output_config?.format?.schema), (key, value: unknown) => (key === 'title' ? undefined : value)) as Schema;
}

// What every client's zod schema becomes on the wire is SHOPPING_LIST_SCHEMA:
// $schema and the integer bounds of qty (±2^53-1) are not sent; the gateway's
// own check holds the answer to them.
const langchain = () => new ChatOpenAI({ model: 'service-lists', apiKey: gw.key, configuration: { baseURL: `${gw.baseUrl}/v1` }, maxRetries: 0 }).withStructuredOutput(ShoppingList);
const openai = () => new OpenAI({ apiKey: gw.key, baseURL: `${gw.baseUrl}/v1`, maxRetries: 0 });
const aiSdk = () => createOpenAICompatible({ name: 'portcullis', baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, supportsStructuredOutputs: true })('service-lists');

test('LangChain withStructuredOutput(): Anthropic gets its structured-output form, the answer comes back parsed', TEST_TIMEOUT, async () => {
  content = VALID;
  assert.deepEqual(await langchain().invoke('My shopping list'), { items: [{ name: 'milk', qty: 1 }, { name: 'tea', qty: 2 }] });
  assert.equal(claude.requests.length, 1);
  assert.deepEqual(schemaSent(), SHOPPING_LIST_SCHEMA);
});

test('LangChain withStructuredOutput(): an answer off the schema throws the gateway\'s 502', TEST_TIMEOUT, async () => {
  content = INVALID;
  await assert.rejects(langchain().invoke('My shopping list'), (error: unknown) => {
    assert.equal((error as { status?: unknown }).status, 502);
    assert.deepEqual((error as { error?: unknown }).error, MISMATCH);
    return true;
  });
});

test('openai SDK chat.completions.parse() with zodResponseFormat: the typed object', TEST_TIMEOUT, async () => {
  content = VALID;
  const completion = await openai().chat.completions.parse({
    model: 'service-lists',
    messages: [{ role: 'user', content: 'My shopping list' }],
    response_format: zodResponseFormat(ShoppingList, 'shopping_list'),
  });
  assert.deepEqual(completion.choices[0]?.message.parsed, { items: [{ name: 'milk', qty: 1 }, { name: 'tea', qty: 2 }] });
  assert.deepEqual(schemaSent(), SHOPPING_LIST_SCHEMA);
});

test('AI SDK generateObject(): the object; off the schema, an API error carrying the gateway\'s 502', TEST_TIMEOUT, async () => {
  content = VALID;
  const { object } = await generateObject({ model: aiSdk(), schema: ShoppingList, prompt: 'My shopping list', maxRetries: 0 });
  assert.deepEqual(object, { items: [{ name: 'milk', qty: 1 }, { name: 'tea', qty: 2 }] });
  assert.deepEqual(schemaSent(), SHOPPING_LIST_SCHEMA);
  content = INVALID;
  await assert.rejects(generateObject({ model: aiSdk(), schema: ShoppingList, prompt: 'My shopping list', maxRetries: 0 }), (error: unknown) => {
    assert.equal((error as { statusCode?: unknown }).statusCode, 502, String(error));
    assert.deepEqual(JSON.parse((error as { responseBody?: string }).responseBody ?? ''), { error: MISMATCH });
    return true;
  });
});
