// A host codec and the operator's requestFields (docs/request-fields.md): the
// request a host codec is handed carries only fields its public ChatRequest
// declares, with the values the client sent, and a codec that cannot
// translate one refuses it by refusal(): the client's 400 names the field and
// nothing reaches the upstream.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { ChatCompletion, ChatRequest, ProviderAdapter } from '../../src/api/providers.ts';
import { REQUEST_FIELD_NAMES } from '../../src/config/request-fields-config.ts';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';

/** Every field the public ChatRequest declares: the compiler holds this list to the type, both ways. */
const DECLARED: Record<keyof ChatRequest, true> = {
  model: true, messages: true, tools: true, tool_choice: true, response_format: true, temperature: true, top_p: true,
  max_tokens: true, max_completion_tokens: true, stop: true, stream: true, stream_options: true, n: true, seed: true,
  user: true, safety_identifier: true, prompt_cache_key: true, metadata: true, parallel_tool_calls: true, logprobs: true,
  top_logprobs: true, frequency_penalty: true, presence_penalty: true, logit_bias: true, reasoning_effort: true,
  service_tier: true, prediction: true, verbosity: true, store: true,
};

/** A value for each of OpenAI's fields beyond the contract's table (json_schema is response_format's). */
const OPTIONAL_FIELDS = {
  response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
  seed: 7,
  user: 'user-1',
  safety_identifier: 'sid-1',
  prompt_cache_key: 'cache-1',
  metadata: { run: '1' },
  parallel_tool_calls: false,
  logprobs: true,
  top_logprobs: 2,
  frequency_penalty: 0.5,
  presence_penalty: -0.5,
  logit_bias: { '50256': -100 },
  reasoning_effort: 'low',
  service_tier: 'auto',
  prediction: { type: 'content', content: 'ok' },
  verbosity: 'low',
  store: false,
} as const;

const COMPLETION: ChatCompletion = { id: 'c1', object: 'chat.completion', created: 1, model: 'm1', choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };

/** Translates what its upstream knows (the contract's table and `seed`); refuses any other field present. */
const TRANSLATED: ReadonlySet<string> = new Set(['model', 'messages', 'tools', 'tool_choice', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'stream', 'stream_options', 'n', 'seed']);

const handed: ChatRequest[] = [];
function relay(type: string, refuseUntranslated: boolean): ProviderAdapter<null> {
  return {
    type,
    settings: [],
    parse: () => null,
    create: () => ({
      encode(request) {
        handed.push(structuredClone(request));
        return JSON.stringify(request);
      },
      decode: (text) => JSON.parse(text) as ChatCompletion,
      streamDecoder: () => ({ push: () => undefined, end: () => undefined }),
      ...(refuseUntranslated
        ? {
            refusal(request: ChatRequest) {
              const field = Object.keys(request).find((name) => !TRANSLATED.has(name));
              return field === undefined ? null : { param: field, message: `this upstream has no ${field}; leave it out` };
            },
          }
        : {}),
    }),
  };
}

describe("a host codec and the operator's requestFields", () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await startFakeUpstream((_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(COMPLETION));
    });
    const provider = (type: string): Record<string, unknown> => ({ type, baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 } });
    gw = await startGateway({
      providerTypes: [relay('relay', false), relay('strict-relay', true)],
      configValue: {
        requestFields: [...REQUEST_FIELD_NAMES],
        providers: { relay: provider('relay'), strict: provider('strict-relay') },
        aliases: { chat: { provider: 'relay', model: 'm1' }, strict: { provider: 'strict', model: 'm2' } },
      },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('every accepted field reaches the codec as the client sent it, and each is one ChatRequest declares', async () => {
    handed.length = 0;
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, refusal: 'I cannot.' },
      { role: 'user', content: 'then say ok' },
    ];
    const res = await postChat(gw, { model: 'chat', messages, max_tokens: 20, ...OPTIONAL_FIELDS });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(handed, [{ model: 'm1', messages, max_tokens: 20, ...OPTIONAL_FIELDS }]);
    assert.deepEqual(Object.keys(handed[0] ?? {}).filter((name) => !Object.hasOwn(DECLARED, name)), []);
  });

  test("a field the codec does not translate: refusal() names it, the client's 400, nothing upstream", async () => {
    handed.length = 0;
    upstream.requests.length = 0;
    const res = await postChat(gw, { model: 'strict', messages: [{ role: 'user', content: 'hi' }], seed: 7, frequency_penalty: 0.5 });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.json(), {
      error: { message: 'this upstream has no frequency_penalty; leave it out', type: 'invalid_request_error', param: 'frequency_penalty', code: 'unsupported_parameter' },
    });
    assert.deepEqual([handed.length, upstream.requests.length], [0, 0]);
  });
});
