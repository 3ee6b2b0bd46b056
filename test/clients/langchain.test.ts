// LangChain's ChatOpenAI (`@langchain/openai`) against the real gateway: the
// example of docs/clients.md as shown, then invoke, stream with usage, bindTools
// (plain and streamed), images and errors, with the exact bodies LangChain sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI, type ChatOpenAIFields } from '@langchain/openai';
import { z } from 'zod';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';
import { demoEcho, demoToolEcho, loadSnippet, type SnippetTarget } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

let upstream: FakeUpstream;
let gw: TestGateway;
let target: SnippetTarget;
before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-vision-1',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'upstream-model-1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'A cat on a mat.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 90, completion_tokens: 5, total_tokens: 95 },
      }),
    );
  });
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
  target = { baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key };
});
after(async () => {
  await gw.close();
  await upstream.close();
});

function chatModel(fields: ChatOpenAIFields = {}) {
  const recorder = recordingFetch();
  const model = new ChatOpenAI({
    model: 'service-chat',
    apiKey: target.apiKey,
    maxRetries: 0,
    timeout: 10_000,
    ...fields,
    configuration: { baseURL: target.baseURL, fetch: recorder.fetch },
  });
  return { model, requests: recorder.requests };
}

const getWeather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: 'get_weather',
  description: 'Weather for a city',
  schema: z.object({ city: z.string() }),
});

/** What bindTools turns `getWeather` into on the wire. */
const WEATHER_WIRE = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};

test('langchain.mjs: invoke, stream with usage, a bindTools round trip', TEST_TIMEOUT, async () => {
  const run = await loadSnippet('langchain.mjs');
  assert.deepEqual(await run(target), {
    text: demoEcho('Hello!', 1),
    tokens: [2, 15],
    streamed: demoEcho('Stream this', 1),
    streamTokens: [3, 16],
    toolCall: { name: 'get_weather', args: { city: 'Oslo' } },
    afterTool: demoToolEcho('Sunny in Oslo', 3),
  });
});

test('invoke sends stream: false and nothing else of its own; the answer names the alias', TEST_TIMEOUT, async () => {
  const { model, requests } = chatModel({ model: 'service-auto' });
  const reply = await model.invoke([new HumanMessage('Hello gateway')]);
  assert.deepEqual(requests.map((r) => r.body), [{ model: 'service-auto', stream: false, messages: [{ role: 'user', content: 'Hello gateway' }] }]);
  assert.equal(reply.content, demoEcho('Hello gateway', 1));
  assert.equal(reply.response_metadata['model_name'], 'service-chat');
  assert.equal(reply.response_metadata['finish_reason'], 'stop');
  assert.deepEqual(reply.response_metadata['tokenUsage'], { promptTokens: 4, completionTokens: 16, totalTokens: 20 });
});

test('stream asks for usage by default and gets it once, on the last chunk', TEST_TIMEOUT, async () => {
  const { model, requests } = chatModel();
  const chunks: AIMessageChunk[] = [];
  for await (const chunk of await model.stream('Stream me')) chunks.push(chunk);
  assert.deepEqual(requests.map((r) => r.body), [
    { model: 'service-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Stream me' }] },
  ]);
  assert.equal(chunks.map((c) => c.content).join(''), demoEcho('Stream me', 1));
  const withUsage = chunks.filter((c) => c.usage_metadata !== undefined);
  assert.equal(withUsage.length, 1);
  assert.equal(withUsage[0], chunks.at(-1));
  const usage = withUsage[0]?.usage_metadata;
  assert.deepEqual([usage?.input_tokens, usage?.output_tokens, usage?.total_tokens, usage?.input_token_details?.cache_read], [3, 16, 19, 0]);
  assert.equal(chunks.filter((c) => c.response_metadata['finish_reason'] === 'stop').length, 1);
});

test('streamUsage: false sends no stream_options and gets no usage', TEST_TIMEOUT, async () => {
  const { model, requests } = chatModel({ streamUsage: false });
  let text = '';
  let usageChunks = 0;
  for await (const chunk of await model.stream('Stream me')) {
    text += String(chunk.content);
    if (chunk.usage_metadata !== undefined) usageChunks++;
  }
  assert.deepEqual(requests.map((r) => r.body), [{ model: 'service-chat', stream: true, messages: [{ role: 'user', content: 'Stream me' }] }]);
  assert.equal(text, demoEcho('Stream me', 1));
  assert.equal(usageChunks, 0);
});

