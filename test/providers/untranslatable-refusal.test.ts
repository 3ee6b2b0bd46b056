// A Messages client's request at each provider type, through routing and the
// dispatcher against fake upstreams: what the translation cannot say is
// refused by an OpenAI-compatible (or Azure, or demo) target, which is then
// skipped; an Anthropic target takes the client's own body; a chat request is
// never asked about (its plan stays free of refusal work).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import type { InvalidRequestError } from '../../src/errors/api-error.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createProviderBinding } from '../../src/providers/provider-factories.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.ts';
import { createAliasTargets } from '../../src/routing/alias-targets.ts';
import { rawEvent } from '../../src/chat/messages-origin.ts';
import { dispatchCompletion, dispatchStream, type AttemptRecord } from '../../src/upstream/dispatcher.ts';
import { collect } from '../support/collect.ts';
import { chunksOf } from '../support/drive-provider.ts';
import { startEventStream, startFakeUpstream, sendJson, type FakeUpstream } from '../../src/testing/fake-upstream.ts';
import { CLAUDE_CODE_BODY, eventStreamText, origin, originRequest, RICH_ANSWER, RICH_EVENTS, UNTRANSLATABLE } from './messages-origin-fixtures.ts';
import { rendered } from './provider-fixtures.ts';

const CHAT_ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

describe('the refusal of a provider that receives the translation', () => {
  const providers = {
    openai: createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1' }),
    demo: createDemoProvider(),
  };
  for (const [name, provider] of Object.entries(providers)) {
    test(`${name}: the origin's untranslatable 400; null for a translatable origin and for a chat request`, () => {
      assert.equal(provider.refusesOnlyDoorRequests, true);
      assert.equal(provider.refusal?.(originRequest(origin({ untranslatable: UNTRANSLATABLE }))), UNTRANSLATABLE);
      assert.equal(provider.refusal?.(originRequest(origin())), null);
      assert.equal(provider.refusal?.({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }), null);
    });
  }
});

