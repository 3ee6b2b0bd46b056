// A Responses client's request at each provider type, through routing and the
// dispatcher against fake upstreams: what the chat translation cannot say is
// refused by a chat-only target (openai in translate mode, anthropic, demo),
// which is then skipped; an openai target in passthrough mode takes the
// client's own body; a chat request is never asked about.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { rawEvent } from '../../src/chat/messages-origin.ts';
import { setResponsesOrigin } from '../../src/chat/responses-origin.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { ResponsesMode } from '../../src/config/provider-defaults.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createAnthropicProvider } from '../../src/providers/anthropic.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.ts';
import { createProviderBinding } from '../../src/providers/provider-factories.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { dispatchCompletion, dispatchStream, type AttemptRecord } from '../../src/upstream/dispatcher.ts';
import { collect } from '../support/collect.ts';
import { chunksOf } from '../support/drive-provider.ts';
import { sendJson, startEventStream, startFakeUpstream, type FakeUpstream } from '../../src/testing/fake-upstream.ts';
import { rendered } from './provider-fixtures.ts';
import * as messages from './messages-origin-fixtures.ts';
import { CODEX_BODY, eventStreamText, origin, originRequest, RICH_ANSWER, RICH_EVENTS, UNTRANSLATABLE } from './responses-origin-fixtures.ts';

