// Per-key policy through the real gateway (src/gateway/key-policy.ts): expiry
// (401), allowed aliases (403), requests/tokens per minute, concurrency and
// token budgets (429 with Retry-After and OpenAI's x-ratelimit-* headers),
// settlement with the upstream's usage, streamed usage included. A fake
// upstream on loopback reports the usage; an injected clock makes refill and
// budget periods exact.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import type { KeySettingsInput } from '../../src/keys/key-settings.ts';
import { reserveRequest } from '../../src/limits/reservation.ts';
import { openStream, postChat, request, sseData, startFakeUpstream, startGateway, type FakeUpstream, type RawResponse, type TestGateway } from './harness.ts';
import { eventually, within } from '../support/eventually.ts';
import { systemScheduler } from '../../src/time/scheduler.ts';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
let now = NOON;
let upstream: FakeUpstream;
let gw: TestGateway;
let keyCount = 0;

/** The usage the fake upstream reports in its next answers (streamed or not). */
let upstreamUsage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };

function completion(): unknown {
  return {
    id: 'chatcmpl-kp',
    object: 'chat.completion',
    created: 1_720_000_000,
    model: 'upstream-model-1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Fine.' }, finish_reason: 'stop' }],
    usage: upstreamUsage,
  };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
  id: 'chatcmpl-kps',
  object: 'chat.completion.chunk',
  created: 1_720_000_001,
  model: 'upstream-model-1',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function answer(_req: unknown, res: http.ServerResponse, body: Record<string, unknown>): void {
  if (body['stream'] === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Fi' }))}\n\n`);
    res.write(`data: ${JSON.stringify(chunk({ content: 'ne.' }, 'stop'))}\n\n`);
    res.write(`data: ${JSON.stringify({ ...chunk({}), choices: [], usage: upstreamUsage })}\n\n`);
    res.end('data: [DONE]\n\n');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion()));
}

before(async () => {
  upstream = await startFakeUpstream((req, res) => answer(req, res, req.body as Record<string, unknown>));
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl, scheduler: { ...systemScheduler, now: () => now } });
});
after(async () => {
  await gw.close();
  await upstream.close();
});
beforeEach(() => {
  now = NOON;
  upstreamUsage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
  upstream.requests.length = 0;
  upstream.handle = (req, res) => answer(req, res, req.body as Record<string, unknown>);
});

/** A fresh key per test: limiter state is per key id. */
async function newKey(settings: KeySettingsInput = {}): Promise<{ id: string; key: string }> {
  const issued = await gw.state.keys.create(`policy-${++keyCount}`, settings);
  return { id: issued.record.id, key: issued.key };
}

function chat(key: string, body: unknown): Promise<RawResponse> {
  return postChat(gw, body, { authorization: `Bearer ${key}` });
}

