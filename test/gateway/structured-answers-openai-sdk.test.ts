// The `openai` SDK's chat.completions.parse() with zodResponseFormat through the
// gateway, in front of an OpenAI-compatible fake that answers by the schema or
// off it: parse() gets the typed object, or an APIError 502
// upstream_schema_mismatch naming the path, never an answer that breaks the
// schema as if it held it; a stream that ends off the schema throws from the
// SDK's iterator.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

const ShoppingList = z.object({ items: z.array(z.object({ name: z.string(), qty: z.number().int() })) });
const FORMAT = zodResponseFormat(ShoppingList, 'shopping_list');

const VALID = '{"items":[{"name":"milk","qty":1},{"name":"tea","qty":2}]}';
const INVALID = '{"items":[{"name":"milk","qty":1},{"name":"tea","qty":"two"}]}';
const MESSAGE = 'The upstream\'s answer does not match the response_format json_schema: $.items[1].qty: expected integer, got string "two"';

let upstream: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;
let answer: (res: http.ServerResponse) => void;

before(async () => {
  upstream = await startFakeUpstream((_req, res) => answer(res));
  gw = await startGateway({
    configValue: {
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, retry: { maxAttempts: 1 } } },
      aliases: { 'service-lists': { provider: 'fake', model: 'upstream-model-1', requestFields: ['json_schema'] } },
    },
  });
  client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, maxRetries: 0, timeout: 10_000 });
});
after(async () => {
  await gw.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

function whole(content: string): (res: http.ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: 'chatcmpl-u',
      object: 'chat.completion',
      created: 1,
      model: 'upstream-model-1',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 },
    }));
  };
}

function chunk(content: string | null, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
}

const ask = { model: 'service-lists', messages: [{ role: 'user' as const, content: 'My shopping list' }], response_format: FORMAT };

test('parse(): an answer by the schema comes back parsed', TEST_TIMEOUT, async () => {
  answer = whole(VALID);
  const completion = await client.chat.completions.parse(ask);
  assert.deepEqual(completion.choices[0]?.message.parsed, { items: [{ name: 'milk', qty: 1 }, { name: 'tea', qty: 2 }] });
  // The SDK's schema reached the upstream as the SDK wrote it.
  assert.deepEqual((upstream.requests[0]?.body as { response_format: unknown }).response_format, JSON.parse(JSON.stringify(FORMAT)));
});

test('parse(): an answer off the schema is an APIError 502 naming the path, not a parsed object', TEST_TIMEOUT, async () => {
  answer = whole(INVALID);
  await assert.rejects(client.chat.completions.parse(ask), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_schema_mismatch');
    assert.equal(error.type, 'upstream_error');
    assert.equal(error.message, `502 ${MESSAGE}`);
    return true;
  });
});

test('stream(): an answer that ends off the schema throws from the iterator; the SDK never sees a finish', TEST_TIMEOUT, async () => {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  answer = (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk('{"items":[{"name":"milk","qty":1},'));
    // The rest once the SDK has the first chunk: the answer is under way.
    void released.then(() => res.end(`${chunk('{"name":"tea","qty":"two"}]}')}${chunk(null, 'stop')}data: [DONE]\n\n`));
  };
  const stream = client.chat.completions.stream(ask);
  let text = '';
  const finishes: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const event of stream) {
        release();
        text += event.choices[0]?.delta.content ?? '';
        const finish = event.choices[0]?.finish_reason;
        if (finish) finishes.push(finish);
      }
    })(),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.message, MESSAGE);
      return true;
    },
  );
  assert.deepEqual(finishes, []);
  assert.equal(text, '{"items":[{"name":"milk","qty":1},');
});
