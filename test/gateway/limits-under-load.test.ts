// Limits that hold under bursts and disconnects, through the real
// gateway against a fake upstream that reports the most a tokenizer could:
// prompt = the UTF-8 bytes of the messages' text, completion = the output
// maximum it was sent. Every test checks that the key's usage record and the
// limiter hold the same numbers.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import type { KeySettingsInput } from '../../src/keys/key-settings.ts';
import { costNanos } from '../../src/limits/cost.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';
import { reserveRequest } from '../../src/limits/reservation.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { openStream, postChat, startFakeUpstream, startGateway, type FakeUpstream, type RawResponse, type TestGateway, type UpstreamRequest } from './harness.ts';

const PRICE = { input: 2.5, cachedInput: 1.25, output: 10 };
const DEAR = { input: 5, cachedInput: 5, output: 20 };
const IMAGE_TOKENS = 2000;
const CHINESE = '汉'.repeat(300); // 900 UTF-8 bytes

/** Large budgets of both kinds, so the limiter counts tokens and cost. */
const BOTH_BUDGETS = { tokenBudget: { tokens: 1_000_000, period: 'day' as const }, costBudget: { amount: 1000, period: 'day' as const } };

let upstream: FakeUpstream;
let gw: TestGateway;
let keyCount = 0;
/** Answers held back until the test releases them. */
let held: Array<() => void> = [];
let holdAnswers = false;
let reportedUsage: ((body: Record<string, unknown>) => Record<string, unknown>) | null = null;

/** The most a byte-level tokenizer could count for what the fake received. */
function maxUsage(body: Record<string, unknown>): Record<string, unknown> {
  let prompt = 0;
  for (const m of body['messages'] as Array<{ content: string }>) prompt += Buffer.byteLength(m.content);
  const completion = (body['max_completion_tokens'] ?? body['max_tokens']) as number;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function answer(req: UpstreamRequest, res: http.ServerResponse): void {
  const body = req.body as Record<string, unknown>;
  const send = (): void => {
    if (res.destroyed) return;
    const usage = (reportedUsage ?? maxUsage)(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-load', object: 'chat.completion', created: 1_720_000_000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage }));
  };
  if (holdAnswers) held.push(send);
  else send();
}

before(async () => {
  upstream = await startFakeUpstream(answer);
  gw = await startGateway({ configValue: config(upstream.baseUrl) });
});
after(async () => {
  await gw.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
  upstream.handle = answer;
  held = [];
  holdAnswers = false;
  reportedUsage = null;
  gw.logs.length = 0;
});

function config(baseUrl: string): Record<string, unknown> {
  return {
    currency: 'EUR',
    providers: {
      fake: { type: 'openai', baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } },
      demo: { type: 'demo' },
    },
    aliases: {
      'service-fake': { targets: [{ provider: 'fake', model: 'upstream-model-1' }], price: PRICE, imageTokens: IMAGE_TOKENS },
      'service-unpriced': { provider: 'fake', model: 'upstream-model-2' },
      'service-two': {
        targets: [
          { provider: 'fake', model: 'upstream-dear', price: DEAR },
          { provider: 'fake', model: 'upstream-cheap', priority: 1, price: PRICE },
        ],
      },
    },
    auto: { default: 'service-fake' },
  };
}

async function newKey(settings: KeySettingsInput): Promise<{ id: string; key: string }> {
  const issued = await gw.state.keys.create(`load-${++keyCount}`, settings);
  return { id: issued.record.id, key: issued.key };
}

function chinese(maxTokens = 100): Record<string, unknown> {
  return { model: 'service-fake', messages: [{ role: 'user', content: CHINESE }], max_tokens: maxTokens };
}

function reservationOf(body: Record<string, unknown>, maxTokens: number) {
  return reserveRequest(body as unknown as ChatRequest, maxTokens, { imageTokens: IMAGE_TOKENS }, [PRICE]);
}

const chat = (key: string, body: unknown): Promise<RawResponse> => postChat(gw, body, { authorization: `Bearer ${key}` });

/** The key's recorded usage (flushed to the store) and the limiter's budget use now. */
async function recorded(id: string): Promise<{ tokens: number; costNanos: number; budget: { tokens: number; costNanos: number } }> {
  await gw.flushUsage();
  const totals = (await gw.state.usage.totals()).get(id);
  const record = await gw.state.keys.get(id);
  const budget = await gw.state.limiter.budgetUsed(id, record.limits, Date.now());
  return { tokens: (totals?.promptTokens ?? 0) + (totals?.completionTokens ?? 0), costNanos: totals?.costNanos ?? 0, budget };
}

/** The access line of the request that just closed. */
async function accessLine(): Promise<Record<string, unknown>> {
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['path'] === '/v1/chat/completions'), 'the access line');
  return gw.logs.find((l) => l['msg'] === 'request' && l['path'] === '/v1/chat/completions') as Record<string, unknown>;
}

