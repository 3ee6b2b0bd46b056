// The client against a real redis-server (../support/redis-server.ts), on the
// real clock: a reply really late, Redis really gone and back.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRedisClient, type RedisClient, type RedisClientOptions } from '../../src/redis/client.ts';
import { RedisReplyError, RedisUnavailableError } from '../../src/redis/errors.ts';
import { parseRedisUrl } from '../../src/redis/redis-url.ts';
import type { RedisReply } from '../../src/redis/resp.ts';
import { defineScript } from '../../src/redis/script.ts';
import { sharedRedis, startRedisServer, type RedisServerHandle, type SharedRedis } from '../support/redis-server.ts';
import { createStateRecorder } from './state-recorder.ts';

/** Busy-waits inside Redis for ARGV[1] ms: a command that is slow for sure. */
const busyScript = defineScript(`
local t0 = redis.call('TIME')
local start = tonumber(t0[1]) * 1000000 + tonumber(t0[2])
while true do
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - start >= tonumber(ARGV[1]) * 1000 then return 1 end
end`);

const clients: RedisClient[] = [];
function client(options: RedisClientOptions): RedisClient {
  const created = createRedisClient(options);
  clients.push(created);
  return created;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

function assertUnavailable(error: unknown, reason: string): asserts error is RedisUnavailableError {
  assert.ok(error instanceof RedisUnavailableError, `expected RedisUnavailableError, got ${String(error)}`);
  assert.equal(error.code, 'redis_unavailable');
  assert.equal(error.reason, reason);
}

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

describe('client against redis-server', () => {
  let redis: SharedRedis;
  before(async () => {
    redis = await sharedRedis();
  });

  test('a command issued before the first connect is held, then answered', async () => {
    const recorder = createStateRecorder();
    const c = client({ ...parseRedisUrl(redis.url), onStateChange: recorder.onStateChange });
    assert.equal(c.state, 'connecting');
    assert.equal(await c.command(['PING']), 'PONG');
    assert.equal(c.state, 'ready');
    assert.deepEqual(recorder.changes, ['connecting->ready']);
  });

  test('1000 pipelined commands are answered in order', async () => {
    const c = client(parseRedisUrl(redis.url));
    await c.command(['DEL', 'pipeline:n']);
    const increments = Array.from({ length: 1000 }, () => c.command(['INCR', 'pipeline:n']));
    assert.deepEqual(await Promise.all(increments), Array.from({ length: 1000 }, (_, i) => i + 1));

    const mixed: Promise<RedisReply>[] = [];
    for (let i = 0; i < 500; i += 1) {
      mixed.push(c.command(['SET', `pipeline:k${i}`, `v${i}é`]));
      mixed.push(c.command(['GET', `pipeline:k${i}`]));
    }
    const replies = await Promise.all(mixed);
    assert.deepEqual(replies, Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? 'OK' : `v${(i - 1) / 2}é`)));
  });

  test('reply types: integers, nulls, arrays, Buffers in', async () => {
    const c = client(parseRedisUrl(redis.url));
    assert.equal(await c.command(['SET', 'types:bin', Buffer.from('a\r\nb')]), 'OK');
    assert.equal(await c.command(['GET', 'types:bin']), 'a\r\nb');
    assert.equal(await c.command(['GET', 'types:missing']), null);
    assert.equal(await c.command(['SET', 'types:n', 9007199254740993n.toString()]), 'OK');
    assert.equal(await c.command(['INCRBY', 'types:n', 1]), 9007199254740994n);
    assert.deepEqual(await c.command(['MGET', 'types:bin', 'types:missing']), ['a\r\nb', null]);
    assert.deepEqual(await c.command(['LRANGE', 'types:missing', 0, -1]), []);
  });

  test('an error reply rejects with its code; one nested in EXEC stays a value', async () => {
    const c = client(parseRedisUrl(redis.url));
    await c.command(['SET', 'errors:s', 'x']);
    const error = await rejection(c.command(['LPUSH', 'errors:s', 'y']));
    assert.ok(error instanceof RedisReplyError);
    assert.equal(error.code, 'WRONGTYPE');
    assert.equal(error.message, 'WRONGTYPE Operation against a key holding the wrong kind of value');

    const [multi, set, push, exec] = await Promise.all([
      c.command(['MULTI']),
      c.command(['SET', 'errors:s', '1']),
      c.command(['LPUSH', 'errors:s', 'y']),
      c.command(['EXEC']),
    ]);
    assert.deepEqual([multi, set, push], ['OK', 'QUEUED', 'QUEUED']);
    assert.ok(Array.isArray(exec));
    assert.equal(exec[0], 'OK');
    assert.ok(exec[1] instanceof RedisReplyError);
    assert.equal(exec[1].code, 'WRONGTYPE');
    assert.equal(c.state, 'ready');
  });

  test('evalScript uses EVALSHA, and EVAL once after SCRIPT FLUSH', async () => {
    const c = client(parseRedisUrl(redis.url));
    const script = defineScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    assert.equal(await c.command(['SCRIPT', 'LOAD', script.source]), script.sha1);
    await c.command(['DEL', 'script:n']);
    await c.command(['SCRIPT', 'FLUSH']);
    await c.command(['CONFIG', 'RESETSTAT']);

    assert.equal(await c.evalScript(script, ['script:n'], [5]), 5);
    assert.equal(await c.evalScript(script, ['script:n'], ['7']), 12);

    const stats = String(await c.command(['INFO', 'commandstats']));
    // Two EVALSHA (the first answered NOSCRIPT), one EVAL.
    assert.match(stats, /cmdstat_evalsha:calls=2,.*failed_calls=1/);
    assert.match(stats, /cmdstat_eval:calls=1,/);
    assert.deepEqual(await c.command(['SCRIPT', 'EXISTS', script.sha1]), [1]);
  });

  test('an error raised by a script rejects with the script error code', async () => {
    const c = client(parseRedisUrl(redis.url));
    const error = await rejection(c.evalScript(defineScript("return redis.error_reply('OVERLIMIT no tokens left')"), [], []));
    assert.ok(error instanceof RedisReplyError);
    assert.equal(error.code, 'OVERLIMIT');
    assert.equal(error.message, 'OVERLIMIT no tokens left');
  });

  test('SELECT: a client on one database does not see another', async () => {
    const other = await sharedRedis();
    const mine = client(parseRedisUrl(redis.url));
    const theirs = client(parseRedisUrl(other.url));
    assert.notEqual(redis.db, other.db);
    assert.equal(await mine.command(['SET', 'select:k', 'in-mine']), 'OK');
    assert.equal(await theirs.command(['GET', 'select:k']), null);
    assert.equal(await mine.command(['GET', 'select:k']), 'in-mine');
    assert.match(String(await mine.command(['CLIENT', 'INFO'])), new RegExp(` db=${redis.db} `));
    assert.match(String(await theirs.command(['CLIENT', 'INFO'])), new RegExp(` db=${other.db} `));
  });

  test('a reply later than commandTimeoutMs rejects it and the pipeline behind it, then the client reconnects', async () => {
    const recorder = createStateRecorder();
    const c = client({ ...parseRedisUrl(redis.url), commandTimeoutMs: 100, onStateChange: recorder.onStateChange });
    const patient = client(parseRedisUrl(redis.url));
    await patient.command(['SCRIPT', 'LOAD', busyScript.source]);
    await c.command(['PING']);

    const slow = rejection(c.evalScript(busyScript, [], [300]));
    const behind = rejection(c.command(['PING']));
    assertUnavailable(await slow, 'command_timeout');
    assertUnavailable(await behind, 'connection_lost');
    await recorder.reach('ready');
    // The script still runs in Redis; the patient client waits it out.
    assert.equal(await patient.command(['PING']), 'PONG');
    assert.equal(await c.command(['PING']), 'PONG');
    assert.deepEqual(recorder.changes, ['connecting->ready', 'ready->reconnecting', 'reconnecting->ready']);
  });

  test('close() rejects pending commands, refuses new ones and is idempotent', async () => {
    const recorder = createStateRecorder();
    const c = client({ ...parseRedisUrl(redis.url), onStateChange: recorder.onStateChange });
    await c.command(['PING']);
    const pending = rejection(c.evalScript(busyScript, [], [100]));
    const closing = c.close();
    assert.equal(c.close(), closing);
    assertUnavailable(await pending, 'closed');
    await closing;
    assert.equal(c.state, 'closed');
    assertUnavailable(await rejection(c.command(['PING'])), 'closed');
    assert.deepEqual(recorder.changes, ['connecting->ready', 'ready->closed']);
  });
});

