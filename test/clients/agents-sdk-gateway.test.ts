// An OpenAI Agents SDK program (pinned in test/package.json) and the openai
// SDK's Responses calls through the gateway, to an upstream that speaks
// Responses (passed through) and to one that speaks only chat completions
// (translated): the agent's function tool round trip, streamed and not, and
// responses.stream through the strict grammar checker.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { quoteAnswer, SCRIPTED_UPSTREAM_KEY, startScriptedOpenAI, PLAIN_ANSWER, type ScriptedToolCall, type ScriptedUpstream } from '../support/scripted-upstreams.ts';
import { startScriptedResponses } from '../support/scripted-responses.ts';
import { checkResponseStream } from '../support/responses-stream-checker.ts';
import { request, startGateway, type TestGateway } from '../gateway/harness.ts';

const WEATHER_CALL: ScriptedToolCall = { name: 'weather', arguments: { city: 'Oslo' } };
const FORECAST = 'Sunny in Oslo';
const ALIAS = 'service-agents';

before(() => setTracingDisabled(true));

const KINDS = [
  { name: 'Responses', mode: 'passthrough', start: (toolCall?: ScriptedToolCall) => startScriptedResponses(toolCall === undefined ? {} : { toolCall }) },
  { name: 'chat-completions-only', mode: 'translate', start: (toolCall?: ScriptedToolCall) => startScriptedOpenAI(toolCall === undefined ? {} : { toolCall }) },
] as const;

async function through(upstream: ScriptedUpstream, mode: string): Promise<TestGateway> {
  return startGateway({
    configValue: {
      providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'SCRIPTED_KEY', responses: mode, retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } } },
      aliases: { [ALIAS]: { provider: 'up', model: 'agents-upstream-1' } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
}

function forecaster(gw: TestGateway, asked: string[]): Agent {
  const weather = tool({
    name: 'weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      asked.push(city);
      return `Sunny in ${city}`;
    },
  });
  const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.baseUrl}/v1`, maxRetries: 0 });
  return new Agent({ name: 'Forecaster', instructions: 'Answer with the weather tool.', model: new OpenAIResponsesModel(client, ALIAS), tools: [weather] });
}

for (const kind of KINDS) {
  describe(`through the gateway to a ${kind.name} upstream`, () => {
    for (const stream of [false, true]) {
      test(`an agent with a function tool${stream ? ', streamed' : ''}: the call, the tool run, its output quoted back`, async () => {
        const upstream = await kind.start(WEATHER_CALL);
        const gw = await through(upstream, kind.mode);
        try {
          const asked: string[] = [];
          let output: unknown;
          if (stream) {
            const streamed = await run(forecaster(gw, asked), 'Weather in Oslo?', { stream: true });
            for await (const _ of streamed.toTextStream()) void _;
            await streamed.completed;
            output = streamed.finalOutput;
          } else {
            output = (await run(forecaster(gw, asked), 'Weather in Oslo?')).finalOutput;
          }
          assert.equal(output, quoteAnswer(FORECAST));
          assert.deepEqual(asked, ['Oslo']);
          assert.deepEqual(upstream.violations, []);
          assert.deepEqual(upstream.answered, ['tool_use', 'text']);
          assert.deepEqual(upstream.toolResults, [FORECAST]);
        } finally {
          await gw.close();
          await upstream.close();
        }
      });
    }

    test('responses.stream: the strict grammar, the final response with the alias and usage', async () => {
      const upstream = await kind.start();
      const gw = await through(upstream, kind.mode);
      try {
        const raw = await request(gw.baseUrl, 'POST', '/v1/responses', {
          headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: ALIAS, input: 'say hi', stream: true }),
        });
        assert.equal(raw.status, 200, raw.text);
        if (kind.mode === 'translate') {
          // The gateway's own grammar. A passed-through stream is the upstream's events as they came
          // (the scripted fake's minimal ones lack fields the strict checker requires of a full response).
          const checked = checkResponseStream(raw.text);
          assert.equal(checked.response.model, ALIAS);
          assert.equal(checked.response.status, 'completed');
        } else {
          assert.match(raw.text, /^event: response\.created\ndata: /);
          assert.match(raw.text, new RegExp(`"model":"${ALIAS}"`));
        }
        const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.baseUrl}/v1`, maxRetries: 0 });
        const final = await client.responses.stream({ model: ALIAS, input: 'say hi' }).finalResponse();
        assert.equal(final.output_text, PLAIN_ANSWER);
        assert.equal(final.model, ALIAS);
        assert.ok((final.usage?.output_tokens ?? 0) > 0);
      } finally {
        await gw.close();
        await upstream.close();
      }
    });
  });
}
