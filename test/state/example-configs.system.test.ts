// The files of deploy/examples/ and docs/scaling.md, used as an operator would:
// the Redis config passes `portcullis check-config`, and two gateway instances
// started from it, logged in to a real redis-server as the ACL user that
// docs/scaling.md tells operators to create, enforce one shared limit. Only the
// addresses are rewritten (Redis to the test's port, upstreams to a fake one on
// loopback). nginx.conf and haproxy.cfg are not run: neither program is
// installed here (docs/scaling.md says so); HAProxy's 503 file is checked for
// its framing.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { runCheckConfigCommand } from '../../src/cli/check-config-command.ts';
import { loadConfig } from '../../src/config/config-loader.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { RedisReplyError } from '../../src/redis/errors.ts';
import { openStateBackend } from '../../src/state/open-backend.ts';
import { redisAddress } from '../../src/state/redis-backend.ts';
import type { StateBackend } from '../../src/state/state-backend.ts';
import { listenLocal, request, startFakeUpstream, type FakeUpstream, type RawResponse, type UpstreamRequest } from '../gateway/harness.ts';
import { eventually } from '../support/eventually.ts';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { systemScheduler } from '../../src/time/scheduler.ts';


const ROOT = repositoryRoot();
const EXAMPLE = join(ROOT, 'deploy/examples/portcullis-redis.json');
const SCALING_DOC = join(ROOT, 'docs/scaling.md');
const HAPROXY_503 = join(ROOT, 'deploy/examples/haproxy-503.http');

const REDIS_ADMIN_PASSWORD = 'admin-pw-for-the-test';
const GATEWAY_REDIS_PASSWORD = 'gateway-pw-for-the-test';
/** The instances' shared clock: fixed, so no bucket refills while the test runs. */
const NOW = Date.now();

let dir: string;
let credentials: string;
let redis: RedisServerHandle;
let upstream: FakeUpstream;

before(async () => {
  dir = tempDir('examples');
  credentials = join(dir, 'credentials');
  mkdirSync(credentials);
  writeFileSync(join(credentials, 'local-api-key'), 'sk-local-from-credential\n');
  writeFileSync(join(credentials, 'openai-api-key'), 'sk-openai-from-credential\n');
  writeFileSync(join(credentials, 'redis-password'), `${GATEWAY_REDIS_PASSWORD}\n`);
  redis = await startRedisServer({ requirepass: REDIS_ADMIN_PASSWORD });
  upstream = await startFakeUpstream(answer);
});

after(async () => {
  await upstream?.close();
  await redis?.stop();
});

function answer(req: UpstreamRequest, res: ServerResponse): void {
  const body = req.body as { model: string };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-example',
      object: 'chat.completion',
      created: 1_720_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    }),
  );
}

function collect(): { stream: Writable; text: () => string } {
  const parts: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      parts.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(parts).toString('utf8') };
}

/** The one-line `redis-cli ACL SETUSER` rule of docs/scaling.md, as the command's arguments, with `password` in place of its placeholder. */
function documentedAclRule(password: string): string[] {
  const lines = readFileSync(SCALING_DOC, 'utf8').split('\n').filter((line) => line.startsWith('redis-cli ACL SETUSER '));
  assert.equal(lines.length, 1, 'docs/scaling.md has one ACL SETUSER line');
  const words = (lines[0] as string).split(' ').slice(1).filter((word) => word !== '');
  return words.map((word) => word.replace(/^'(.*)'$/, '$1')).map((word) => (word === '>CHANGE-ME' ? `>${password}` : word));
}

