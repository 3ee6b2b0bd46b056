// Two gateway instances on one real redis-server act as one gateway: a key made on
// one works on the other, one limit and one budget are counted for both, a revoke
// reaches the other after its key mirror refresh, usage adds up in Redis, and a
// Redis stopped mid-traffic gives each state.onUnavailable mode its documented
// answer and is recovered from. docs/scaling.md describes what is asserted here.
//
// Instance A runs with onUnavailable "refuse", B with "local", so one outage shows
// both modes. Both gateways share one fixed clock: token buckets never refill during
// the test, so every count below is exact whatever the machine's speed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import type { KeyLimits } from '../../src/limits/key-limits.ts';
import { budgetWindowAt } from '../../src/limits/budget-period.ts';
import { redisLimiterKeys } from '../../src/limits/redis-limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createGatewayMetrics, type GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import type { RedisReply } from '../../src/redis/resp.ts';
import { openRedisBackend, type RedisBackend, type UnavailableMode } from '../../src/state/redis-backend.ts';
import { listenLocal, request, type RawResponse } from '../gateway/harness.ts';
import { eventually } from '../support/eventually.ts';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { systemScheduler, type Scheduler } from '../../src/time/scheduler.ts';
import { LOOKUPS_PER_SECOND } from '../../src/state/lookup-budget.ts';

/** The instances' shared clock: fixed, so no bucket refills while the test runs. */
const NOW = Date.now();
const PREFIX = 'mi:';
const CHAT = { model: 'service-chat', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 4 };

interface Instance {
  name: string;
  gateway: Gateway;
  state: RedisBackend;
  metrics: GatewayMetrics;
  baseUrl: string;
  logs: Record<string, unknown>[];
}

let redis: RedisServerHandle;
let dataDir: string;
let a: Instance;
let b: Instance;

interface InstanceOptions {
  /** listen.trustedProxies, so a test can name client addresses in X-Forwarded-For. */
  trustedProxies?: string[];
  /** The key store's scheduler (its lookup rate is read on the monotonic clock). */
  keyStoreScheduler?: Scheduler;
}

async function startInstance(name: string, onUnavailable: UnavailableMode, options: InstanceOptions = {}): Promise<Instance> {
  const config = parseConfig(
    {
      dataDir: join(dataDir, name),
      ...(options.trustedProxies === undefined ? {} : { listen: { trustedProxies: options.trustedProxies } }),
      providers: { demo: { type: 'demo' } },
      aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
      auto: { default: 'service-chat' },
      state: {
        backend: 'redis',
        redis: { url: `redis://127.0.0.1:${redis.port}`, keyPrefix: PREFIX, connectTimeoutMs: 500, commandTimeoutMs: 500 },
        onUnavailable,
      },
    },
    null,
    dataDir,
  );
  assert.ok(config.state.redis !== null);
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  let gateway: Gateway | undefined;
  let state: RedisBackend | undefined;
  const metrics = createGatewayMetrics({
    targets: () => gateway?.targets.health() ?? [],
    isKnownAlias: (alias) => gateway !== undefined && Object.hasOwn(gateway.config.aliases, alias),
    stateBackendUp: () => (state?.health() === 'ok' ? 1 : 0),
    keyLookups: () => state?.keys.lookupCounts?.() ?? {},
  });
  state = await openRedisBackend(config.state.redis, {
    onUnavailable: config.state.onUnavailable,
    logger,
    env: {},
    // Reconnect within 50 ms of Redis coming back; the key mirror is refreshed only
    // when a test says so (reload()), so "before the refresh" is a definite state.
    reconnect: { baseDelayMs: 10, maxDelayMs: 50 },
    reloadIntervalMs: 3_600_000,
    ...(options.keyStoreScheduler === undefined ? {} : { keyStoreScheduler: options.keyStoreScheduler }),
    countUnavailable: (operation) => metrics.stateBackendUnavailable(operation),
  });
  gateway = createGateway({ config, state, logger, metrics, env: {}, scheduler: { ...systemScheduler, now: () => NOW }, usageFlushMs: 3_600_000 });
  const address = await listenLocal(gateway);
  return { name, gateway, state, metrics, baseUrl: `http://127.0.0.1:${address.port}`, logs };
}

async function stopInstance(instance: Instance | undefined): Promise<void> {
  if (instance === undefined) return;
  instance.gateway.server.closeAllConnections();
  await instance.gateway.close();
  await instance.state.close();
}