function models(key: string): Promise<RawResponse> {
  return request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${key}` } });
}

/**
 * Settlement runs on the server's 'close' of the answer, which can come just
 * after the client read the last byte; the HTTP shell drops the request from
 * inFlight in the same 'close' emit, so once inFlight is 0 the permit is settled.
 */
async function settled(): Promise<void> {
  await eventually(() => gw.gateway.inFlight === 0, 'no request in flight');
}

/** The x-ratelimit-* and retry headers of an answer, to compare whole. */
function limitHeaders(res: RawResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (name.startsWith('x-ratelimit-') || name === 'retry-after' || name === 'retry-after-ms') out[name] = String(value);
  }
  return out;
}

const PROMPT = [{ role: 'user', content: 'Hello tokens' }];
const fake = (extra: Record<string, unknown> = {}) => ({ model: 'service-fake', messages: PROMPT, max_tokens: 100, ...extra });
/** The gateway's reservation for `fake()`: the prompt bound plus the 100 output tokens (src/limits/reservation.ts). */
const ESTIMATE = reserveRequest({ messages: PROMPT } as Pick<ChatRequest, 'messages'>, 100, { imageTokens: 2000 }, []).tokens;

test('the estimate used below is 64 + (8 + 4 + 12) + 100', () => {
  assert.equal(ESTIMATE, 188);
});

// --- expiry ---

test('a key whose expiry was set in the past gets 401 invalid_api_key, on chat and on /v1/models', async () => {
  const { id, key } = await newKey();
  assert.equal((await chat(key, fake())).status, 200);
  await gw.state.keys.update(id, { expiresAt: '2020-01-01T00:00:00Z' });
  const expected = {
    error: {
      message: "This API key expired at 2020-01-01T00:00:00.000Z; ask the gateway's operator for a new key.",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  };
  const res = await chat(key, fake());
  assert.equal(res.status, 401);
  assert.deepEqual(res.json(), expected);
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="portcullis"');
  // The operator's line names the expired key that is still in use.
  const lineOf = (): Record<string, unknown> | undefined => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === res.headers['x-request-id']);
  await eventually(() => lineOf() !== undefined, 'the refused request logged');
  assert.equal(lineOf()?.['keyId'], id);
  assert.equal(lineOf()?.['error'], 'invalid_api_key');
  const listed = await models(key);
  assert.equal(listed.status, 401);
  assert.deepEqual(listed.json(), expected);
  // Only the request before the expiry reached the upstream.
  assert.equal(upstream.requests.length, 1);
});

test('expiry follows the injected clock: valid one millisecond before, 401 at the instant', async () => {
  // Created in the future of the real clock (the store refuses a past expiry), whole seconds.
  const expiresAtMs = Math.ceil((Date.now() + 400 * 86_400_000) / 1000) * 1000;
  const expiresAt = new Date(expiresAtMs).toISOString();
  const { key } = await newKey({ expiresAt });
  now = expiresAtMs - 1;
  assert.equal((await chat(key, fake())).status, 200);
  assert.equal((await models(key)).status, 200);
  now = expiresAtMs;
  const res = await chat(key, fake());
  assert.equal(res.status, 401);
  assert.deepEqual(res.json(), {
    error: { message: `This API key expired at ${expiresAt}; ask the gateway's operator for a new key.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
  });
  assert.equal((await models(key)).status, 401);
});

// --- allowed aliases ---

test('allowedAliases: the allowed alias answers; another alias is 403 model_not_allowed', async () => {
  const { key } = await newKey({ allowedAliases: ['service-fake'] });
  const ok = await chat(key, fake());
  assert.equal(ok.status, 200);
  assert.equal((ok.json() as { model: string }).model, 'service-fake');
  const res = await chat(key, { model: 'service-chat', messages: PROMPT });
  assert.equal(res.status, 403);
  assert.deepEqual(res.json(), {
    error: { message: "This API key may not use 'service-chat'. It may use: service-fake.", type: 'permission_error', param: 'model', code: 'model_not_allowed' },
  });
  assert.equal(upstream.requests.length, 1);
});

