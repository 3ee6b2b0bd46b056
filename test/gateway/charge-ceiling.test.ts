// An upstream that reports far more than a request reserved (1000 tokens for
// max_tokens 10) cannot spend a key's budget faster than its admissions
// allowed: the limits count each charge at most limits.maxChargeMultiple times
// the reservation, with a warning line and portcullis_charges_clamped_total,
// while the key's usage record keeps what was reported.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import type { KeySettingsInput } from '../../src/keys/key-settings.ts';
import { costNanos } from '../../src/limits/cost.ts';
import { reserveRequest } from '../../src/limits/reservation.ts';
import { createGatewayMetrics, type GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { eventually } from '../support/eventually.ts';
import { parsePrometheusText, sampleValue } from '../metrics/prometheus-text.ts';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type RawResponse, type TestGateway, type UpstreamRequest } from './harness.ts';

const PRICE = { input: 2.5, cachedInput: 1.25, output: 10 };
/** What the misbehaving upstream reports for every request, whatever it was sent. */
const REPORTED = { prompt_tokens: 10, completion_tokens: 990, total_tokens: 1000 };
const BODY = { model: 'service-fake', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
const BURST = 20;

let upstream: FakeUpstream;
let gw: TestGateway;
let metrics: GatewayMetrics;
let keyCount = 0;
let held: Array<() => void> = [];

function answer(_req: UpstreamRequest, res: http.ServerResponse): void {
  held.push(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-ceiling', object: 'chat.completion', created: 1_720_000_000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: REPORTED }));
  });
}

function config(baseUrl: string, limits: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    providers: { fake: { type: 'openai', baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } } },
    aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1', price: PRICE } },
    auto: { default: 'service-fake' },
    limits,
  };
}

async function newKey(settings: KeySettingsInput): Promise<{ id: string; key: string }> {
  const issued = await gw.state.keys.create(`ceiling-${++keyCount}`, settings);
  return { id: issued.record.id, key: issued.key };
}

/** BURST requests at once; answered once every one is admitted or refused. */
async function burst(key: string): Promise<{ admitted: number; refused: RawResponse[] }> {
  const answers = Array.from({ length: BURST }, () => postChat(gw, BODY, { authorization: `Bearer ${key}` }));
  const refused: RawResponse[] = [];
  for (const a of answers) void a.then((r) => r.status === 429 && refused.push(r));
  await eventually(() => refused.length + held.length === BURST, 'every request admitted or refused');
  const admitted = held.length;
  for (const send of held) send();
  const results = await Promise.all(answers);
  assert.equal(results.filter((r) => r.status === 200).length, admitted);
  await eventually(() => gw.gateway.inFlight === 0, 'every request closed');
  return { admitted, refused };
}

/** The key's usage record (its `requests` all in it) and the limiter's budget counts. */
async function use(id: string, requests: number): Promise<{ recorded: { tokens: number; costNanos: number }; budget: { tokens: number; costNanos: number } }> {
  await gw.flushUsage();
  const totals = (await gw.state.usage.totals()).get(id);
  assert.equal(totals?.requests, requests, 'every request is in the usage record');
  const record = await gw.state.keys.get(id);
  return {
    recorded: { tokens: (totals?.promptTokens ?? 0) + (totals?.completionTokens ?? 0), costNanos: totals?.costNanos ?? 0 },
    budget: await gw.state.limiter.budgetUsed(id, record.limits, Date.now()),
  };
}

const reservation = reserveRequest(BODY as unknown as ChatRequest, 10, { imageTokens: 2000 }, [PRICE]);
const reportedCost = costNanos(10, PRICE.input) + costNanos(990, PRICE.output);

