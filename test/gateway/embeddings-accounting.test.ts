// Embeddings under the key's limits and money, and through the dispatcher's
// retries and fallbacks: a budget a burst cannot overspend, the charge from
// the upstream's usage (or the reservation without one), the alias kinds, a
// failed part failing the attempt as a whole, the bounded concurrency of the
// parts, and a client that leaves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { eventually } from '../support/eventually.ts';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import { postChat, request, type RawResponse, type UpstreamRequest } from './harness.ts';
import { accessLine, answering, postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

/** A unit of currency per thousand tokens: a 996-byte text (bound 1000 tokens) reserves exactly 1. */
const PRICE = { input: 1000 };
const NANOS = 1_000_000_000;

describe('money and limits', () => {
  let rig: EmbeddingsRig;
  let held: Array<() => void> = [];
  let hold = false;
  before(async () => {
    rig = await startEmbeddingsRig({ alias: { price: PRICE } });
  });
  after(() => rig.close());

  const answer900 = (req: UpstreamRequest, res: ServerResponse): void => {
    const send = (): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], { tokensPerInput: 900 })));
    };
    if (hold) held.push(send);
    else send();
  };

  async function recorded(id: string): Promise<{ tokens: number; costNanos: number; budgetCost: number }> {
    await rig.gw.flushUsage();
    const totals = (await rig.gw.state.usage.totals()).get(id);
    const record = await rig.gw.state.keys.get(id);
    const budget = await rig.gw.state.limiter.budgetUsed(id, record.limits, Date.now());
    return { tokens: (totals?.promptTokens ?? 0) + (totals?.completionTokens ?? 0), costNanos: totals?.costNanos ?? 0, budgetCost: budget.costNanos };
  }

  test('a burst of 20 against a budget of 5 spends no more than the budget: each request reserves its input bound', async () => {
    rig.answer = answer900;
    rig.upstream.requests.length = 0;
    const created = await rig.gw.state.keys.create('embed-budget', { limits: { costBudget: { amount: 5, period: 'day' } } });
    hold = true;
    held = [];
    const body = { model: 'text-embed', input: ['x'.repeat(996)] };
    const answers = Array.from({ length: 20 }, () => postEmbeddings(rig.gw, body, { authorization: `Bearer ${created.key}` }));
    const refusals: RawResponse[] = [];
    for (const a of answers) void a.then((r) => r.status === 429 && refusals.push(r));
    await eventually(() => refusals.length + rig.upstream.requests.length === 20, 'every request admitted or refused');
    assert.equal(rig.upstream.requests.length, 5, 'five reservations of 1 fill a budget of 5');
    hold = false;
    for (const send of held) send();
    const results = await Promise.all(answers);
    assert.equal(results.filter((r) => r.status === 200).length, 5);
    for (const r of refusals) assert.equal((r.json() as { error: { code: string } }).error.code, 'insufficient_quota');
    const use = await recorded(created.record.id);
    assert.deepEqual(use, { tokens: 4500, costNanos: 4.5 * NANOS, budgetCost: 4.5 * NANOS });
  });

  test('an upstream without usage: the answer and the charge are the reservation', async () => {
    rig.answer = answering({ tokensPerInput: null });
    const created = await rig.gw.state.keys.create('embed-no-usage');
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['abcd', 'ef'] }, { authorization: `Bearer ${created.key}`, 'x-request-id': 'no-usage' });
    assert.equal(res.status, 200);
    // 4 + 4 and 2 + 4 bytes of bound.
    assert.deepEqual((res.json() as { usage: unknown }).usage, { prompt_tokens: 14, total_tokens: 14 });
    const line = await accessLine(rig.gw, 'no-usage');
    assert.equal(line['charge'], 'reservation');
    assert.equal(line['chargedTokens'], 14);
    assert.deepEqual(await recorded(created.record.id), { tokens: 14, costNanos: 0.014 * NANOS, budgetCost: 0 });
  });

  test('requests per minute count one per request, however many calls it made', async () => {
    rig.answer = answering();
    const created = await rig.gw.state.keys.create('embed-rpm', { limits: { requestsPerMinute: 2 } });
    const many = Array.from({ length: 1200 }, (_, i) => `t${i}`);
    const auth = { authorization: `Bearer ${created.key}` };
    assert.equal((await postEmbeddings(rig.gw, { model: 'text-embed', input: many }, auth)).status, 200);
    assert.equal((await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x' }, auth)).status, 200);
    const third = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x' }, auth);
    assert.equal(third.status, 429);
    assert.equal((third.json() as { error: { code: string } }).error.code, 'rate_limit_exceeded');
  });
});