test('allowedAliases: an unknown model is 404 model_not_found naming only what this key may use, as /v1/models lists it', async () => {
  const { key } = await newKey({ allowedAliases: ['service-fake'] });
  const res = await chat(key, { model: 'gpt-4o', messages: PROMPT });
  assert.equal(res.status, 404);
  assert.deepEqual(res.json(), {
    error: {
      message: "The model 'gpt-4o' does not exist or you do not have access to it. Models this API key may use: service-fake, service-auto.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    },
  });
  assert.deepEqual(((await models(key)).json() as { data: Array<{ id: string }> }).data.map((m) => m.id), ['service-fake', 'service-auto']);
  assert.equal(upstream.requests.length, 0);
});

test('allowedAliases: service-auto resolving to a disallowed alias is 403 naming the resolution', async () => {
  const { key } = await newKey({ allowedAliases: ['service-fake'] });
  const res = await chat(key, { model: 'service-auto', messages: PROMPT });
  assert.equal(res.status, 403);
  assert.deepEqual(res.json(), {
    error: {
      message: "This API key may not use 'service-chat' (service-auto resolved to it). It may use: service-fake.",
      type: 'permission_error',
      param: 'model',
      code: 'model_not_allowed',
    },
  });
});

test('allowedAliases: service-auto resolving to an allowed alias answers', async () => {
  const { key } = await newKey({ allowedAliases: ['service-chat'] });
  const res = await chat(key, { model: 'service-auto', messages: PROMPT });
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-portcullis-route'], 'service-chat; reason=default');
  assert.equal((res.json() as { model: string }).model, 'service-chat');
});

test('allowedAliases: /v1/models lists the allowed aliases and service-auto only', async () => {
  const open = await newKey();
  const all = (await models(open.key)).json() as { data: Array<{ id: string }> };
  assert.deepEqual(all.data.map((m) => m.id), ['service-chat', 'service-fake', 'service-auto']);
  const limited = await newKey({ allowedAliases: ['service-fake'] });
  const res = await models(limited.key);
  assert.equal(res.status, 200);
  assert.deepEqual(res.json(), {
    object: 'list',
    data: [
      { id: 'service-fake', object: 'model', created: 1_700_000_000, owned_by: 'portcullis', kind: 'chat' },
      { id: 'service-auto', object: 'model', created: 1_700_000_000, owned_by: 'portcullis', kind: 'chat' },
    ],
  });
});

// --- requests per minute ---

test('requestsPerMinute 2: remaining 1 then 0, the third is 429 with Retry-After; refill after 30 s', async () => {
  const { key } = await newKey({ limits: { requestsPerMinute: 2 } });
  const first = await chat(key, fake());
  assert.equal(first.status, 200);
  // One request takes 30 s to refill at 2 per minute; full again after 30 s.
  assert.deepEqual(limitHeaders(first), { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '30s' });
  const second = await chat(key, fake());
  assert.equal(second.status, 200);
  assert.deepEqual(limitHeaders(second), { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s' });

  now += 10_000;
  const third = await chat(key, fake());
  assert.equal(third.status, 429);
  assert.deepEqual(third.json(), {
    error: {
      message: 'Rate limit reached for requests per minute on this API key: limit 2. Try again in 20s.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    },
  });
  // 10 s after the second: a third of a request refilled, 20 s to go, 50 s to full.
  assert.deepEqual(limitHeaders(third), {
    'x-ratelimit-limit-requests': '2',
    'x-ratelimit-remaining-requests': '0',
    'x-ratelimit-reset-requests': '50s',
    'retry-after': '20',
    'retry-after-ms': '20000',
  });
  assert.equal(upstream.requests.length, 2);

  // The refusal charged nothing: exactly 20 s later one request is back.
  now += 19_999;
  assert.equal((await chat(key, fake())).status, 429);
  now += 1;
  const fourth = await chat(key, fake());
  assert.equal(fourth.status, 200);
  assert.deepEqual(limitHeaders(fourth), { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s' });
  assert.equal(upstream.requests.length, 3);
});

// --- tokens per minute ---

// 60000 tokens per minute refill one token per millisecond: a deficit of N tokens resets in N ms.
const TPM = 60_000;

test('tokensPerMinute: the estimate is charged, then settled with the upstream usage', async () => {
  const { key } = await newKey({ limits: { tokensPerMinute: TPM } });
  const first = await chat(key, fake());
  assert.equal(first.status, 200);
  assert.deepEqual(limitHeaders(first), {
    'x-ratelimit-limit-tokens': '60000',
    'x-ratelimit-remaining-tokens': String(TPM - ESTIMATE),
    'x-ratelimit-reset-tokens': `${ESTIMATE}ms`,
  });
  await settled();
  // Settled to the upstream's 25 tokens: the next estimate is charged on top of those.
  const second = await chat(key, fake());
  assert.equal(second.status, 200);
  assert.deepEqual(limitHeaders(second), {
    'x-ratelimit-limit-tokens': '60000',
    'x-ratelimit-remaining-tokens': String(TPM - 25 - ESTIMATE),
    'x-ratelimit-reset-tokens': `${25 + ESTIMATE}ms`,
  });
  await settled();
  // An answer using more than its estimate (within limits.maxChargeMultiple, 2, times it) is settled upward.
  upstreamUsage = { prompt_tokens: 100, completion_tokens: 200, total_tokens: 300 };
  assert.ok(300 > ESTIMATE && 300 <= 2 * ESTIMATE);
  assert.equal((await chat(key, fake())).status, 200);
  await settled();
  const fourth = await chat(key, fake());
  assert.deepEqual(limitHeaders(fourth), {
    'x-ratelimit-limit-tokens': '60000',
    'x-ratelimit-remaining-tokens': String(TPM - 25 - 25 - 300 - ESTIMATE),
    'x-ratelimit-reset-tokens': `${350 + ESTIMATE}ms`,
  });
});

test('tokensPerMinute: a stream without include_usage still settles with the usage the gateway asked the upstream for', async () => {
  const { key } = await newKey({ limits: { tokensPerMinute: TPM } });
  upstreamUsage = { prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 };
  const streamed = await chat(key, fake({ stream: true }));
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers['content-type'], 'text/event-stream; charset=utf-8');
  assert.deepEqual(limitHeaders(streamed), {
    'x-ratelimit-limit-tokens': '60000',
    'x-ratelimit-remaining-tokens': String(TPM - ESTIMATE),
    'x-ratelimit-reset-tokens': `${ESTIMATE}ms`,
  });
  // The upstream was asked for usage; the client, which did not ask, gets none.
  assert.deepEqual((upstream.requests[0]!.body as Record<string, unknown>)['stream_options'], { include_usage: true });
  const frames = sseData(streamed.text);
  assert.equal(frames.at(-1), '[DONE]');
  for (const frame of frames.slice(0, -1)) assert.equal('usage' in (JSON.parse(frame) as object), false, frame);
  await settled();
  upstreamUsage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
  const next = await chat(key, fake());
  assert.deepEqual(limitHeaders(next), {
    'x-ratelimit-limit-tokens': '60000',
    'x-ratelimit-remaining-tokens': String(TPM - 40 - ESTIMATE),
    'x-ratelimit-reset-tokens': `${40 + ESTIMATE}ms`,
  });
});

test('tokensPerMinute: a request larger than the bucket left is 429 for tokens, with the wait for the estimate', async () => {
  // The reservation is 188 tokens.
  const { key } = await newKey({ limits: { tokensPerMinute: 300 } });
  // 300 per minute: one token per 200 ms. The first leaves 300 - 188 = 112, settled to 300 - 25 = 275.
  assert.equal((await chat(key, fake())).status, 200);
  await settled();
  upstreamUsage = { prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 };
  assert.equal((await chat(key, fake())).status, 200);
  await settled();
  // Level 275 - 200 = 75: the next 188 need 113 tokens, 22.6 s.
  const res = await chat(key, fake());
  assert.equal(res.status, 429);
  assert.deepEqual(res.json(), {
    error: {
      message: 'Rate limit reached for tokens per minute on this API key: limit 300. Try again in 22.6s.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    },
  });
  // Full again after 225 tokens, 45 s.
  assert.deepEqual(limitHeaders(res), {
    'x-ratelimit-limit-tokens': '300',
    'x-ratelimit-remaining-tokens': '75',
    'x-ratelimit-reset-tokens': '45s',
    'retry-after': '23',
    'retry-after-ms': '22600',
  });
});

// --- concurrency ---

test('concurrentRequests 1: a stream holds the slot, a second request is 429, the slot is free once the stream ends', async () => {
  const { key } = await newKey({ limits: { concurrentRequests: 1 } });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  upstream.handle = async (req, res) => {
    const body = req.body as Record<string, unknown>;
    if (body['stream'] !== true) return answer(req, res, body);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'slow' }))}\n\n`);
    await released;
    res.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`);
    res.end('data: [DONE]\n\n');
  };

  // The slow stream: wait for its headers (sent with the first event), keep reading.
  const slow = await openStream(gw, key, fake({ stream: true }));
  assert.equal(slow.status, 200);

  const refused = await chat(key, fake());
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.json(), {
    error: {
      message: 'Too many requests at once on this API key: limit 1. Try again when one finishes.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    },
  });
  // No per-minute limits: no x-ratelimit-* headers, only the retry hint.
  assert.deepEqual(limitHeaders(refused), { 'retry-after': '1', 'retry-after-ms': '1000' });
  assert.equal(upstream.requests.length, 1);

  release();
  const frames = sseData(await slow.body);
  assert.equal(frames.at(-1), '[DONE]');
  await settled();
  const freed = await chat(key, fake());
  assert.equal(freed.status, 200);
  assert.equal(upstream.requests.length, 2);
});

// --- token budget ---

test('tokenBudget: once spent, 429 insufficient_quota with Retry-After to the end of the UTC day', async () => {
  const { key } = await newKey({ limits: { tokenBudget: { tokens: 200, period: 'day' } } });
  now = Date.UTC(2026, 10, 22, 23, 59, 0);
  // Admitted while nothing is used (reserved 188 of 200); settled to the upstream's 250 tokens.
  upstreamUsage = { prompt_tokens: 50, completion_tokens: 200, total_tokens: 250 };
  const first = await chat(key, fake());
  assert.equal(first.status, 200);
  // A budget alone has no x-ratelimit-* headers (OpenAI has none for it).
  assert.deepEqual(limitHeaders(first), {});
  await settled();

  const res = await chat(key, fake());
  assert.equal(res.status, 429);
  assert.deepEqual(res.json(), {
    error: {
      message: 'This API key has spent its token budget of 200 tokens per day (used: 250). The budget resets at 2026-11-23T00:00:00.000Z.',
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    },
  });
  assert.deepEqual(limitHeaders(res), { 'retry-after': '60', 'retry-after-ms': '60000' });
  assert.equal(upstream.requests.length, 1);

  now = Date.UTC(2026, 10, 22, 23, 59, 59, 999);
  assert.equal((await chat(key, fake())).status, 429);
  now = Date.UTC(2026, 10, 23, 0, 0, 0);
  assert.equal((await chat(key, fake())).status, 200);
});

test('tokenBudget with a per-minute limit: the 429 carries both the budget wait and the x-ratelimit-* headers', async () => {
  const { key } = await newKey({ limits: { requestsPerMinute: 10, tokenBudget: { tokens: 200, period: 'month' } } });
  now = Date.UTC(2026, 10, 30, 23, 0, 0);
  upstreamUsage = { prompt_tokens: 50, completion_tokens: 200, total_tokens: 250 };
  assert.equal((await chat(key, fake())).status, 200);
  await settled();
  const res = await chat(key, fake());
  assert.equal(res.status, 429);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'insufficient_quota');
  assert.deepEqual(limitHeaders(res), {
    'x-ratelimit-limit-requests': '10',
    'x-ratelimit-remaining-requests': '9',
    'x-ratelimit-reset-requests': '6s',
    'retry-after': '3600',
    'retry-after-ms': '3600000',
  });
});