describe('routing and dispatch of a Messages request', () => {
  let openai: FakeUpstream;
  let claude: FakeUpstream;
  before(async () => {
    openai = await startFakeUpstream((_req, res) => sendJson(res, 200, CHAT_ANSWER));
    claude = await startFakeUpstream((req, res) => {
      if (req.headers['accept'] !== 'text/event-stream') return sendJson(res, 200, RICH_ANSWER);
      startEventStream(res);
      res.end(eventStreamText(RICH_EVENTS));
    });
  });
  after(async () => {
    await openai.close();
    await claude.close();
  });
  beforeEach(() => {
    openai.received.length = 0;
    claude.received.length = 0;
  });

  /** How often each provider's refusal was asked. */
  const asked = { gpt: 0, claude: 0 };

  function routes(): ReturnType<typeof createAliasTargets> {
    const config = parseConfig(
      {
        dataDir: '/tmp/portcullis-messages-refusal',
        providers: {
          gpt: { type: 'openai', baseUrl: openai.baseUrl, retry: { maxAttempts: 1 } },
          claude: { type: 'anthropic', baseUrl: claude.baseUrl, retry: { maxAttempts: 1 }, messagesPassthrough: ['speed'] },
        },
        aliases: {
          mixed: { maxOutputTokens: 8192, targets: [{ provider: 'gpt', model: 'gpt-up' }, { provider: 'claude', model: 'claude-up', priority: 1 }] },
          'gpt-only': { targets: [{ provider: 'gpt', model: 'gpt-up' }, { provider: 'gpt', model: 'gpt-2', priority: 1 }] },
        },
        auto: { default: 'mixed' },
      },
      null,
      '/tmp',
    );
    asked.gpt = 0;
    asked.claude = 0;
    const bindings = new Map(
      Object.entries(config.providers).map(([name, p]) => {
        const binding = createProviderBinding(p, undefined);
        const refusal = binding.provider.refusal;
        assert.ok(refusal !== undefined);
        const counted = { ...binding.provider, refusal: (r: ChatRequest) => (asked[name as keyof typeof asked]++, refusal(r)) } as typeof binding.provider;
        return [name, { ...binding, provider: counted }];
      }),
    );
    return createAliasTargets(config, bindings);
  }

  const messagesRequest = (untranslatable: InvalidRequestError | null): ChatRequest =>
    originRequest(origin({ untranslatable }), { model: 'mixed', stream: false, max_tokens: 128000 });

  test('mixed alias: the OpenAI-compatible target is skipped for what it cannot say; the Anthropic target gets the client body, clamped', async () => {
    const plan = routes().plan('mixed', messagesRequest(UNTRANSLATABLE));
    const attempts: AttemptRecord[] = [];
    const { completion, target } = await dispatchCompletion(plan.targets, {
      requestId: 'req_1',
      signal: new AbortController().signal,
      random: () => 0,
      onAttempt: (a) => attempts.push(a),
    });
    assert.equal(target.id, 'claude/claude-up');
    assert.deepEqual(attempts, [
      { targetId: 'gpt/gpt-up', attempt: 1, outcome: 'skipped_unsupported', code: 'unsupported_parameter', param: 'messages[2].content[0]' },
      { targetId: 'claude/claude-up', attempt: 1, outcome: 'ok' },
    ]);
    assert.equal(openai.received.length, 0);
    assert.equal(claude.received.length, 1);
    const sent = JSON.parse(claude.received[0]?.text ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(sent), Object.keys(CLAUDE_CODE_BODY).filter((k) => k !== 'stream'));
    assert.equal(sent['model'], 'claude-up');
    assert.equal(sent['max_tokens'], 8192);
    assert.deepEqual(sent['messages'], CLAUDE_CODE_BODY['messages']);
    assert.equal(completion.choices[0]?.message.content, 'Portcullis is a gateway.');
  });

  test('streamed: the Anthropic target is committed on its first event; every event comes through as a carrier', async () => {
    const request = originRequest(origin({ untranslatable: UNTRANSLATABLE }), { model: 'mixed', stream: true, max_tokens: 128000 });
    const plan = routes().plan('mixed', request);
    const { stream, target } = await dispatchStream(plan.targets, { requestId: 'req_3', signal: new AbortController().signal, random: () => 0 });
    assert.equal(target.id, 'claude/claude-up');
    const chunks = await collect(chunksOf(stream));
    assert.deepEqual(
      chunks.map((c) => rawEvent(c)?.data),
      RICH_EVENTS.map((e) => e.data),
    );
    assert.equal(openai.received.length, 0);
    const sent = JSON.parse(claude.received[0]?.text ?? '') as Record<string, unknown>;
    assert.equal(sent['stream'], true);
    assert.deepEqual(Object.keys(sent), Object.keys(CLAUDE_CODE_BODY));
  });

  test('a translatable Messages request goes to the OpenAI-compatible target as the translation', async () => {
    const plan = routes().plan('mixed', messagesRequest(null));
    const { target } = await dispatchCompletion(plan.targets, { requestId: 'req_2', signal: new AbortController().signal, random: () => 0 });
    assert.equal(target.id, 'gpt/gpt-up');
    assert.equal(claude.received.length, 0);
    assert.equal(openai.received[0]?.text, '{"model":"gpt-up","messages":[{"role":"user","content":"What is Portcullis?"}],"stream":false,"max_tokens":8192}');
  });

  test('every target refuses: the client gets the 400, nothing is sent', () => {
    const request = originRequest(origin({ untranslatable: UNTRANSLATABLE }), { model: 'gpt-only', stream: false });
    let refused: unknown;
    try {
      routes().plan('gpt-only', request);
    } catch (error) {
      refused = error;
    }
    const why = UNTRANSLATABLE.message;
    assert.deepEqual(rendered(refused), {
      status: 400,
      body: {
        error: {
          message: `No upstream of model 'gpt-only' can take this request. target 1 (openai): ${why} target 2 (openai): ${why}`,
          type: 'invalid_request_error',
          param: 'messages[2].content[0]',
          code: 'unsupported_parameter',
        },
      },
      headers: {},
    });
    assert.equal(openai.received.length, 0);
  });

  test('a chat request on an OpenAI-only alias: no target is asked (no refusal, no early upstream request)', () => {
    const plan = routes().plan('gpt-only', { model: 'gpt-only', messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(asked, { gpt: 0, claude: 0 });
    assert.equal(plan.targets.length, 2);
    // The same alias asks for a Messages request, each target once.
    routes().plan('gpt-only', originRequest(origin(), { model: 'gpt-only' }));
    assert.deepEqual(asked, { gpt: 2, claude: 0 });
  });
});