test('a burst of 40 against a 5000-token daily budget spends no more than the budget plus one request', async () => {
  const limits = { tokenBudget: { tokens: 5000, period: 'day' as const } };
  const { id, key } = await newKey({ limits });
  const reservation = reservationOf(chinese(), 100);
  holdAnswers = true;
  const answers = Array.from({ length: 40 }, () => chat(key, chinese()));
  const refusals: RawResponse[] = [];
  for (const a of answers) void a.then((r) => r.status === 429 && refusals.push(r));
  await eventually(() => refusals.length + upstream.requests.length === 40, 'every request admitted or refused');
  const admitted = upstream.requests.length;
  for (const send of held) send();
  const results = await Promise.all(answers);
  assert.equal(results.filter((r) => r.status === 200).length, admitted);
  assert.ok(admitted >= 1, 'the budget admits at least one request');
  const spent = admitted * (900 + 100);
  assert.ok(spent <= 5000 + reservation.tokens, `spent ${spent} > 5000 + one request (${reservation.tokens})`);
  assert.equal(admitted, Math.floor(5000 / reservation.tokens), 'admission counts every reservation in flight');
  for (const r of refusals) {
    const body = r.json() as { error: { code: string; type: string } };
    assert.equal(body.error.code, 'insufficient_quota');
  }
  const use = await recorded(id);
  assert.equal(use.tokens, spent, 'the usage record holds what the upstream reported');
  assert.equal(use.budget.tokens, spent, 'the limiter holds the same number');
});

test('a burst against tokens per minute spends no more than the limit plus one request', async () => {
  const { key } = await newKey({ limits: { tokensPerMinute: 5000 } });
  const reservation = reservationOf(chinese(), 100);
  holdAnswers = true;
  const answers = Array.from({ length: 40 }, () => chat(key, chinese()));
  let refused = 0;
  for (const a of answers) void a.then((r) => r.status === 429 && refused++);
  await eventually(() => refused + upstream.requests.length === 40, 'every request admitted or refused');
  const admitted = upstream.requests.length;
  for (const send of held) send();
  await Promise.all(answers);
  assert.ok(admitted >= 1);
  assert.ok(admitted * 1000 <= 5000 + reservation.tokens, `${admitted} admitted`);
});