// --- no limits ---

test('a key without limits gets no x-ratelimit-* headers, streamed or not', async () => {
  const { key } = await newKey();
  const res = await chat(key, fake());
  assert.equal(res.status, 200);
  assert.deepEqual(limitHeaders(res), {});
  const streamed = await chat(key, fake({ stream: true }));
  assert.equal(streamed.status, 200);
  assert.deepEqual(limitHeaders(streamed), {});
});

test('a client that leaves while the limiter decides gets its slot back, and the upstream is never called', async () => {
  const { key } = await newKey({ limits: { concurrentRequests: 1 } });
  const limiter = gw.state.limiter;
  const admit = limiter.admit.bind(limiter);
  const settle = limiter.settle.bind(limiter);
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let markSettled: () => void = () => {};
  const permitSettled = new Promise<void>((resolve) => {
    markSettled = resolve;
  });
  limiter.settle = async (input) => {
    await settle(input);
    markSettled();
  };
  // The limiter answers only once the client is gone (as a slow Redis round trip would).
  limiter.admit = async (input) => {
    const decision = await admit(input);
    await gate;
    return decision;
  };
  try {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } });
    req.on('error', () => undefined);
    req.end(JSON.stringify(fake()));
    // Wait until the gateway is inside admission, then leave.
    await eventually(() => gw.gateway.inFlight === 1, 'the request inside admission');
    req.destroy();
    await settled();
    release();
    // The handler resumes after admission and settles the permit it was given.
    await within(permitSettled, 'the permit to be settled');
  } finally {
    limiter.admit = admit;
    limiter.settle = settle;
  }
  assert.equal(upstream.requests.length, 0, 'no upstream call for a client that left');
  const next = await chat(key, fake());
  assert.equal(next.status, 200, next.text);
});