before(async () => {
  dataDir = tempDir('multi');
  redis = await startRedisServer();
  a = await startInstance('a', 'refuse');
  b = await startInstance('b', 'local');
});

after(async () => {
  await stopInstance(a);
  await stopInstance(b);
  await redis?.stop();
});

function chat(instance: Instance, key: string, body: unknown = CHAT): Promise<RawResponse> {
  return request(instance.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

/** A client of our own, for looking into Redis the way an operator would. */
async function withRedis<T>(use: (client: RedisClient) => Promise<T>): Promise<T> {
  const client = createRedisClient({ host: '127.0.0.1', port: redis.port, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** Waits until every permit of the key is settled (its Redis permits set is empty). */
function settled(keyId: string): Promise<void> {
  const permits = redisLimiterKeys(PREFIX, keyId).permits;
  return eventually(() => withRedis(async (c) => (await c.command(['ZCARD', permits])) === 0), `permits of ${keyId} settled`);
}

const limits = (set: Partial<KeyLimits>): Partial<KeyLimits> => set;

function rateHeaders(res: RawResponse): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'retry-after', 'retry-after-ms']) {
    const value = res.headers[name];
    out[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}

const UNKNOWN_KEY_BODY = { error: { message: 'Incorrect API key provided, or the key has been revoked.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };

/** The 429 of a key limited to 3 requests per minute, all spent at the fixed clock. */
const RPM3_REFUSAL = {
  status: 429,
  headers: {
    'x-ratelimit-limit-requests': '3',
    'x-ratelimit-remaining-requests': '0',
    'x-ratelimit-reset-requests': '1m0s',
    'retry-after': '20',
    'retry-after-ms': '20000',
  },
  body: {
    error: {
      message: 'Rate limit reached for requests per minute on this API key: limit 3. Try again in 20s.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    },
  },
};

function assertRpm3Refusal(res: RawResponse): void {
  assert.deepEqual({ status: res.status, headers: rateHeaders(res), body: res.json() }, RPM3_REFUSAL);
}

const RESET_AFTER: Record<number, string> = { 2: '20s', 1: '40s', 0: '1m0s' };

function assertAdmitted(res: RawResponse, remaining: number): void {
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(rateHeaders(res), {
    'x-ratelimit-limit-requests': '3',
    'x-ratelimit-remaining-requests': String(remaining),
    // A bucket of 3 per minute refills one request every 20 s; empty to full is 60 s.
    'x-ratelimit-reset-requests': RESET_AFTER[remaining],
    'retry-after': undefined,
    'retry-after-ms': undefined,
  });
}

test('a key created through instance A is served by B at once: B asks Redis on a miss', async () => {
  const before = b.state.keys.lookupCounts?.();
  const issued = await a.state.keys.create('made-on-a');
  // B has not looked at Redis since it started (its refresh interval is an hour here).
  const onB = await chat(b, issued.key);
  assert.equal(onB.status, 200, onB.text);
  assert.equal((onB.json() as { model: string }).model, 'service-chat');
  const onA = await chat(a, issued.key);
  assert.equal(onA.status, 200, onA.text);
  // The lookup started a refresh: B's mirror holds the key, later requests ask nothing.
  await eventually(() => b.state.keys.authenticate(issued.key) !== null, "B's mirror holding the new key");
  assert.equal((await chat(b, issued.key)).status, 200);
  assert.equal(b.state.keys.lookupCounts?.().found, (before?.found ?? 0) + 1);
  assert.match(b.metrics.registry.expose(), /^portcullis_key_store_lookups\{result="found"\} [1-9]/m);
});

test('an unknown-key flood on B costs Redis one lookup per key per second, answered 401 each time', async () => {
  const unknown = await a.state.keys.create('flood-shape');
  await a.state.keys.revoke(unknown.record.id);
  // Well formed (its checksum holds), never stored.
  const bogus = generateApiKey();
  const before = b.state.keys.lookupCounts?.() ?? { unknown: 0, cached_unknown: 0 };
  const calls = await withRedis(async (c) => evalCalls(await c.command(['INFO', 'commandstats'])));
  const replies = await Promise.all(Array.from({ length: 50 }, () => chat(b, bogus)));
  for (let i = 0; i < 50; i++) replies.push(await chat(b, bogus));
  for (const r of replies) assert.deepEqual({ status: r.status, body: r.json() }, { status: 401, body: UNKNOWN_KEY_BODY });
  const after = b.state.keys.lookupCounts?.() ?? { unknown: 0, cached_unknown: 0 };
  // One lookup unless the second passed while the machine stalled: the cache answers the rest.
  const asked = after.unknown - before.unknown;
  assert.ok(asked >= 1 && asked <= 2, `lookups: ${asked}`);
  // Every request after the lookup ended is a cache hit (the 50 sent one by one at least);
  // one that arrived while it was in flight shared it and is counted nowhere.
  const answered = after.cached_unknown - before.cached_unknown + asked;
  assert.ok(answered >= 51 && answered <= 100, `cache hits and lookups: ${answered}`);
  // INFO itself is not a script; only B's lookups ran one.
  const spent = (await withRedis(async (c) => evalCalls(await c.command(['INFO', 'commandstats'])))) - calls;
  assert.equal(spent, asked);
  // A revoked key is refused on B without resurrection: the lookup finds it revoked.
  assert.deepEqual((await chat(b, unknown.key)).status, 401);
});

test('a flood of distinct unknown keys from 64 clients costs Redis the lookup budget, no more; a new key meanwhile gets 503 and Retry-After: 1, then works', async () => {
  // Instance C believes X-Forwarded-For from loopback, and its key store's monotonic
  // clock stands still: the lookup budget never refills, so the count is exact.
  const c = await startInstance('c', 'local', { trustedProxies: ['127.0.0.1'], keyStoreScheduler: { ...systemScheduler, monotonic: () => 0 } });
  try {
    // Last-used times pending on A and B are written now, not by their timers during the flood.
    await Promise.all([a.state.keys.flushLastUsed(), b.state.keys.flushLastUsed()]);
    const calls = await withRedis(async (r) => evalCalls(await r.command(['INFO', 'commandstats'])));
    const statuses = new Map<number, number>();
    let next = 0;
    // 64 clients, each sending distinct well-formed keys one after another, 1,000 in all, from 200 addresses.
    const client = async (): Promise<void> => {
      for (let i = next++; i < 1000; i = next++) {
        const res = await request(c.baseUrl, 'POST', '/v1/chat/completions', {
          headers: { 'content-type': 'application/json', authorization: `Bearer ${generateApiKey()}`, 'x-forwarded-for': `198.51.${i % 2}.${i % 200}` },
          body: JSON.stringify(CHAT),
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 503) {
          assert.equal(res.headers['retry-after'], '1');
          assert.deepEqual(res.json(), LOOKUP_UNAVAILABLE_BODY);
        } else assert.deepEqual({ status: res.status, body: res.json() }, { status: 401, body: UNKNOWN_KEY_BODY });
      }
    };
    await Promise.all(Array.from({ length: 64 }, client));
    const spent = (await withRedis(async (r) => evalCalls(await r.command(['INFO', 'commandstats'])))) - calls;
    assert.equal(spent, LOOKUPS_PER_SECOND);
    assert.deepEqual(c.state.keys.lookupCounts?.(), { found: 0, unknown: LOOKUPS_PER_SECOND, cached_unknown: 0, shed: 1000 - LOOKUPS_PER_SECOND, failed: 0 });
    assert.deepEqual(Object.fromEntries(statuses), { 401: LOOKUPS_PER_SECOND, 503: 1000 - LOOKUPS_PER_SECOND });
    // A key made on A while C's lookup budget is spent: a 503 the SDKs retry, not a 401 they give up on.
    const issued = await a.state.keys.create('new-during-flood');
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${issued.key}`, 'x-forwarded-for': '192.0.2.7' };
    const refused = await request(c.baseUrl, 'POST', '/v1/chat/completions', { headers, body: JSON.stringify(CHAT) });
    assert.deepEqual({ status: refused.status, retryAfter: refused.headers['retry-after'], body: refused.json() }, { status: 503, retryAfter: '1', body: LOOKUP_UNAVAILABLE_BODY });
    // The retry a second later meets the refreshed mirror (here: a refresh made now).
    await c.state.keys.reload();
    const retried = await request(c.baseUrl, 'POST', '/v1/chat/completions', { headers, body: JSON.stringify(CHAT) });
    assert.equal(retried.status, 200, retried.text);
  } finally {
    await stopInstance(c);
  }
});

const LOOKUP_UNAVAILABLE_BODY = {
  error: {
    message: 'The gateway could not check this API key with its shared state store just now; retry in a second.',
    type: 'server_error',
    param: null,
    code: 'state_unavailable',
  },
};

/** Script calls (EVALSHA and EVAL) so far, from INFO commandstats. */
function evalCalls(info: RedisReply): number {
  let total = 0;
  for (const m of String(info).matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)) total += Number(m[1]);
  return total;
}

test('one requests-per-minute limit counts requests on both instances', async () => {
  const issued = await a.state.keys.create('shared-rpm', { limits: limits({ requestsPerMinute: 3 }) });
  await b.state.keys.reload();
  assertAdmitted(await chat(a, issued.key), 2);
  assertAdmitted(await chat(b, issued.key), 1);
  assertAdmitted(await chat(a, issued.key), 0);
  // The fourth request is refused wherever it lands.
  assertRpm3Refusal(await chat(b, issued.key));
  assertRpm3Refusal(await chat(a, issued.key));
  assert.equal(a.metrics.expose().includes('portcullis_rate_limited_requests_total{alias="service-chat",limit="requests"} 1'), true);
  assert.equal(b.metrics.expose().includes('portcullis_rate_limited_requests_total{alias="service-chat",limit="requests"} 1'), true);
});

test('a budget spent on instance A is refused on B with 429 insufficient_quota', async () => {
  // CHAT reserves 64 + 8 + 4 + 11 + 4 = 91 tokens: a budget of 95 admits one; after it
  // settles at 7, the 88 left cannot hold another, and nothing is in flight to give any back.
  const budgetLimits = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: { tokens: 95, period: 'day' as const }, costBudget: null };
  const issued = await a.state.keys.create('budget', { limits: budgetLimits });
  await b.state.keys.reload();
  const spent = await chat(a, issued.key);
  assert.equal(spent.status, 200, spent.text);
  const used = (spent.json() as { usage: { total_tokens: number } }).usage.total_tokens;
  // The demo's reply to CHAT: 3 prompt tokens and 4 words.
  assert.equal(used, 7);
  await settled(issued.record.id);
  assert.equal((await a.state.limiter.budgetUsed(issued.record.id, budgetLimits, NOW)).tokens, 7);
  assert.equal((await b.state.limiter.budgetUsed(issued.record.id, budgetLimits, NOW)).tokens, 7);

  const window = budgetWindowAt(NOW, 'day');
  const waitMs = window.endMs - NOW;
  const expected = {
    status: 429,
    retryAfter: String(Math.ceil(waitMs / 1000)),
    retryAfterMs: String(waitMs),
    body: {
      error: {
        message:
          "This request may use up to 91 tokens (its prompt and max_tokens); the key's token budget has 88 left this day, with no requests in flight. " +
          `Lower max_tokens, or retry after the budget resets at ${new Date(window.endMs).toISOString()}.`,
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    },
  };
  for (const instance of [a, b]) {
    const refused = await chat(instance, issued.key);
    assert.deepEqual(
      { status: refused.status, retryAfter: refused.headers['retry-after'], retryAfterMs: refused.headers['retry-after-ms'], body: refused.json() },
      expected,
      instance.name,
    );
  }
});

test('a key revoked through instance A is refused on B after B refreshed its key mirror', async () => {
  const issued = await a.state.keys.create('to-revoke');
  await b.state.keys.reload();
  assert.equal((await chat(b, issued.key)).status, 200);
  await a.state.keys.revoke(issued.record.id);
  // A re-reads the keys right after its own write.
  const onA = await chat(a, issued.key);
  assert.deepEqual({ status: onA.status, body: onA.json() }, { status: 401, body: UNKNOWN_KEY_BODY });
  // B still serves its mirror until the next refresh: the propagation bound of docs/scaling.md
  // (state.redis reload interval, 1 s by default; an hour in this test).
  assert.equal((await chat(b, issued.key)).status, 200);
  await b.state.keys.reload();
  const onB = await chat(b, issued.key);
  assert.deepEqual({ status: onB.status, body: onB.json() }, { status: 401, body: UNKNOWN_KEY_BODY });
});

test('usage recorded on both instances adds up in Redis', async () => {
  const issued = await a.state.keys.create('usage');
  await b.state.keys.reload();
  const replies = [await chat(a, issued.key), await chat(b, issued.key), await chat(a, issued.key, { ...CHAT, max_tokens: 2 })];
  const usages = replies.map((r) => {
    assert.equal(r.status, 200, r.text);
    return (r.json() as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
  });
  assert.deepEqual(
    usages.map((u) => [u.prompt_tokens, u.completion_tokens]),
    [
      [3, 4],
      [3, 4],
      [3, 2],
    ],
  );
  // Each instance's ledger records a request when its response closes; flush until all three arrived.
  const id = issued.record.id;
  await eventually(async () => {
    await a.gateway.flushUsage();
    await b.gateway.flushUsage();
    return (await a.state.usage.totals()).get(id)?.requests === 3;
  }, 'three requests in the Redis totals');
  const expected = { requests: 3, promptTokens: 9, completionTokens: 10, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  assert.deepEqual((await b.state.usage.totals()).get(id), expected);
  const series = await b.state.usage.series(id, 'hour', Date.now());
  assert.deepEqual(series.totals, expected);
  // The requests fall in this hour's bucket or, if an hour began meanwhile, the one before.
  const inBuckets = series.buckets.reduce((sum, bucket) => sum + bucket.requests, 0);
  assert.equal(inBuckets, 3);
});

// ---------------------------------------------------------------------------
// Redis stopped and restarted mid-traffic

interface SavedKey {
  name: string;
  type: string;
  value: RedisReply;
  pttl: number;
}

/** Every key under PREFIX with its value and TTL: what an AOF file would bring back. */
async function snapshot(client: RedisClient): Promise<SavedKey[]> {
  const names = (await client.command(['KEYS', `${PREFIX}*`])) as string[];
  assert.ok(names.length < 1000, 'a small keyspace');
  const saved: SavedKey[] = [];
  for (const name of names) {
    const type = (await client.command(['TYPE', name])) as string;
    const read: Record<string, string[]> = { string: ['GET', name], hash: ['HGETALL', name], zset: ['ZRANGE', name, '0', '-1', 'WITHSCORES'], set: ['SMEMBERS', name] };
    const command = read[type];
    assert.ok(command !== undefined, `unexpected ${type} at ${name}`);
    saved.push({ name, type, value: await client.command(command), pttl: (await client.command(['PTTL', name])) as number });
  }
  return saved;
}

async function restore(client: RedisClient, saved: SavedKey[]): Promise<void> {
  for (const { name, type, value, pttl } of saved) {
    const items = Array.isArray(value) ? (value as string[]) : [];
    if (type === 'string') await client.command(['SET', name, value as string]);
    if (type === 'hash') await client.command(['HSET', name, ...items]);
    if (type === 'set') await client.command(['SADD', name, ...items]);
    if (type === 'zset') {
      const pairs: string[] = [];
      for (let i = 0; i + 1 < items.length; i += 2) pairs.push(items[i + 1] as string, items[i] as string);
      await client.command(['ZADD', name, ...pairs]);
    }
    if (pttl > 0) await client.command(['PEXPIRE', name, pttl]);
  }
}

function counterLine(instance: Instance, operation: string): string | undefined {
  return instance.metrics
    .expose()
    .split('\n')
    .find((line) => line.startsWith(`portcullis_state_backend_unavailable_total{operation="${operation}"}`));
}

test('Redis stopped mid-traffic: "refuse" answers 503 state_unavailable, "local" counts per instance; both recover on restart', async () => {
  const limited = await a.state.keys.create('outage', { limits: limits({ requestsPerMinute: 3 }) });
  const unlimited = await a.state.keys.create('outage-unlimited');
  await b.state.keys.reload();
  assertAdmitted(await chat(a, limited.key), 2);
  await settled(limited.record.id);
  const saved = await withRedis(snapshot);

  await redis.stop();
  await eventually(() => a.state.health() === 'unavailable' && b.state.health() === 'degraded', 'both instances see Redis gone');

  // A (refuse): a key with limits cannot be counted, so it is not served.
  const refused = await chat(a, limited.key);
  assert.deepEqual(
    { status: refused.status, retryAfter: refused.headers['retry-after'], body: refused.json() },
    {
      status: 503,
      retryAfter: '2',
      body: {
        error: {
          message: 'The gateway cannot reach its shared state store right now; retry shortly.',
          type: 'server_error',
          param: null,
          code: 'state_unavailable',
        },
      },
    },
  );
  // A key without limits never needed Redis: served on both, from the key mirror.
  assert.equal((await chat(a, unlimited.key)).status, 200);
  assert.equal((await chat(b, unlimited.key)).status, 200);

  // B (local): its own in-process buckets, which start full: 3 more requests, then its own 429.
  assertAdmitted(await chat(b, limited.key), 2);
  assertAdmitted(await chat(b, limited.key), 1);
  assertAdmitted(await chat(b, limited.key), 0);
  assertRpm3Refusal(await chat(b, limited.key));

  assert.equal(counterLine(a, 'admit'), 'portcullis_state_backend_unavailable_total{operation="admit"} 1');
  assert.equal(counterLine(b, 'admit'), 'portcullis_state_backend_unavailable_total{operation="admit"} 4');
  for (const instance of [a, b]) assert.ok(instance.metrics.expose().includes('\nportcullis_state_backend_up 0\n'), instance.name);
  const warnings = [a, b].map((i) => i.logs.filter((l) => l['level'] === 'warn' && String(l['msg']).startsWith('state backend unavailable')).map((l) => [l['msg'], l['on_unavailable'], l['redis']]));
  assert.deepEqual(warnings, [
    [['state backend unavailable: Redis cannot be reached; requests of keys with limits are refused (503) until it answers', 'refuse', `redis://127.0.0.1:${redis.port}/0`]],
    [['state backend unavailable: Redis cannot be reached; limits are counted per instance until it answers', 'local', `redis://127.0.0.1:${redis.port}/0`]],
  ]);

  // /readyz: "refuse" takes the instance out (it refuses limited keys); "local" keeps serving and says it is degraded.
  const readyA = await request(a.baseUrl, 'GET', '/readyz');
  assert.deepEqual(
    { status: readyA.status, body: readyA.json() },
    { status: 503, body: { status: 'not_ready', checks: { config: 'ok', store: 'the redis state backend is unreachable', upstreams: 'ok', shutdown: 'ok' }, openCircuits: [] } },
  );
  const readyB = await request(b.baseUrl, 'GET', '/readyz');
  assert.deepEqual(
    { status: readyB.status, body: readyB.json() },
    { status: 200, body: { status: 'ready', checks: { config: 'ok', store: 'degraded: the state backend is unreachable; limits are counted per instance', upstreams: 'ok', shutdown: 'ok' }, openCircuits: [] } },
  );

  // Redis comes back on the same port with its data (as from its append-only file).
  await redis.restart();
  await eventually(() => a.state.health() === 'ok' && b.state.health() === 'ok', 'both instances reconnected');
  await withRedis((client) => restore(client, saved));
  // The instances re-read the keys whole on recovery; read again now that the data is back.
  await a.state.keys.reload();
  await b.state.keys.reload();
  for (const instance of [a, b]) {
    assert.deepEqual(
      instance.logs.filter((l) => String(l['msg']).startsWith('state backend recovered')).map((l) => [l['level'], l['msg']]),
      [['info', 'state backend recovered: Redis answers again']],
      instance.name,
    );
    assert.ok(instance.metrics.expose().includes('\nportcullis_state_backend_up 1\n'), instance.name);
  }

  // The shared bucket again: Redis counted 1 before the outage, the 3 local ones never reached it.
  assertAdmitted(await chat(a, limited.key), 1);
  assertAdmitted(await chat(b, limited.key), 0);
  assertRpm3Refusal(await chat(a, limited.key));
  assertRpm3Refusal(await chat(b, limited.key));
  // Nothing more met the outage.
  assert.equal(counterLine(a, 'admit'), 'portcullis_state_backend_unavailable_total{operation="admit"} 1');
  assert.equal(counterLine(b, 'admit'), 'portcullis_state_backend_unavailable_total{operation="admit"} 4');
});

test('Redis restarted empty (no persistence): every key is gone on both instances after the refresh', async () => {
  const issued = await a.state.keys.create('lost');
  await b.state.keys.reload();
  assert.equal((await chat(b, issued.key)).status, 200);
  await redis.restart();
  await eventually(() => a.state.health() === 'ok' && b.state.health() === 'ok', 'both instances reconnected');
  // On recovery each instance reads the keys whole (no version number can be trusted
  // across a restart); reload() waits behind that read.
  await a.state.keys.reload();
  await b.state.keys.reload();
  for (const instance of [a, b]) {
    const res = await chat(instance, issued.key);
    assert.deepEqual({ status: res.status, body: res.json() }, { status: 401, body: UNKNOWN_KEY_BODY }, instance.name);
  }
});
