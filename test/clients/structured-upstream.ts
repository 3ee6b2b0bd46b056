// What the structured-output client tests share: one zod schema, a fake
// OpenAI-compatible upstream whose answer is chosen by the model it is asked
// for (`good-model` answers JSON that matches the schema, `bad-model` JSON that
// breaks it at $.temperature), whole or streamed in three pieces, and a
// gateway in front of it with or without "requestFields": ["json_schema"].
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway, type UpstreamRequest } from '../gateway/harness.ts';

export const Weather = z.object({ city: z.string(), temperature: z.number(), unit: z.enum(['C', 'F']) });

/** The JSON schema of `Weather` as every one of the three SDKs prints it, before its own additions. */
export const WEATHER_PROPERTIES = {
  city: { type: 'string' },
  temperature: { type: 'number' },
  unit: { type: 'string', enum: ['C', 'F'] },
};

export const GOOD_ANSWER = '{"city":"Oslo","temperature":4,"unit":"C"}';
/** temperature is a string: the first violation is at $.temperature. */
export const BAD_ANSWER = '{"city":"Oslo","temperature":"4","unit":"C"}';

export const PROMPT = 'Weather in Oslo?';

function answerFor(model: unknown): string {
  return model === 'bad-model' ? BAD_ANSWER : GOOD_ANSWER;
}

function answer(req: UpstreamRequest, res: ServerResponse): void {
  const body = req.body as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
  const content = answerFor(body.model);
  const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
  const base = { id: 'chatcmpl-structured', created: 1_700_000_000, model: body.model };
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage }));
    return;
  }
  const chunk = (choices: unknown[], extra: object = {}): string => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
  const third = Math.ceil(content.length / 3);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  for (let at = 0; at < content.length; at += third) res.write(chunk([{ index: 0, delta: { content: content.slice(at, at + third) }, finish_reason: null }]));
  res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  if (body.stream_options?.include_usage === true) res.write(chunk([], { usage }));
  res.end('data: [DONE]\n\n');
}

export interface StructuredSetup {
  upstream: FakeUpstream;
  gw: TestGateway;
  baseURL: string;
  /** The bodies the upstream received since the last call, then forgets them. */
  received(): unknown[];
  close(): Promise<void>;
}

/**
 * Aliases: `service-good` (good-model), `service-bad` (bad-model),
 * `service-fallback` (bad-model first, then good-model) and `service-chat`
 * (the demo provider). `requestFields` null: the default policy.
 */
export async function startStructuredSetup(requestFields: string[] | null): Promise<StructuredSetup> {
  const upstream = await startFakeUpstream(answer);
  const fake = (model: string, priority: number) => ({ provider: 'fake', model, priority });
  const gw = await startGateway({
    configValue: {
      ...(requestFields === null ? {} : { requestFields }),
      providers: {
        demo: { type: 'demo' },
        fake: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } },
      },
      aliases: {
        'service-chat': { provider: 'demo', model: 'portcullis-demo' },
        'service-good': { targets: [fake('good-model', 0)] },
        'service-bad': { targets: [fake('bad-model', 0)] },
        'service-fallback': { targets: [fake('bad-model', 0), fake('good-model', 1)] },
      },
    },
  });
  let seen = 0;
  return {
    upstream,
    gw,
    baseURL: `${gw.baseUrl}/v1`,
    received() {
      const bodies = upstream.requests.slice(seen).map((r) => r.body);
      seen = upstream.requests.length;
      return bodies;
    },
    async close() {
      await gw.close();
      await upstream.close();
    },
  };
}

/** What the gateway's refusal of json_schema under the default policy says. */
export const NOT_ACCEPTED_MESSAGE =
  `Invalid value for 'response_format.type': 'json_schema' is not accepted by this gateway. The gateway's operator can accept it by adding "json_schema" to "requestFields" in the gateway's config.`;