describe('client against a redis-server with requirepass', () => {
  let redis: RedisServerHandle;
  before(async () => {
    redis = await startRedisServer({ requirepass: 's3cret' });
  });
  after(async () => {
    await redis.stop();
  });

  test('AUTH with the password, and with username default', async () => {
    assert.equal(redis.url, `redis://:s3cret@127.0.0.1:${redis.port}`);
    assert.equal(await client(parseRedisUrl(redis.url)).command(['PING']), 'PONG');
    const withUser = client({ host: '127.0.0.1', port: redis.port, username: 'default', password: 's3cret', db: 1 });
    assert.match(String(await withUser.command(['CLIENT', 'INFO'])), / db=1 .* user=default /);
  });

  test('a wrong password is a clear error, and commands keep failing fast', async () => {
    const recorder = createStateRecorder();
    const c = client({ host: '127.0.0.1', port: redis.port, password: 'wrong', onStateChange: recorder.onStateChange });
    const error = await rejection(c.command(['PING']));
    assertUnavailable(error, 'not_connected');
    assert.match(error.message, /Redis refused AUTH: WRONGPASS invalid username-password pair/);
    assert.ok(error.cause instanceof Error);
    assert.ok(error.cause.cause instanceof RedisReplyError);
    assert.equal(error.cause.cause.code, 'WRONGPASS');
    assert.equal(c.state, 'reconnecting');

    const again = await rejection(c.command(['PING']));
    assertUnavailable(again, 'not_connected');
    assert.match(again.message, /WRONGPASS/);
    assert.equal(error.message.includes('wrong'), false, 'the password is not in the message');
  });

  test('no password: commands are refused with NOAUTH', async () => {
    const error = await rejection(client({ host: '127.0.0.1', port: redis.port }).command(['GET', 'k']));
    assert.ok(error instanceof RedisReplyError);
    assert.equal(error.code, 'NOAUTH');
  });
});