describe('the refusal of a provider that receives the chat translation', () => {
  const providers = {
    'openai (translate)': createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1' }),
    anthropic: createAnthropicProvider({ baseUrl: 'http://127.0.0.1:9/v1' }),
    demo: createDemoProvider(),
  };
  for (const [name, provider] of Object.entries(providers)) {
    test(`${name}: the origin's untranslatable 400; null for a translatable origin and for a chat request`, () => {
      assert.equal(provider.refusal?.(originRequest(origin({ untranslatable: UNTRANSLATABLE }))), UNTRANSLATABLE);
      assert.equal(provider.refusal?.(originRequest(origin())), null);
      assert.equal(provider.refusal?.({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 10 }), null);
    });
  }

  test('openai and demo refuse only door requests; passthrough mode too', () => {
    assert.equal(providers['openai (translate)'].refusesOnlyDoorRequests, true);
    assert.equal(providers.demo.refusesOnlyDoorRequests, true);
    assert.equal(createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1', responses: 'passthrough' }).refusesOnlyDoorRequests, true);
  });

  test('passthrough mode still receives the translation of a Messages request, and refuses what it cannot say', () => {
    const provider = createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1', responses: 'passthrough' });
    const request = messages.originRequest(messages.origin({ untranslatable: messages.UNTRANSLATABLE }));
    assert.equal(provider.refusal?.(request), messages.UNTRANSLATABLE);
    assert.equal(provider.codec.endpoint?.(request), undefined);
  });
});

describe('routing and dispatch of a Responses request', () => {
  let chat: FakeUpstream;
  let responses: FakeUpstream;
  const CHAT_ANSWER = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
  before(async () => {
    chat = await startFakeUpstream((_req, res) => sendJson(res, 200, CHAT_ANSWER));
    responses = await startFakeUpstream((req, res) => {
      if (req.headers['accept'] !== 'text/event-stream') return sendJson(res, 200, RICH_ANSWER);
      startEventStream(res);
      res.end(eventStreamText(RICH_EVENTS));
    });
  });
  after(async () => {
    await chat.close();
    await responses.close();
  });
  beforeEach(() => {
    chat.received.length = 0;
    responses.received.length = 0;
  });

  /** How often each provider's refusal was asked. */
  const asked: Record<string, number> = {};

  function routes(): ReturnType<typeof createAliasTargets> {
    const config = parseConfig(
      {
        dataDir: '/tmp/portcullis-responses-refusal',
        providers: {
          chat: { type: 'openai', baseUrl: chat.baseUrl, retry: { maxAttempts: 1 } },
          resp: { type: 'openai', baseUrl: responses.baseUrl, retry: { maxAttempts: 1 }, responses: 'passthrough' },
          demo: { type: 'demo' },
        },
        aliases: {
          mixed: { maxOutputTokens: 8192, targets: [{ provider: 'chat', model: 'chat-up' }, { provider: 'resp', model: 'resp-up', priority: 1 }] },
          'chat-only': { targets: [{ provider: 'chat', model: 'chat-up' }, { provider: 'demo', model: 'echo', priority: 1 }] },
        },
        auto: { default: 'mixed' },
      },
      null,
      '/tmp',
    );
    for (const name of Object.keys(config.providers)) asked[name] = 0;
    const bindings = new Map(
      Object.entries(config.providers).map(([name, p]) => {
        const binding = createProviderBinding(p, undefined);
        const refusal = binding.provider.refusal;
        assert.ok(refusal !== undefined);
        const counted = { ...binding.provider, refusal: (r: ChatRequest) => ((asked[name] = (asked[name] ?? 0) + 1), refusal(r)) } as typeof binding.provider;
        return [name, { ...binding, provider: counted }];
      }),
    );
    return createAliasTargets(config, bindings);
  }

  test('mixed alias: the chat-only target is skipped for what it cannot say; the Responses target gets the client body, capped', async () => {
    const plan = routes().plan('mixed', originRequest(origin({ untranslatable: UNTRANSLATABLE }), { model: 'mixed', stream: false, max_tokens: 100000 }));
    const attempts: AttemptRecord[] = [];
    const { completion, target } = await dispatchCompletion(plan.targets, { requestId: 'req_1', signal: new AbortController().signal, random: () => 0, onAttempt: (a) => attempts.push(a) });
    assert.equal(target.id, 'resp/resp-up');
    assert.deepEqual(attempts, [
      { targetId: 'chat/chat-up', attempt: 1, outcome: 'skipped_unsupported', code: 'unsupported_parameter', param: 'input[2]' },
      { targetId: 'resp/resp-up', attempt: 1, outcome: 'ok' },
    ]);
    assert.equal(chat.received.length, 0);
    assert.equal(responses.received[0]?.url, '/v1/responses');
    const sent = JSON.parse(responses.received[0]?.text ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(sent), Object.keys(CODEX_BODY).filter((k) => k !== 'stream'));
    assert.equal(sent['model'], 'resp-up');
    assert.equal(sent['max_output_tokens'], 8192);
    assert.deepEqual(sent['input'], CODEX_BODY['input']);
    assert.equal(completion.choices[0]?.message.content, 'Let me look.');
  });

  test('streamed: the Responses target is committed on its first event; every event comes through as a carrier', async () => {
    const plan = routes().plan('mixed', originRequest(origin({ untranslatable: UNTRANSLATABLE }), { model: 'mixed', stream: true, max_tokens: 100000 }));
    const { stream, target } = await dispatchStream(plan.targets, { requestId: 'req_3', signal: new AbortController().signal, random: () => 0 });
    assert.equal(target.id, 'resp/resp-up');
    const chunks = await collect(chunksOf(stream));
    assert.deepEqual(
      chunks.map((c) => rawEvent(c)?.data),
      RICH_EVENTS.map((e) => e.data),
    );
    assert.equal(chat.received.length, 0);
    assert.equal(JSON.parse(responses.received[0]?.text ?? '{}').stream, true);
  });

  test('a translatable Responses request goes to the first target, the chat-only one, as the translation', async () => {
    const plan = routes().plan('mixed', originRequest(origin(), { model: 'mixed', stream: false, max_tokens: 100 }));
    const { target } = await dispatchCompletion(plan.targets, { requestId: 'req_2', signal: new AbortController().signal, random: () => 0 });
    assert.equal(target.id, 'chat/chat-up');
    assert.equal(responses.received.length, 0);
    assert.equal(chat.received[0]?.url, '/v1/chat/completions');
    assert.equal(chat.received[0]?.text, '{"model":"chat-up","messages":[{"role":"user","content":"List the files."}],"stream":false,"max_tokens":100}');
  });

  test('every target refuses: the client gets the 400, nothing is sent', () => {
    let refused: unknown;
    try {
      routes().plan('chat-only', originRequest(origin({ untranslatable: UNTRANSLATABLE }), { model: 'chat-only', stream: false }));
    } catch (error) {
      refused = error;
    }
    const why = UNTRANSLATABLE.message;
    assert.deepEqual(rendered(refused), {
      status: 400,
      body: {
        error: {
          message: `No upstream of model 'chat-only' can take this request. target 1 (openai): ${why} target 2 (demo): ${why}`,
          type: 'invalid_request_error',
          param: 'input[2]',
          code: 'unsupported_parameter',
        },
      },
      headers: {},
    });
    assert.equal(chat.received.length, 0);
  });

  test('a chat request: no target is asked; a Responses request: each target once', () => {
    routes().plan('mixed', { model: 'mixed', messages: [{ role: 'user', content: 'Hi' }] });
    routes().plan('chat-only', { model: 'chat-only', messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(asked, { chat: 0, resp: 0, demo: 0 });
    routes().plan('mixed', originRequest(origin(), { model: 'mixed' }));
    assert.deepEqual(asked, { chat: 1, resp: 1, demo: 0 });
  });
});

test('a provider that translates a Responses request names the tools it left out of the offer; one that passes it through names none', () => {
  const origin = { body: { model: 'a', input: 'hi' }, untranslatable: null, extraFields: [], leftOutTools: ['web_search', 'file_search'], toolNames: new Map() };
  const request: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  setResponsesOrigin(request, origin);
  const translating = createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1' });
  const passing = createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1', responses: ResponsesMode.Passthrough, responsesPassthrough: [] });
  assert.deepEqual(translating.requestNotes?.(request), { toolsLeftOut: 'web_search,file_search' });
  assert.deepEqual(createDemoProvider().requestNotes?.(request), { toolsLeftOut: 'web_search,file_search' });
  assert.equal(passing.requestNotes?.(request), undefined);
  assert.equal(translating.requestNotes?.({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), undefined);
});