async function withRedis<T>(user: { username?: string; password: string }, use: (client: RedisClient) => Promise<T>): Promise<T> {
  const client = createRedisClient({ host: '127.0.0.1', port: redis.port, ...user, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

test('the Redis example config passes check-config with its credentials directory', () => {
  const out = collect();
  const err = collect();
  const code = runCheckConfigCommand([EXAMPLE], { configPath: undefined, env: { CREDENTIALS_DIRECTORY: credentials }, cwd: ROOT, stdout: out.stream, stderr: err.stream });
  assert.deepEqual(
    { code, stdout: out.text(), stderr: err.text() },
    {
      code: 0,
      stdout:
        `${EXAMPLE}: ok\n` +
        '  2 providers: local (openai), openai (openai); 2 aliases: service-chat, service-large; ' +
        'service-auto defaults to service-chat; listen 0.0.0.0:8080; data /var/lib/portcullis\n',
      stderr: '',
    },
  );
  // check-config does not look at the Redis password source; serve reads it like this at start.
  const config = loadConfig({ configPath: EXAMPLE, env: {}, cwd: ROOT });
  assert.equal(config.state.backend, 'redis');
  assert.equal(config.state.onUnavailable, 'refuse');
  assert.ok(config.state.redis !== null);
  const address = redisAddress(config.state.redis, { CREDENTIALS_DIRECTORY: credentials }, config.source);
  assert.deepEqual(address, { host: '10.0.0.5', port: 6379, tls: false, db: 0, username: 'portcullis', password: GATEWAY_REDIS_PASSWORD });
});

test("HAProxy's 503 file is one HTTP response: CRLF lines, an exact Content-Length, the OpenAI error shape", () => {
  const bytes = readFileSync(HAPROXY_503);
  const end = bytes.indexOf('\r\n\r\n');
  assert.ok(end > 0);
  const head = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const body = bytes.subarray(end + 4);
  assert.equal(head.some((line) => line.includes('\n')), false, 'no bare LF in the head');
  assert.deepEqual(head, [
    'HTTP/1.1 503 Service Unavailable',
    'Content-Type: application/json',
    'Cache-Control: no-store',
    'Retry-After: 2',
    'Connection: close',
    `Content-Length: ${body.length}`,
  ]);
  assert.deepEqual(JSON.parse(body.toString('utf8')), {
    error: { message: 'No gateway instance is available right now; retry shortly.', type: 'server_error', param: null, code: 'service_unavailable' },
  });
});

interface Instance {
  gateway: Gateway;
  state: StateBackend;
  baseUrl: string;
}

/** The example with the Redis address and the upstreams pointed at this test's servers; nothing else changed. */
function localCopyOfExample(): string {
  const value = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as {
    providers: Record<string, { baseUrl: string }>;
    state: { redis: { url: string } };
  };
  assert.equal(value.state.redis.url, 'redis://portcullis@10.0.0.5:6379/0');
  value.state.redis.url = `redis://portcullis@127.0.0.1:${redis.port}/0`;
  assert.deepEqual(Object.keys(value.providers), ['local', 'openai']);
  for (const provider of Object.values(value.providers)) provider.baseUrl = upstream.baseUrl;
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

async function startInstance(configPath: string, name: string): Promise<Instance> {
  const env: NodeJS.ProcessEnv = { CREDENTIALS_DIRECTORY: credentials, PORTCULLIS_DATA_DIR: join(dir, name) };
  const config = loadConfig({ configPath, env, cwd: dir });
  const logger = createLogger({ level: 'error', write: () => {} });
  const state = await openStateBackend(config, { logger, env, watch: false });
  const gateway = createGateway({ config, state, logger, env, scheduler: { ...systemScheduler, now: () => NOW }, usageFlushMs: 3_600_000 });
  const address = await listenLocal(gateway);
  return { gateway, state, baseUrl: `http://127.0.0.1:${address.port}` };
}

function chat(instance: Instance, key: string, model: string): Promise<RawResponse> {
  return request(instance.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 }),
  });
}

test('two instances started from the example config, as the documented ACL user, enforce one shared limit', async (t) => {
  await withRedis({ password: REDIS_ADMIN_PASSWORD }, async (admin) => {
    assert.equal(await admin.command(documentedAclRule(GATEWAY_REDIS_PASSWORD)), 'OK');
  });
  const configPath = localCopyOfExample();
  const a = await startInstance(configPath, 'a');
  t.after(async () => {
    a.gateway.server.closeAllConnections();
    await a.gateway.close();
    await a.state.close();
  });
  const b = await startInstance(configPath, 'b');
  t.after(async () => {
    b.gateway.server.closeAllConnections();
    await b.gateway.close();
    await b.state.close();
  });
  assert.equal(a.state.kind, 'redis');

  // /readyz, what the HAProxy example checks: Redis reachable and writable for this user.
  for (const instance of [a, b]) {
    const ready = await request(instance.baseUrl, 'GET', '/readyz');
    assert.deepEqual(
      { status: ready.status, body: ready.json() },
      { status: 200, body: { status: 'ready', checks: { config: 'ok', store: 'ok', upstreams: 'ok', shutdown: 'ok' }, openCircuits: [] } },
    );
  }

  const issued = await a.state.keys.create('example', { allowedAliases: ['service-chat'], limits: { requestsPerMinute: 2 } });
  // B's key mirror polls Redis every second (the default), with the commands the example's ACL must allow.
  await eventually(() => b.state.keys.authenticate(issued.key) !== null, 'B to see the key at its poll');
  assert.equal(b.state.keys.authenticate(issued.key)?.id, issued.record.id);

  const first = await chat(a, issued.key, 'service-chat');
  assert.equal(first.status, 200, first.text);
  assert.equal(first.headers['x-ratelimit-remaining-requests'], '1');
  assert.deepEqual((first.json() as { choices: unknown }).choices, [{ index: 0, message: { role: 'assistant', content: 'Hello.', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }]);
  const second = await chat(b, issued.key, 'service-chat');
  assert.equal(second.status, 200, second.text);
  assert.equal(second.headers['x-ratelimit-remaining-requests'], '0');
  for (const instance of [a, b]) {
    const refused = await chat(instance, issued.key, 'service-chat');
    assert.deepEqual(
      { status: refused.status, retryAfter: refused.headers['retry-after'], body: refused.json() },
      {
        status: 429,
        retryAfter: '30',
        body: {
          error: {
            message: 'Rate limit reached for requests per minute on this API key: limit 2. Try again in 30s.',
            type: 'rate_limit_error',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
      },
    );
  }
  // The key's allowed aliases hold on both instances too.
  const forbidden = await chat(b, issued.key, 'service-large');
  assert.equal(forbidden.status, 403, forbidden.text);

  // Both upstream calls went to the example's first target of service-chat, with its credential.
  assert.deepEqual(
    upstream.requests.map((r) => [r.url, r.headers['authorization'], (r.body as { model: string }).model]),
    [
      ['/v1/chat/completions', 'Bearer sk-local-from-credential', 'llama-3.1-8b-instruct'],
      ['/v1/chat/completions', 'Bearer sk-local-from-credential', 'llama-3.1-8b-instruct'],
    ],
  );

  // Every permit was settled in Redis (ZSCORE/ZREM in the settle script pass the ACL).
  const permits = `portcullis:{${issued.record.id}}:permits`;
  await withRedis({ password: REDIS_ADMIN_PASSWORD }, async (admin) => {
    await eventually(async () => (await admin.command(['ZCARD', permits])) === 0, 'the permits settled');
  });

  // A budget and a tokens-per-minute bucket (INCRBY, the tokens bucket) on the other instance.
  const budgetLimits = { requestsPerMinute: null, tokensPerMinute: 1000, concurrentRequests: null, tokenBudget: { tokens: 1000, period: 'month' as const }, costBudget: null };
  const budgeted = await b.state.keys.create('example-budget', { limits: budgetLimits });
  assert.equal((await chat(b, budgeted.key, 'service-chat')).status, 200);
  await eventually(async () => (await a.state.limiter.budgetUsed(budgeted.record.id, budgetLimits, NOW)).tokens === 11, 'the upstream total (11 tokens) settled');

  // Key changes through the example's user: update, rotate (HDEL of the old secret's hash), revoke.
  await a.state.keys.update(budgeted.record.id, { name: 'example-budget-2' });
  const rotated = await a.state.keys.rotate(budgeted.record.id);
  assert.equal(a.state.keys.authenticate(budgeted.key), null);
  assert.equal(a.state.keys.authenticate(rotated.key)?.name, 'example-budget-2');
  await a.state.keys.revoke(budgeted.record.id);
  assert.equal(a.state.keys.authenticate(rotated.key), null);

  // Last-used times merge into Redis (the merge script) and are read back by the other instance.
  await a.state.keys.flushLastUsed();
  await b.state.keys.flushLastUsed();
  assert.notEqual((await b.state.keys.get(issued.record.id)).lastUsedAt, null);

  // Usage flushes (MULTI, HINCRBY, PEXPIRE, SADD, EXEC) pass the ACL: both ledgers end empty.
  const id = issued.record.id;
  await eventually(async () => {
    await a.gateway.flushUsage();
    await b.gateway.flushUsage();
    return (await a.state.usage.totals()).get(id)?.requests === 5;
  }, 'five requests in the Redis totals');
  assert.deepEqual([a.gateway.usage.dirty(), b.gateway.usage.dirty()], [false, false], 'no flush was refused and kept for later');
  assert.deepEqual((await b.state.usage.totals()).get(id), { requests: 5, promptTokens: 18, completionTokens: 4, cachedTokens: 0, errors: 3, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 });

  // The documented rule is narrow: the gateway user reaches nothing outside its prefix.
  await withRedis({ username: 'portcullis', password: GATEWAY_REDIS_PASSWORD }, async (client) => {
    await assert.rejects(client.command(['GET', 'other-app:secret']), (error: unknown) => error instanceof RedisReplyError && error.message.startsWith('NOPERM'));
    await assert.rejects(client.command(['FLUSHALL']), (error: unknown) => error instanceof RedisReplyError && error.message.startsWith('NOPERM'));
  });
});
