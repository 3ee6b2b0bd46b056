// The harness itself, with no gateway between: an OpenAI Agents SDK program
// (the version pinned in test/package.json) with a function tool, pointed
// straight at the strict scripted fakes, does the tool round trip: the fake
// asks for the tool, the SDK runs it and sends its output back, the fake
// quotes it. Over Responses (the SDK's default model) streamed and not, and
// over chat completions (its chat model) for the chat-only upstream. If this
// fails, the gateway tests that run the SDK through Portcullis cannot pass
// whatever the gateway does: the client, the fakes or the harness moved.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { quoteAnswer, SCRIPTED_UPSTREAM_KEY, startScriptedOpenAI, type ScriptedToolCall } from '../support/scripted-upstreams.ts';
import { startScriptedResponses } from '../support/scripted-responses.ts';

const WEATHER_CALL: ScriptedToolCall = { name: 'weather', arguments: { city: 'Oslo' } };
const FORECAST = 'Sunny in Oslo';

/** The SDK would otherwise send its traces to OpenAI; left off for the rest of the process, which runs no other agent. */
before(() => setTracingDisabled(true));

function forecaster(model: OpenAIResponsesModel | OpenAIChatCompletionsModel, asked: string[]): Agent {
  const weather = tool({
    name: 'weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      asked.push(city);
      return `Sunny in ${city}`;
    },
  });
  return new Agent({ name: 'Forecaster', instructions: 'Answer with the weather tool.', model, tools: [weather] });
}

function client(baseURL: string): OpenAI {
  return new OpenAI({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL, maxRetries: 0 });
}

test('an agent with a function tool against the Responses fake: the call, the tool run, its output quoted back', async () => {
  const upstream = await startScriptedResponses({ toolCall: WEATHER_CALL });
  try {
    const asked: string[] = [];
    const result = await run(forecaster(new OpenAIResponsesModel(client(upstream.baseUrl), 'service-chat'), asked), 'Weather in Oslo?');
    assert.equal(result.finalOutput, quoteAnswer(FORECAST));
    assert.deepEqual(asked, ['Oslo']);
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    assert.deepEqual(upstream.toolResults, [FORECAST]);
    assert.deepEqual(upstream.received.map((r) => [r.method, r.url, JSON.parse(r.text).stream]), [
      ['POST', '/v1/responses', false],
      ['POST', '/v1/responses', false],
    ]);
    const second = JSON.parse(upstream.received[1]!.text) as { input: Array<Record<string, unknown>> };
    assert.deepEqual(second.input.slice(1), [
      { id: 'fc_fake1', type: 'function_call', name: 'weather', call_id: 'call_fake1', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_fake1', output: FORECAST, status: 'completed' },
    ]);
  } finally {
    await upstream.close();
  }
});

test('the same agent streamed against the Responses fake: the same round trip over the event stream', async () => {
  const upstream = await startScriptedResponses({ toolCall: WEATHER_CALL });
  try {
    const asked: string[] = [];
    const streamed = await run(forecaster(new OpenAIResponsesModel(client(upstream.baseUrl), 'service-chat'), asked), 'Weather in Oslo?', { stream: true });
    let text = '';
    for await (const event of streamed.toTextStream()) text += event;
    await streamed.completed;
    assert.equal(streamed.finalOutput, quoteAnswer(FORECAST));
    assert.equal(text, quoteAnswer(FORECAST));
    assert.deepEqual(asked, ['Oslo']);
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    assert.deepEqual(upstream.received.map((r) => JSON.parse(r.text).stream), [true, true]);
  } finally {
    await upstream.close();
  }
});

test('the agent on its chat completions model against the chat fake: tool_calls out, a tool message back', async () => {
  const upstream = await startScriptedOpenAI({ toolCall: WEATHER_CALL });
  try {
    const asked: string[] = [];
    const result = await run(forecaster(new OpenAIChatCompletionsModel(client(upstream.baseUrl), 'service-chat'), asked), 'Weather in Oslo?');
    assert.equal(result.finalOutput, quoteAnswer(FORECAST));
    assert.deepEqual(asked, ['Oslo']);
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    assert.deepEqual(upstream.toolResults, [FORECAST]);
    assert.deepEqual(upstream.received.map((r) => [r.method, r.url]), [
      ['POST', '/v1/chat/completions'],
      ['POST', '/v1/chat/completions'],
    ]);
  } finally {
    await upstream.close();
  }
});