describe('client while redis-server stops and restarts', () => {
  let redis: RedisServerHandle;
  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    await redis.stop();
  });

  test('commands in flight are rejected, commands fail fast while away, and it recovers on the same port', async () => {
    const recorder = createStateRecorder();
    const c = client({ ...parseRedisUrl(redis.url), reconnect: { baseDelayMs: 20, maxDelayMs: 200 }, onStateChange: recorder.onStateChange });
    assert.equal(await c.command(['SET', 'restart:k', 'before']), 'OK');
    // Loaded, so EVALSHA runs at once: a NOSCRIPT fallback would send EVAL
    // only after the GET behind it was answered.
    await c.command(['SCRIPT', 'LOAD', busyScript.source]);

    // Redis killed while a command is running: it and the one behind it are lost.
    const running = rejection(c.evalScript(busyScript, [], [2000]));
    const behind = rejection(c.command(['GET', 'restart:k']));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await redis.kill();
    assertUnavailable(await running, 'connection_lost');
    assertUnavailable(await behind, 'connection_lost');
    await recorder.reach('reconnecting');
    assertUnavailable(await rejection(c.command(['PING'])), 'not_connected');

    await redis.restart();
    await recorder.reach('ready');
    assert.deepEqual(recorder.changes, ['connecting->ready', 'ready->reconnecting', 'reconnecting->ready']);
    const afterKill = recorder.changes.length;
    assert.equal(await c.command(['GET', 'restart:k']), null, 'a fresh server without persistence');
    assert.equal(await c.command(['SET', 'restart:k', 'after']), 'OK');

    // A clean stop (SIGTERM) is the same story.
    await redis.stop();
    await recorder.reach('reconnecting');
    const away = await rejection(c.command(['PING']));
    assertUnavailable(away, 'not_connected');
    assert.match(away.message, /^Redis at 127\.0\.0\.1:\d+ is not connected \(reconnecting; last error: /);
    await redis.restart();
    await recorder.reach('ready');
    assert.equal(await c.command(['PING']), 'PONG');

    // A server stopping with SIGTERM may still accept a connection while it shuts down: the client can
    // be ready on it for a moment and lose it again, so the stop is one or more such round trips.
    const afterStop = recorder.changes.slice(afterKill);
    assert.ok(afterStop.length >= 2 && afterStop.length % 2 === 0, afterStop.join(', '));
    for (let i = 0; i < afterStop.length; i += 2) assert.deepEqual(afterStop.slice(i, i + 2), ['ready->reconnecting', 'reconnecting->ready']);
  });
});
