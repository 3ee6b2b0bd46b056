// One table of cases every HTTP provider type must pass, built-in or added by
// a host (../api/providers.ts): the provider is checked from a config, as the
// gateway checks it, built as the gateway builds it, and driven through the
// gateway's own exchange loop (the code every request's attempts run through)
// against a fake upstream on port 0 that speaks the type's wire format
// (./provider-dialects.ts). Each case asserts exact values: the text and its
// order, the finish reason, the usage, the status and code of each failure,
// the model, the token maximum and the key the upstream received.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { ProviderAdapter } from '../api/providers.ts';
import { buildUpstreamRequest } from '../chat/upstream-request.ts';
import type { ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import { parseConfig } from '../config/config-parser.ts';
import { createProviderBinding } from '../providers/provider-factories.ts';
import type { ProviderBinding } from '../routing/alias-targets.ts';
import { ProviderKind, type HttpProvider, type UpstreamCall } from '../upstream/provider.ts';
import { exchangeCompletion } from '../upstream/upstream-exchange.ts';
import { openExchangeStream } from '../upstream/upstream-stream.ts';
import { sendJson, startEventStream, startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';
import { ANTHROPIC_DIALECT, OPENAI_DIALECT, type ScriptedAnswer, type UpstreamDialect } from './provider-dialects.ts';

/** What the contract runs against: a host's adapter with its dialect, or a built-in HTTP type. */
export interface ProviderContractSubject {
  /** A host's provider type; `dialect` is then required. */
  readonly adapter?: ProviderAdapter;
  /** A built-in HTTP type, when no adapter is given. */
  readonly type?: 'openai' | 'anthropic';
  /** The provider's config settings besides "type", "baseUrl" and "apiKeyEnv", which the contract sets. */
  readonly config?: Readonly<Record<string, unknown>>;
  /** How the fake upstream speaks; default the built-in type's. */
  readonly dialect?: UpstreamDialect;
}

const KEY = 'sk-contract-0123456789';
const KEY_ENV = 'PORTCULLIS_CONTRACT_KEY';
const UPSTREAM_MODEL = 'contract-model-1';
const PIECES = ['Hel', 'lo, ', 'world'] as const;
const USAGE = { input: 11, output: 7 } as const;
const PLAIN: ChatRequest = { model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64 };
const TEXT_ANSWER: ScriptedAnswer = { id: 'answer-1', model: UPSTREAM_MODEL, text: PIECES.join(''), toolCall: null, finish: 'stop', usage: USAGE };
const TOOL = { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } } as const;
const TOOL_REQUEST: ChatRequest = {
  ...PLAIN,
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
  tools: [{ type: 'function', function: { name: TOOL.name, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
};

type Reply = (res: ServerResponse) => void;

/**
 * Registers the table as node:test tests under `describe(name)`. The config
 * is checked with parseConfig (a host type through its adapter), so a
 * subject whose config the gateway refuses fails in before().
 */
export function runProviderAdapterContract(name: string, subject: ProviderContractSubject): void {
  const dialect = subject.dialect ?? (subject.type === 'anthropic' ? ANTHROPIC_DIALECT : subject.type === 'openai' ? OPENAI_DIALECT : undefined);
  if (dialect === undefined) throw new TypeError('runProviderAdapterContract: give `type` ("openai" or "anthropic") or an `adapter` with its `dialect`.');
  const type = subject.adapter?.type ?? subject.type;

  describe(`provider adapter contract: ${name}`, () => {
    let upstream: FakeUpstream;
    let binding: ProviderBinding;
    let provider: HttpProvider;
    let reply: Reply = (res) => sendJson(res, 500, 'no reply scripted');

    before(async () => {
      upstream = await startFakeUpstream((_req, res) => reply(res));
      const config = parseConfig(
        {
          providers: { contract: { type, baseUrl: upstream.baseUrl, apiKeyEnv: KEY_ENV, ...subject.config } },
          aliases: { 'contract-alias': { provider: 'contract', model: UPSTREAM_MODEL } },
        },
        null,
        process.cwd(),
        subject.adapter === undefined ? {} : { providerTypes: [subject.adapter] },
      );
      const checked = config.providers['contract'];
      assert.ok(checked !== undefined);
      binding = createProviderBinding(checked, KEY);
      assert.equal(binding.provider.kind, ProviderKind.Http, 'the contract is for providers with an upstream');
      provider = binding.provider as HttpProvider;
    });
    after(() => upstream.close());

    const call = (request: ChatRequest): UpstreamCall => ({ request, requestId: 'req_contract', signal: new AbortController().signal });
    const streamed = (request: ChatRequest): Promise<ChatCompletionChunk[]> => collectStream(provider, call(request));
    const answerWith = (status: number, body: string): void => {
      reply = (res) => sendJson(res, status, body);
    };
    const streamWith = (events: readonly string[]): void => {
      reply = (res) => {
        startEventStream(res);
        for (const event of events) res.write(event);
        res.end();
      };
    };
    const lastBody = (): unknown => JSON.parse(upstream.received.at(-1)?.text ?? 'null');

    test('a whole answer: its text, finish_reason and usage', async () => {
      answerWith(200, dialect.answer(TEXT_ANSWER));
      const answer = await exchangeCompletion(provider, call(PLAIN));
      assert.equal(answer.choices.length, 1);
      assert.equal(answer.choices[0]?.message.content, 'Hello, world');
      assert.deepEqual(answer.choices[0]?.message.tool_calls, []);
      assert.equal(answer.choices[0]?.finish_reason, 'stop');
      assert.deepEqual([answer.usage?.prompt_tokens, answer.usage?.completion_tokens, answer.usage?.total_tokens], [11, 7, 18]);
    });

    test('a streamed answer: the text pieces in order, then finish_reason, and the usage', async () => {
      streamWith(dialect.stream(TEXT_ANSWER, PIECES).events);
      const chunks = await streamed(PLAIN);
      const texts = chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? '')).filter((t) => t !== '');
      assert.deepEqual(texts, [...PIECES]);
      const finishAt = chunks.findIndex((c) => c.choices.some((choice) => choice.finish_reason !== null));
      assert.ok(finishAt >= 0, 'some chunk carries a finish_reason');
      assert.equal(chunks[finishAt]?.choices[0]?.finish_reason, 'stop');
      assert.ok(chunks.slice(finishAt + 1).every((c) => c.choices.every((choice) => (choice.delta.content ?? '') === '')), 'no text after the finish');
      const usage = chunks.map((c) => c.usage).filter((u) => u !== undefined && u !== null).at(-1);
      assert.deepEqual([usage?.prompt_tokens, usage?.completion_tokens, usage?.total_tokens], [11, 7, 18]);
    });

    test('a tool call: its id, name and arguments, finish_reason tool_calls', async () => {
      answerWith(200, dialect.answer({ ...TEXT_ANSWER, text: null, toolCall: TOOL, finish: 'tool_calls' }));
      const answer = await exchangeCompletion(provider, call(TOOL_REQUEST));
      const calls = answer.choices[0]?.message.tool_calls ?? [];
      assert.equal(calls.length, 1);
      assert.deepEqual([calls[0]?.id, calls[0]?.type, calls[0]?.function.name], [TOOL.id, 'function', TOOL.name]);
      assert.deepEqual(JSON.parse(calls[0]?.function.arguments ?? 'null'), TOOL.arguments);
      assert.equal(answer.choices[0]?.finish_reason, 'tool_calls');
    });

    test("an upstream 400: the client's 400 with the upstream's words", async () => {
      answerWith(400, dialect.error(400, 'messages: too long for this model'));
      const error = await rejection(exchangeCompletion(provider, call(PLAIN)));
      assert.deepEqual([error.status, error.code, error.message], [400, 'upstream_rejected_request', 'messages: too long for this model']);
    });

    test('an upstream 401: 502 upstream_auth_failed, never blaming the client', async () => {
      answerWith(401, dialect.error(401, 'bad key'));
      const error = await rejection(exchangeCompletion(provider, call(PLAIN)));
      assert.deepEqual([error.status, error.code], [502, 'upstream_auth_failed']);
    });

    test('an upstream 500: 502 upstream_error', async () => {
      answerWith(500, dialect.error(500, 'overloaded'));
      const error = await rejection(exchangeCompletion(provider, call(PLAIN)));
      assert.deepEqual([error.status, error.code], [502, 'upstream_error']);
    });

    test('a stream cut before it finished: 502 upstream_stream_truncated', async () => {
      const { events, unfinished } = dialect.stream(TEXT_ANSWER, PIECES);
      streamWith(events.slice(0, unfinished));
      const error = await rejection(streamed(PLAIN));
      assert.deepEqual([error.status, error.code], [502, 'upstream_stream_truncated']);
    });

    test('a request the type cannot express: a 400 naming the parameter, before any upstream call', { skip: dialect.refused === null ? 'the type refuses no plain chat request' : false }, async () => {
      const refused = dialect.refused;
      assert.ok(refused !== null);
      const sent = upstream.count;
      const request = { ...PLAIN, ...refused.request } as ChatRequest;
      const error = provider.refusal?.(request) ?? (await rejection(exchangeCompletion(provider, call(request))));
      assert.deepEqual([error.status, error.param], [400, refused.param]);
      assert.equal(upstream.count, sent);
    });

    test("the target's model and token maximum reach the upstream, not the client's alias", async () => {
      answerWith(200, dialect.answer(TEXT_ANSWER));
      const client: ChatRequest = { model: 'contract-alias', messages: PLAIN.messages, max_completion_tokens: 50 };
      const { request } = buildUpstreamRequest(client, { model: UPSTREAM_MODEL, maxOutputTokens: null, maxTokensParam: binding.maxTokensParam });
      await exchangeCompletion(provider, call(request));
      assert.equal(dialect.requestedModel(lastBody()), UPSTREAM_MODEL);
      assert.equal(dialect.requestedMaxTokens(lastBody()), 50);
    });

    test('the upstream key goes in its header, and only there', async () => {
      answerWith(200, dialect.answer(TEXT_ANSWER));
      await exchangeCompletion(provider, call(PLAIN));
      const received = upstream.received.at(-1);
      const [header, value] = dialect.keyHeader(KEY);
      assert.equal(received?.headers[header], value);
      const elsewhere = Object.entries(received?.headers ?? {}).filter(([h, v]) => h !== header && String(v).includes(KEY));
      assert.deepEqual(elsewhere, []);
      assert.equal(received?.text.includes(KEY), false);
    });
  });
}

/** Every chunk of one streamed exchange. */
async function collectStream(provider: HttpProvider, call: UpstreamCall): Promise<ChatCompletionChunk[]> {
  const stream = openExchangeStream(provider, call);
  const chunks: ChatCompletionChunk[] = [];
  try {
    for (let batch = await stream.next(); batch !== null; batch = await stream.next()) chunks.push(...batch);
  } finally {
    stream.close();
  }
  return chunks;
}

interface Failure {
  status: unknown;
  code: unknown;
  param: unknown;
  message: unknown;
}

async function rejection(promise: Promise<unknown>): Promise<Failure> {
  try {
    await promise;
  } catch (error) {
    return error as Failure;
  }
  assert.fail('expected a rejection');
}