test('bindTools: the tool definition on the wire, the call back, the result quoted', TEST_TIMEOUT, async () => {
  const { model, requests } = chatModel();
  const withTools = model.bindTools([getWeather]);
  const question = new HumanMessage('Use get_weather for Oslo');
  const asked = await withTools.invoke([question]);
  assert.deepEqual(requests[0]?.body, { model: 'service-chat', stream: false, tools: [WEATHER_WIRE], messages: [{ role: 'user', content: 'Use get_weather for Oslo' }] });
  assert.equal(asked.response_metadata['finish_reason'], 'tool_calls');
  assert.equal(asked.tool_calls?.length, 1);
  const call = asked.tool_calls![0]!;
  assert.match(String(call.id), /^call_[0-9a-f]{24}$/);
  assert.deepEqual(call, { name: 'get_weather', args: { city: 'Oslo' }, type: 'tool_call', id: call.id });
  const result = new ToolMessage({ content: String(await getWeather.invoke(call.args as { city: string })), tool_call_id: String(call.id) });
  const answered = await withTools.invoke([question, asked, result]);
  assert.deepEqual((requests[1]?.body as { messages: unknown }).messages, [
    { role: 'user', content: 'Use get_weather for Oslo' },
    // LangChain sends content "" beside tool_calls
    { role: 'assistant', content: '', tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', content: 'sunny in Oslo', tool_call_id: call.id },
  ]);
  assert.equal(answered.content, demoToolEcho('sunny in Oslo', 3));
});

test('bindTools streamed: tool-call chunks concatenate into one whole call, usage on the last chunk', TEST_TIMEOUT, async () => {
  const { model } = chatModel();
  const withTools = model.bindTools([getWeather]);
  let merged: AIMessageChunk | undefined;
  let chunkCount = 0;
  for await (const chunk of await withTools.stream('call the tool')) {
    chunkCount++;
    merged = merged === undefined ? chunk : merged.concat(chunk);
  }
  assert.ok(merged !== undefined);
  const id = merged.tool_calls?.[0]?.id;
  assert.match(String(id), /^call_[0-9a-f]{24}$/);
  assert.deepEqual(merged.tool_calls, [{ name: 'get_weather', args: { city: 'demo' }, id, type: 'tool_call' }]);
  // the name arrives whole in the first delta only, so LangChain's string concatenation keeps it intact
  assert.deepEqual(merged.tool_call_chunks, [{ name: 'get_weather', args: '{"city":"demo"}', id, index: 0, type: 'tool_call_chunk' }]);
  const usage = merged.usage_metadata;
  assert.deepEqual([usage?.input_tokens, usage?.output_tokens, usage?.total_tokens, usage?.input_token_details?.cache_read], [4, 2, 6, 0]);
  assert.ok(chunkCount >= 3);
});

test('a ToolMessage from tool.invoke(toolCall) carries `name`: accepted, and not forwarded upstream', TEST_TIMEOUT, async () => {
  const { model, requests } = chatModel();
  const withTools = model.bindTools([getWeather]);
  const question = new HumanMessage('Use get_weather for Oslo');
  const asked = await withTools.invoke([question]);
  const result: unknown = await getWeather.invoke(asked.tool_calls![0]!);
  assert.ok(result instanceof ToolMessage);
  assert.equal(result.name, 'get_weather');
  const answer = await withTools.invoke([question, asked, result]);
  assert.equal(answer.content, 'Portcullis demo provider (not a language model). The tool returned: "sunny in Oslo". The request had 3 messages.');
  const sent = (requests[1]?.body as { messages: unknown[] }).messages[2];
  assert.deepEqual(sent, { role: 'tool', content: 'sunny in Oslo', name: 'get_weather', tool_call_id: asked.tool_calls![0]!.id });
});

test('an https image_url content part reaches the upstream as sent', TEST_TIMEOUT, async () => {
  const { model } = chatModel({ model: 'service-fake' });
  const before = upstream.requests.length;
  const reply = await model.invoke([
    new HumanMessage({
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    }),
  ]);
  assert.equal(reply.content, 'A cat on a mat.');
  assert.equal(upstream.requests.length, before + 1);
  assert.deepEqual((upstream.requests.at(-1)?.body as { messages: unknown }).messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    },
  ]);
});

test('errors: the envelope on the thrown error; LangChain adds its own lc_error_code', TEST_TIMEOUT, async () => {
  const { model } = chatModel({ model: 'no-such-alias' });
  await assert.rejects(model.invoke('Hi'), (err: unknown) => {
    const e = err as { status: number; code: string; param: string; lc_error_code: string; error: unknown };
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    assert.equal(e.param, 'model');
    assert.equal(e.lc_error_code, 'MODEL_NOT_FOUND');
    return true;
  });
  const { model: penalised } = chatModel({ frequencyPenalty: 0.5 });
  await assert.rejects(penalised.invoke('Hi'), (err: unknown) => {
    const e = err as { status: number; error: unknown };
    assert.equal(e.status, 400);
    assert.deepEqual(e.error, {
      message: `Unsupported parameter: 'frequency_penalty' is not accepted by this gateway. The gateway's operator can accept it by adding "frequency_penalty" to "requestFields" in the gateway's config.`,
      type: 'invalid_request_error',
      param: 'frequency_penalty',
      code: 'unknown_parameter',
    });
    return true;
  });
});
