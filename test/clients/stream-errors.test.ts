// An upstream failure after streaming has begun reaches the client as a
// `data: {"error":...}` frame. What each real client makes of it: openai-node
// and LangChain throw from the iterator; the Vercel AI SDK does not throw, it
// ends with finishReason "error" and hands the envelope to onError.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { StreamProviderError, streamText } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

/** The gateway's frame for an upstream that stopped without a finish_reason or [DONE]. */
const TRUNCATED = {
  message: 'The upstream stream ended unexpectedly.',
  type: 'upstream_error',
  param: null,
  code: 'upstream_stream_truncated',
};

let upstream: FakeUpstream;
let gw: TestGateway;
before(async () => {
  // One content chunk, then the upstream ends the response: no finish_reason, no [DONE].
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = {
      id: 'chatcmpl-cut-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'upstream-model-1',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }],
    };
    res.end(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

test('openai-node: the stream iterator throws an APIError carrying the envelope', TEST_TIMEOUT, async () => {
  const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, maxRetries: 0, timeout: 10_000 });
  const stream = await client.chat.completions.create({ model: 'service-fake', messages: [{ role: 'user', content: 'Hi' }], stream: true });
  let text = '';
  await assert.rejects(
    (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })(),
    (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError);
      assert.equal(err.message, TRUNCATED.message);
      assert.equal(err.code, TRUNCATED.code);
      assert.equal(err.type, TRUNCATED.type);
      return true;
    },
  );
  assert.equal(text, 'Hello');
});

test('Vercel AI SDK: no throw; the text so far, finishReason "error", a StreamProviderError with the envelope to onError', TEST_TIMEOUT, async () => {
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, includeUsage: true });
  const errors: unknown[] = [];
  const result = streamText({
    model: portcullis('service-fake'),
    prompt: 'Hi',
    maxRetries: 0,
    timeout: 10_000,
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  assert.equal(text, 'Hello');
  assert.equal(await result.finishReason, 'error');
  assert.equal(errors.length, 1);
  const [error] = errors;
  assert.ok(StreamProviderError.isInstance(error), String(error));
  assert.equal(error.message, TRUNCATED.message);
  assert.equal(error.code, TRUNCATED.code);
  assert.equal(error.type, TRUNCATED.type);
  assert.equal(error.isRetryable, false);
  assert.deepEqual(error.data, TRUNCATED);
});

test('LangChain: the stream throws with the envelope code', TEST_TIMEOUT, async () => {
  const model = new ChatOpenAI({ model: 'service-fake', apiKey: gw.key, configuration: { baseURL: `${gw.baseUrl}/v1` }, maxRetries: 0, timeout: 10_000 });
  let text = '';
  await assert.rejects(
    (async () => {
      for await (const chunk of await model.stream('Hi')) text += String(chunk.content);
    })(),
    (err: unknown) => {
      const e = err as { message: string; code: string; type: string };
      assert.equal(e.message, TRUNCATED.message);
      assert.equal(e.code, TRUNCATED.code);
      assert.equal(e.type, TRUNCATED.type);
      return true;
    },
  );
  assert.equal(text, 'Hello');
});
