// The Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`) against the real
// gateway (demo provider behind service-chat): the examples of
// docs/clients.md as shown, then generateText, streamText, tools and refused
// settings with exact results and the exact bodies the SDK sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startGateway, type TestGateway } from '../gateway/harness.ts';
import { demoEcho, demoToolEcho, loadSnippet, type SnippetTarget } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';

const TEST_TIMEOUT = { timeout: 20_000 };
const CALL = { maxRetries: 0, timeout: 10_000 } as const;

let gw: TestGateway;
let target: SnippetTarget;
before(async () => {
  gw = await startGateway();
  target = { baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key };
});
after(() => gw.close());

function provider(options: { includeUsage?: boolean } = {}) {
  const recorder = recordingFetch();
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL: target.baseURL, apiKey: target.apiKey, fetch: recorder.fetch, ...options });
  return { portcullis, requests: recorder.requests };
}

const weatherTool = tool({
  description: 'Weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

/** What `tool()` with zod 4 turns `weatherTool` into on the wire. */
const WEATHER_WIRE = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};

test('ai-sdk.mjs: generateText and streamText as shown', TEST_TIMEOUT, async () => {
  const run = await loadSnippet('ai-sdk.mjs');
  assert.deepEqual(await run(target), {
    text: demoEcho('Hello!', 1),
    finishReason: 'stop',
    usage: { inputTokens: 2, outputTokens: 15 },
    streamed: demoEcho('Stream this', 1),
    streamFinishReason: 'stop',
    streamUsage: 16,
  });
});

test('ai-sdk-tools.mjs: the SDK runs the tool and the second step quotes its result', TEST_TIMEOUT, async () => {
  const run = await loadSnippet('ai-sdk-tools.mjs');
  assert.deepEqual(await run(target), {
    toolCalls: [{ toolName: 'get_weather', input: { city: 'Oslo' } }],
    toolResults: ['Sunny in Oslo'],
    text: demoToolEcho('Sunny in Oslo', 3),
    steps: ['tool-calls', 'stop'],
  });
});

test('ai-sdk-errors.mjs: APICallError carries the status and the parsed envelope', TEST_TIMEOUT, async () => {
  const run = await loadSnippet('ai-sdk-errors.mjs');
  const result = (await run(target)) as { requestId: string };
  assert.match(result.requestId, /^req_[0-9a-f]{32}$/);
  assert.deepEqual(result, {
    status: 404,
    message: "The model 'no-such-alias' does not exist or you do not have access to it. Models this API key may use: service-chat, service-auto.",
    error: {
      message: "The model 'no-such-alias' does not exist or you do not have access to it. Models this API key may use: service-chat, service-auto.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    },
    retryable: false,
    requestId: result.requestId,
  });
});

test('generateText through service-auto: the body the SDK sends, the alias it gets back, exact usage', TEST_TIMEOUT, async () => {
  const { portcullis, requests } = provider();
  const result = await generateText({ model: portcullis('service-auto'), system: 'Be brief.', prompt: 'Hello gateway', ...CALL });
  assert.deepEqual(requests.map((r) => r.body), [
    { model: 'service-auto', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello gateway' }] },
  ]);
  assert.equal(result.response.modelId, 'service-chat');
  assert.equal(result.text, demoEcho('Hello gateway', 2));
  assert.equal(result.finishReason, 'stop');
  // prompt: ceil((9 + 13) chars / 4) = 6
  assert.equal(result.usage.inputTokens, 6);
  assert.equal(result.usage.outputTokens, 16);
  assert.equal(result.usage.totalTokens, 22);
  assert.equal(result.usage.inputTokenDetails.cacheReadTokens, 0);
});

test('streamText with includeUsage: stream_options sent, text, finish reason and usage numbers', TEST_TIMEOUT, async () => {
  const { portcullis, requests } = provider({ includeUsage: true });
  const result = streamText({ model: portcullis('service-chat'), prompt: 'Stream me', ...CALL });
  const deltas: string[] = [];
  for await (const delta of result.textStream) deltas.push(delta);
  assert.deepEqual(requests.map((r) => r.body), [
    { model: 'service-chat', messages: [{ role: 'user', content: 'Stream me' }], stream: true, stream_options: { include_usage: true } },
  ]);
  // the demo provider streams one word per chunk
  assert.equal(deltas.length, 16);
  assert.equal(deltas.join(''), demoEcho('Stream me', 1));
  assert.equal(await result.finishReason, 'stop');
  const usage = await result.usage;
  assert.equal(usage.inputTokens, 3);
  assert.equal(usage.outputTokens, 16);
  assert.equal(usage.totalTokens, 19);
  assert.equal(usage.inputTokenDetails.cacheReadTokens, 0);
  assert.equal((await result.response).modelId, 'service-chat');
});

test('streamText without includeUsage: no stream_options, so no usage numbers', TEST_TIMEOUT, async () => {
  const { portcullis, requests } = provider();
  const result = streamText({ model: portcullis('service-chat'), prompt: 'Stream me', ...CALL });
  assert.equal(await result.text, demoEcho('Stream me', 1));
  assert.deepEqual(requests.map((r) => r.body), [{ model: 'service-chat', messages: [{ role: 'user', content: 'Stream me' }], stream: true }]);
  const usage = await result.usage;
  assert.equal(usage.inputTokens, undefined);
  assert.equal(usage.outputTokens, undefined);
});

test('generateText with a tool() helper: call, client-side execution, history sent back, final text', TEST_TIMEOUT, async () => {
  const { portcullis, requests } = provider();
  const result = await generateText({
    model: portcullis('service-chat'),
    prompt: 'What is the weather in Oslo? Use get_weather.',
    tools: { get_weather: weatherTool },
    stopWhen: stepCountIs(3),
    ...CALL,
  });
  assert.equal(requests.length, 2);
  const [first, second] = requests.map((r) => r.body) as [Record<string, unknown>, { messages: Array<Record<string, unknown>> }];
  assert.deepEqual(first, {
    model: 'service-chat',
    messages: [{ role: 'user', content: 'What is the weather in Oslo? Use get_weather.' }],
    tools: [WEATHER_WIRE],
    tool_choice: 'auto',
  });
  const call = result.steps[0]?.toolCalls[0];
  assert.ok(call !== undefined);
  assert.match(call.toolCallId, /^call_[0-9a-f]{24}$/);
  assert.deepEqual(second.messages, [
    { role: 'user', content: 'What is the weather in Oslo? Use get_weather.' },
    // the SDK sends content null beside tool_calls: the gateway accepts it
    { role: 'assistant', content: null, tool_calls: [{ id: call.toolCallId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', tool_call_id: call.toolCallId, content: 'sunny in Oslo' },
  ]);
  assert.deepEqual(
    result.steps.map((s) => s.finishReason),
    ['tool-calls', 'stop'],
  );
  assert.equal(result.text, demoToolEcho('sunny in Oslo', 3));
});

test('streamText with tools: streamed tool-call deltas become one call with parsed input', TEST_TIMEOUT, async () => {
  const { portcullis } = provider({ includeUsage: true });
  const result = streamText({
    model: portcullis('service-chat'),
    prompt: 'call the tool please',
    tools: { get_weather: tool({ description: 'Weather for a city', inputSchema: z.object({ city: z.string(), days: z.number() }) }) },
    ...CALL,
  });
  const parts: string[] = [];
  for await (const part of result.fullStream) parts.push(part.type);
  const calls = await result.toolCalls;
  assert.deepEqual(
    calls.map((c) => ({ toolName: c.toolName, input: c.input })),
    [{ toolName: 'get_weather', input: { city: 'demo', days: 1 } }],
  );
  assert.equal(await result.finishReason, 'tool-calls');
  // arguments {"city":"demo","days":1} are 25 characters: 2 pieces of 16, plus 1 for the name
  assert.equal((await result.usage).outputTokens, 3);
  assert.deepEqual(parts, ['start', 'start-step', 'tool-input-start', 'tool-input-delta', 'tool-input-delta', 'tool-input-end', 'tool-call', 'finish-step', 'finish']);
});

test('toolChoice naming a tool is sent as a named-function tool_choice', TEST_TIMEOUT, async () => {
  const { portcullis, requests } = provider();
  const result = await generateText({
    model: portcullis('service-chat'),
    prompt: 'Hello',
    tools: { get_weather: weatherTool },
    toolChoice: { type: 'tool', toolName: 'get_weather' },
    ...CALL,
  });
  assert.deepEqual((requests[0]?.body as Record<string, unknown>)['tool_choice'], { type: 'function', function: { name: 'get_weather' } });
  assert.deepEqual(result.toolResults.map((r) => r.output), ['sunny in demo']);
});

test('SDK settings outside the contract are refused with the wire field as param (seed, presencePenalty, frequencyPenalty)', TEST_TIMEOUT, async () => {
  const { portcullis } = provider();
  const cases = [
    { settings: { seed: 7 }, param: 'seed' },
    { settings: { presencePenalty: 0.5 }, param: 'presence_penalty' },
    { settings: { frequencyPenalty: 0.5 }, param: 'frequency_penalty' },
  ];
  for (const { settings, param } of cases) {
    await assert.rejects(generateText({ model: portcullis('service-chat'), prompt: 'Hi', ...settings, ...CALL }), (err: unknown) => {
      assert.ok(APICallError.isInstance(err));
      assert.equal(err.statusCode, 400);
      assert.deepEqual(JSON.parse(err.responseBody ?? ''), {
        error: {
          message: `Unsupported parameter: '${param}' is not accepted by this gateway. The gateway's operator can accept it by adding "${param}" to "requestFields" in the gateway's config.`,
          type: 'invalid_request_error',
          param,
          code: 'unknown_parameter',
        },
      });
      assert.equal(err.isRetryable, false);
      return true;
    });
  }
});

test('settings inside the contract pass: maxOutputTokens (max_tokens), temperature, topP, stopSequences', TEST_TIMEOUT, async () => {
  const { portcullis, requests } = provider();
  const result = await generateText({
    model: portcullis('service-chat'),
    prompt: 'Hello gateway',
    maxOutputTokens: 3,
    temperature: 0.2,
    topP: 0.9,
    stopSequences: ['END'],
    ...CALL,
  });
  assert.deepEqual(requests[0]?.body, {
    model: 'service-chat',
    max_tokens: 3,
    temperature: 0.2,
    top_p: 0.9,
    stop: ['END'],
    messages: [{ role: 'user', content: 'Hello gateway' }],
  });
  assert.equal(result.text, 'Portcullis demo provider');
  assert.equal(result.finishReason, 'length');
});

test('a wrong key is a 401 APICallError with code invalid_api_key, not retried', TEST_TIMEOUT, async () => {
  const stranger = createOpenAICompatible({ name: 'portcullis', baseURL: target.baseURL, apiKey: 'pcl_wrong' });
  await assert.rejects(generateText({ model: stranger('service-chat'), prompt: 'Hi', ...CALL }), (err: unknown) => {
    assert.ok(APICallError.isInstance(err));
    assert.equal(err.statusCode, 401);
    assert.equal((err.data as { error: { code: string } }).error.code, 'invalid_api_key');
    assert.equal(err.isRetryable, false);
    return true;
  });
});