describe('alias kinds', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig();
  });
  after(() => rig.close());

  test('a chat request naming an embeddings alias is a 400 naming the alias and its kind', async () => {
    const res = await postChat(rig.gw, { model: 'text-embed', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 400);
    const error = (res.json() as { error: { code: string; param: string; message: string } }).error;
    assert.equal(error.code, 'model_kind_mismatch');
    assert.equal(error.param, 'model');
    assert.match(error.message, /'text-embed' is an embeddings model/);
  });

  test('an embeddings request naming a chat alias, or service-auto, is a 400 too', async () => {
    for (const model of ['service-chat', 'service-auto']) {
      const res = await postEmbeddings(rig.gw, { model, input: 'x' });
      assert.equal(res.status, 400, model);
      const error = (res.json() as { error: { code: string; param: string; message: string } }).error;
      assert.equal(error.code, 'model_kind_mismatch', model);
      assert.equal(error.param, 'model');
      assert.match(error.message, /text-embed/);
    }
  });

  test('an unknown model is a 404 as for chat', async () => {
    const res = await postEmbeddings(rig.gw, { model: 'nope', input: 'x' });
    assert.equal(res.status, 404);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'model_not_found');
  });

  test('a body that is not an embeddings request is a 400 naming the field', async () => {
    const stream = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x', stream: true });
    assert.equal(stream.status, 400);
    assert.equal((stream.json() as { error: { code: string; param: string } }).error.param, 'stream');
    const empty = await postEmbeddings(rig.gw, { model: 'text-embed', input: '' });
    assert.equal(empty.status, 400);
    assert.equal((empty.json() as { error: { param: string } }).error.param, 'input');
    const unauthenticated = await request(rig.gw.baseUrl, 'POST', '/v1/embeddings', { headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unauthenticated.status, 401);
  });
});

describe('parts, retries and fallbacks', () => {
  let rig: EmbeddingsRig;
  before(async () => {
    rig = await startEmbeddingsRig({
      provider: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 } },
      alias: { maxInputsPerCall: 2 },
      aliases: { 'fallback-embed': { kind: 'embeddings', maxInputsPerCall: 2, targets: [{ provider: 'fake', model: 'first' }, { provider: 'fake', model: 'second', priority: 1 }] } },
      embeddings: { maxConcurrentCalls: 2 },
    });
  });
  after(() => rig.close());

  test('a part that fails fails the attempt: the whole request is sent again', async () => {
    let failed = false;
    rig.answer = (req, res) => {
      const body = req.body as { input: string[] };
      if (!failed && body.input[0] === 'c') {
        failed = true;
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"busy"}}');
        return;
      }
      answering()(req, res);
    };
    rig.upstream.requests.length = 0;
    const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: ['a', 'b', 'c', 'd'] }, { 'x-request-id': 'retried' });
    assert.equal(res.status, 200);
    const sent = rig.upstream.requests.map((r) => (r.body as { input: string[] }).input.join(''));
    assert.equal(sent.filter((s) => s === 'ab').length, 2, 'the part that had succeeded went again');
    assert.equal(sent.filter((s) => s === 'cd').length, 2);
    const line = await accessLine(rig.gw, 'retried');
    assert.match(String(line['attempts']), /^fake\/upstream-embed:retry:\d{3},fake\/upstream-embed:ok$/);
  });

  test('a target that keeps failing falls back to the next for the whole request', async () => {
    rig.answer = (req, res) => {
      if ((req.body as { model: string }).model === 'first') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      answering()(req, res);
    };
    rig.upstream.requests.length = 0;
    const res = await postEmbeddings(rig.gw, { model: 'fallback-embed', input: ['a', 'b', 'c'] });
    assert.equal(res.status, 200);
    const second = rig.upstream.requests.filter((r) => (r.body as { model: string }).model === 'second').map((r) => (r.body as { input: string[] }).input.join(''));
    assert.deepEqual(second.sort(), ['ab', 'c']);
  });

  test('at most maxConcurrentCalls parts are in flight at once', async () => {
    const waiting: Array<() => void> = [];
    let inFlight = 0;
    let most = 0;
    rig.answer = (req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      waiting.push(() => {
        inFlight--;
        answering()(req, res);
      });
    };
    rig.upstream.requests.length = 0;
    const pending = postEmbeddings(rig.gw, { model: 'text-embed', input: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] });
    for (let released = 0; released < 4; released++) {
      await eventually(() => waiting.length > 0, 'a part in flight');
      (waiting.shift() as () => void)();
    }
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(most, 2);
    assert.equal(rig.upstream.requests.length, 4);
  });

  test('a client that leaves aborts every part in flight', async () => {
    const arrived: ServerResponse[] = [];
    rig.answer = (_req, res) => {
      arrived.push(res);
    };
    const controller = new AbortController();
    const pending = fetch(`${rig.gw.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${rig.gw.key}` },
      body: JSON.stringify({ model: 'text-embed', input: ['a', 'b', 'c'] }),
      signal: controller.signal,
    });
    await eventually(() => arrived.length === 2, 'both parts at the upstream');
    const closed = arrived.map((res) => new Promise((resolve) => res.on('close', resolve)));
    controller.abort();
    await assert.rejects(pending);
    await Promise.all(closed);
  });
});