describe('the default ceiling, twice the reservation', () => {
  before(async () => {
    upstream = await startFakeUpstream(answer);
    const target: { gw?: TestGateway } = {};
    metrics = createGatewayMetrics({
      targets: () => target.gw?.gateway.targets.health() ?? [],
      isKnownAlias: (alias) => target.gw !== undefined && Object.hasOwn(target.gw.gateway.config.aliases, alias),
      stateBackendUp: () => 1,
    });
    gw = await startGateway({ configValue: config(upstream.baseUrl), metrics });
    target.gw = gw;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  beforeEach(() => {
    held = [];
    gw.logs.length = 0;
  });

  test('a burst of 20 at a 1000-token daily budget, each answer reporting 1000 tokens: the budget counts 1936, not 11000', async () => {
    // 64 per request + 8 per message + "user" + "hi" + max_tokens 10.
    assert.deepEqual([reservation.promptTokens, reservation.tokens], [78, 88]);
    const { id, key } = await newKey({ limits: { tokenBudget: { tokens: 1000, period: 'day' } } });
    const { admitted, refused } = await burst(key);
    assert.equal(admitted, 11, 'floor(1000 / 88) reservations fit');
    assert.equal(refused.length, BURST - 11);
    assert.deepEqual(await use(id, BURST), {
      recorded: { tokens: 11 * 1000, costNanos: 11 * reportedCost },
      budget: { tokens: 11 * 2 * 88, costNanos: 0 },
    });
    const warnings = gw.logs.filter((l) => l['level'] === 'warn');
    assert.equal(warnings.length, 11);
    const { requestId, time, ...first } = warnings[0] as Record<string, unknown>;
    assert.equal(typeof requestId, 'string');
    assert.equal(typeof time, 'string');
    assert.deepEqual(first, {
      level: 'warn',
      msg: 'an upstream reported more than limits.maxChargeMultiple times the reservation; the key limits count the ceiling, its usage what was reported',
      keyId: id,
      alias: 'service-fake',
      target: 'fake/upstream-model-1',
      reserved: 88,
      reported: 1000,
      counted: 176,
      reservedCostNanos: reservation.costNanos,
      reportedCostNanos: reportedCost,
      countedCostNanos: Math.min(reportedCost, 2 * reservation.costNanos),
      maxChargeMultiple: 2,
    });
    const line = gw.logs.find((l) => l['msg'] === 'request' && l['status'] === 200) as Record<string, unknown>;
    assert.deepEqual([line['charge'], line['chargedTokens'], line['promptTokens'], line['completionTokens']], ['usage', 1000, 10, 990]);
    const families = parsePrometheusText(metrics.expose());
    assert.equal(sampleValue(families, 'portcullis_charges_clamped_total', { alias: 'service-fake' }), 11);
    // The next request meets a spent budget with the counted figure.
    const next = await postChat(gw, BODY, { authorization: `Bearer ${key}` });
    assert.equal(next.status, 429);
    assert.match((next.json() as { error: { message: string } }).error.message, /spent its token budget of 1000 tokens per day \(used: 1936\)/);
  });

  test('a cost budget counts each answer at most twice its reserved cost', async () => {
    const { id, key } = await newKey({ limits: { costBudget: { amount: 0.001, period: 'day' } } });
    const { admitted } = await burst(key);
    const fits = Math.floor(1_000_000 / reservation.costNanos);
    assert.equal(admitted, fits);
    const counted = await use(id, BURST);
    assert.deepEqual(counted, {
      recorded: { tokens: fits * 1000, costNanos: fits * reportedCost },
      budget: { tokens: 0, costNanos: fits * Math.min(reportedCost, 2 * reservation.costNanos) },
    });
  });

  test('an answer within the ceiling is counted as reported, with only the warning that it passed its reservation', async () => {
    const { id, key } = await newKey({ limits: { tokenBudget: { tokens: 1_000_000, period: 'day' } } });
    const within = (req: UpstreamRequest, res: http.ServerResponse): void => {
      void req;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } }));
    };
    upstream.handle = within;
    try {
      const answer200 = await postChat(gw, BODY, { authorization: `Bearer ${key}` });
      assert.equal(answer200.status, 200);
      await eventually(() => gw.gateway.inFlight === 0, 'the request closed');
    } finally {
      upstream.handle = answer;
    }
    assert.deepEqual((await use(id, 1)).budget.tokens, 120);
    assert.deepEqual(gw.logs.filter((l) => l['level'] === 'warn').map((l) => l['msg']), ['a request used more tokens than its reservation; raise the alias imageTokens if it carried images']);
  });
});

test('limits.maxChargeMultiple 1: the budget never counts more than was reserved', async () => {
  upstream = await startFakeUpstream(answer);
  gw = await startGateway({ configValue: config(upstream.baseUrl, { maxChargeMultiple: 1 }) });
  held = [];
  try {
    const { id, key } = await newKey({ limits: { tokenBudget: { tokens: 1000, period: 'day' } } });
    const { admitted } = await burst(key);
    assert.equal(admitted, 11);
    assert.deepEqual((await use(id, BURST)).budget, { tokens: 11 * 88, costNanos: 0 });
  } finally {
    await gw.close();
    await upstream.close();
  }
});