test('a client that leaves after the upstream call began is charged its prompt, in the record and the limiter alike', async () => {
  const { id, key } = await newKey({ limits: BOTH_BUDGETS });
  holdAnswers = true;
  const body = chinese();
  const req = http.request(`${gw.baseUrl}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } });
  req.on('error', () => undefined);
  req.end(JSON.stringify(body));
  await eventually(() => upstream.requests.length === 1, 'the upstream call');
  req.destroy();
  const line = await accessLine();
  const prompt = reservationOf(body, 100).promptTokens;
  assert.equal(line['charge'], 'prompt');
  assert.equal(line['chargedTokens'], prompt);
  assert.equal(line['costNanos'], costNanos(prompt, PRICE.input));
  const use = await recorded(id);
  assert.deepEqual(use, { tokens: prompt, costNanos: costNanos(prompt, PRICE.input), budget: { tokens: prompt, costNanos: costNanos(prompt, PRICE.input) } });
});

test('a stream the client cuts is charged its prompt and what was generated so far, in the record and the limiter alike', async () => {
  const { id, key } = await newKey({ limits: BOTH_BUDGETS });
  upstream.handle = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'abc汉' }, finish_reason: null }] };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    // ...and nothing more: the client leaves.
  };
  const body = { ...chinese(), stream: true };
  const stream = await new Promise<http.ClientRequest>((resolve, reject) => {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } });
    req.on('response', (res) => res.once('data', () => resolve(req)));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  stream.on('error', () => undefined);
  stream.destroy();
  const line = await accessLine();
  const prompt = reservationOf(body, 100).promptTokens;
  const generated = Buffer.byteLength('abc汉');
  assert.equal(line['charge'], 'partial');
  assert.equal(line['chargedTokens'], prompt + generated);
  const cost = costNanos(prompt, PRICE.input) + costNanos(generated, PRICE.output);
  assert.equal(line['costNanos'], cost);
  const use = await recorded(id);
  assert.deepEqual(use, { tokens: prompt + generated, costNanos: cost, budget: { tokens: prompt + generated, costNanos: cost } });
});

test('absurd upstream usage (2e9 tokens) is logged and charged the reservation, and the slot is given back', async () => {
  const limits = { concurrentRequests: 1, tokenBudget: { tokens: 1_000_000, period: 'day' as const } };
  const { id, key } = await newKey({ limits });
  reportedUsage = () => ({ prompt_tokens: 2_000_000_000, completion_tokens: 5, total_tokens: 2_000_000_005 });
  const first = await chat(key, chinese());
  assert.equal(first.status, 200, first.text);
  const line = await accessLine();
  const reservation = reservationOf(chinese(), 100);
  assert.equal(line['charge'], 'reservation');
  assert.equal(line['chargedTokens'], reservation.tokens);
  // Not believed, so not counted as reported (the tokens metric reads these).
  assert.deepEqual([line['promptTokens'], line['completionTokens'], line['cachedTokens']], [null, null, null]);
  const warn = gw.logs.find((l) => l['level'] === 'warn' && l['problem'] === 'usage_bad: prompt_tokens out of range');
  assert.ok(warn !== undefined, JSON.stringify(gw.logs));
  reportedUsage = null;
  const second = await chat(key, chinese());
  assert.equal(second.status, 200, 'the concurrency slot was released');
  const use = await recorded(id);
  assert.equal(use.tokens, reservation.tokens + 1000);
  assert.equal(use.budget.tokens, use.tokens);
});

test('an unusable answer is charged the reservation at the price of the target that gave it, not the dearest', async () => {
  const { id, key } = await newKey({ limits: BOTH_BUDGETS });
  upstream.handle = (req, res) => {
    if ((req.body as { model: string }).model === 'upstream-dear') {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"down"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"not":"a completion"}');
  };
  const body = { ...chinese(), model: 'service-two' };
  const res = await chat(key, body);
  assert.equal(res.status, 502, res.text);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'bad_upstream_response');
  const line = await accessLine();
  const reservation = reserveRequest(body as unknown as ChatRequest, 100, { imageTokens: 2000 }, [DEAR, PRICE]);
  const cost = costNanos(reservation.promptTokens, PRICE.input) + costNanos(reservation.outputTokens, PRICE.output);
  assert.ok(cost < reservation.costNanos);
  assert.equal(line['charge'], 'reservation');
  assert.equal(line['target'], 'fake/upstream-cheap');
  assert.equal(line['costNanos'], cost);
  const use = await recorded(id);
  assert.deepEqual(use, { tokens: reservation.tokens, costNanos: cost, budget: { tokens: reservation.tokens, costNanos: cost } });
});

test('a key with a spending budget may not use an alias without a price (403 naming the alias)', async () => {
  const { key } = await newKey({ limits: { costBudget: { amount: 5, period: 'month' } } });
  const res = await chat(key, { model: 'service-unpriced', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 403);
  const body = res.json() as { error: { code: string; param: string; message: string } };
  assert.equal(body.error.code, 'model_not_allowed');
  assert.equal(body.error.param, 'model');
  assert.match(body.error.message, /'service-unpriced' has no price/);
  assert.equal(upstream.requests.length, 0);
});

test('a burst against a spending budget spends no more than the budget plus one request', async () => {
  const reservation = reservationOf(chinese(), 100);
  // Room for exactly three reservations.
  const amount = (3 * reservation.costNanos + reservation.costNanos / 2) / 1e9;
  const limits = { costBudget: { amount: Math.round(amount * 1e6) / 1e6, period: 'day' as const } };
  const { id, key } = await newKey({ limits });
  holdAnswers = true;
  const answers = Array.from({ length: 20 }, () => chat(key, chinese()));
  let refused = 0;
  for (const a of answers) void a.then((r) => r.status === 429 && refused++);
  await eventually(() => refused + upstream.requests.length === 20, 'every request admitted or refused');
  assert.equal(upstream.requests.length, 3);
  for (const send of held) send();
  await Promise.all(answers);
  const each = costNanos(900, PRICE.input) + costNanos(100, PRICE.output);
  const use = await recorded(id);
  assert.equal(use.costNanos, 3 * each);
  assert.equal(use.budget.costNanos, 3 * each);
});

test('a stream longer than the lease keeps its concurrency slot: renewed while it runs, free at its end', async () => {
  // The permit keeper renews every 500 ms of the gateway's time, and the limiter judges the lease by it.
  const scheduler = new ManualScheduler();
  const limiter = createMemoryLimiter({ leaseMs: 1500 });
  const local = await startGateway({ configValue: config(upstream.baseUrl), limiter, scheduler });
  try {
    const issued = await local.state.keys.create('lease', { limits: { concurrentRequests: 1 } });
    let finish: () => void = () => {};
    upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, reason: string | null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: reason }] });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'a' }, null))}\n\n`);
      finish = () => {
        res.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`);
        res.end('data: [DONE]\n\n');
      };
    };
    const stream = await openStream(local, issued.key, { model: 'service-fake', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(stream.status, 200);
    // Three leases later, the first stream still holds the slot.
    await scheduler.advance(4500);
    upstream.handle = answer;
    const second = await postChat(local, { model: 'service-fake', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${issued.key}` });
    assert.equal(second.status, 429, second.text);
    assert.equal((second.json() as { error: { code: string } }).error.code, 'rate_limit_exceeded');
    finish();
    await stream.body;
    await eventually(() => local.logs.some((l) => l['msg'] === 'request' && l['status'] === 200 && l['stream'] === true), 'the stream to close');
    const third = await postChat(local, { model: 'service-fake', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${issued.key}` });
    assert.equal(third.status, 200, third.text);
  } finally {
    await local.close();
  }
});
