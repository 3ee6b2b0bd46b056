// The client against a fake Redis on 127.0.0.1:0 that misbehaves on purpose:
// garbage, unsolicited replies, silence, and a check that commands are really
// pipelined (written before earlier replies arrive). The client's timers run
// on a ManualScheduler: deadlines are asserted to the millisecond and nothing
// waits in real time (client.system.test.ts keeps the real clock).

import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { createRedisClient, type RedisClient, type RedisClientOptions } from '../../src/redis/client.ts';
import { RedisProtocolError, RedisUnavailableError } from '../../src/redis/errors.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createRespDecoder, type RedisReply } from '../../src/redis/resp.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { createStateRecorder } from './state-recorder.ts';

interface FakeConnection {
  index: number;
  socket: Socket;
  /** Commands received so far on this connection. */
  commands: string[][];
}

interface FakeRedis {
  port: number;
  connections: FakeConnection[];
  close(): Promise<void>;
}

/** `onCommand` sees each decoded command; `onConnect` each new connection. */
async function startFakeRedis(handlers: {
  onConnect?(connection: FakeConnection): void;
  onCommand?(connection: FakeConnection, args: string[]): void;
}): Promise<FakeRedis> {
  const connections: FakeConnection[] = [];
  const server: Server = createServer((socket) => {
    const connection: FakeConnection = { index: connections.length, socket, commands: [] };
    connections.push(connection);
    const decoder = createRespDecoder({
      onReply(reply: RedisReply) {
        const args = (reply as RedisReply[]).map(String);
        connection.commands.push(args);
        handlers.onCommand?.(connection, args);
      },
    });
    socket.on('data', (chunk: Buffer) => decoder.feed(chunk));
    socket.on('error', () => {});
    handlers.onConnect?.(connection);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  const fake: FakeRedis = {
    port: address.port,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const c of connections) c.socket.destroy();
        server.close(() => resolve());
      }),
  };
  fakes.push(fake);
  return fake;
}

const fakes: FakeRedis[] = [];
const clients: RedisClient[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(fakes.map((f) => f.close()));
});

/** The backoff's jitter is 0: the first reconnect waits exactly half of baseDelayMs (default 50). */
const FIRST_RECONNECT_MS = 25;

/** A client on `scheduler`, closed after the file. */
function client(options: RedisClientOptions, scheduler = new ManualScheduler()): RedisClient {
  const created = createRedisClient({ scheduler, random: () => 0, ...options });
  clients.push(created);
  return created;
}

/** Whether `promise` has settled yet. */
function settledFlag(promise: Promise<unknown>): () => boolean {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

/** Resolves once the fake has received `count` commands on connection `index`. */
function received(fake: FakeRedis, count: number, index = 0): Promise<void> {
  return eventually(() => (fake.connections[index]?.commands.length ?? 0) >= count, `${count} commands on connection ${index}`);
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
  assert.equal(error.reason, reason);
}

const pong = (connection: FakeConnection): void => {
  connection.socket.write('+PONG\r\n');
};

test('commands are pipelined: all 3000 are written before the first reply', async () => {
  const fake = await startFakeRedis({
    onCommand(connection) {
      // Answers nothing until every command has arrived: a client waiting
      // for a reply before writing the next command would time out here.
      // 3000 also makes the client compact its in-flight queue mid-batch.
      if (connection.commands.length === 3000) {
        connection.socket.write(connection.commands.map((args) => `$${(args[1] as string).length}\r\n${args[1]}\r\n`).join(''));
      }
    },
  });
  const c = client({ host: '127.0.0.1', port: fake.port });
  const replies = await Promise.all(Array.from({ length: 3000 }, (_, i) => c.command(['ECHO', i])));
  assert.deepEqual(replies, Array.from({ length: 3000 }, (_, i) => String(i)));
  assert.equal(fake.connections.length, 1);
});

test('AUTH and SELECT go first, before commands issued during the connect', async () => {
  const fake = await startFakeRedis({ onCommand: (connection) => connection.socket.write('+OK\r\n') });
  const c = client({ host: '127.0.0.1', port: fake.port, username: 'gw', password: 'pw', db: 2 });
  assert.equal(await c.command(['SET', 'k', 'v']), 'OK');
  assert.deepEqual(fake.connections[0]?.commands, [['AUTH', 'gw', 'pw'], ['SELECT', '2'], ['SET', 'k', 'v']]);
});

test('garbage from the server is a protocol error: the connection is dropped and rebuilt', async () => {
  const lines: string[] = [];
  const fake = await startFakeRedis({
    onCommand(connection) {
      if (connection.index === 0) connection.socket.write('garbage\r\n');
      else pong(connection);
    },
  });
  const recorder = createStateRecorder();
  const scheduler = new ManualScheduler();
  const c = client({
    host: '127.0.0.1',
    port: fake.port,
    onStateChange: recorder.onStateChange,
    logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }),
  }, scheduler);
  const error = await rejection(c.command(['PING']));
  assertUnavailable(error, 'connection_lost');
  assert.ok(error.cause instanceof RedisProtocolError);
  assert.equal(error.cause.code, 'redis_protocol_error');
  assert.equal(error.cause.message, 'Unexpected reply type byte 0x67 (at byte 0)');

  // The reconnect waits for the backoff, and only for it.
  assert.deepEqual(scheduler.pending(), [FIRST_RECONNECT_MS]);
  await scheduler.advance(FIRST_RECONNECT_MS - 1);
  assert.equal(fake.connections.length, 1);
  await scheduler.advance(1);
  await recorder.reach('ready');
  assert.equal(await c.command(['PING']), 'PONG');
  assert.equal(fake.connections.length, 2);
  assert.equal(fake.connections[0]?.socket.destroyed || fake.connections[0]?.socket.readableEnded, true);
  assert.deepEqual(recorder.changes, ['connecting->ready', 'ready->reconnecting', 'reconnecting->ready']);
  const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    logged.map((entry) => [entry['level'], entry['msg'], entry['code'] ?? null]),
    [
      ['error', 'redis protocol error; dropping the connection', 'redis_protocol_error'],
      ['warn', 'redis connection lost', null],
    ],
  );
});

test('a reply nobody asked for is a protocol error', async () => {
  const fake = await startFakeRedis({
    onConnect(connection) {
      if (connection.index === 0) connection.socket.write('+surprise\r\n');
    },
    onCommand: pong,
  });
  const recorder = createStateRecorder();
  const scheduler = new ManualScheduler();
  const c = client({ host: '127.0.0.1', port: fake.port, onStateChange: recorder.onStateChange }, scheduler);
  await recorder.reach('reconnecting');
  assert.equal(await scheduler.next(), FIRST_RECONNECT_MS);
  await recorder.reach('ready');
  assert.equal(await c.command(['PING']), 'PONG');
  assert.equal(fake.connections.length, 2);
});

test('a reply over the bulk limit drops the connection', async () => {
  const fake = await startFakeRedis({ onCommand: (connection) => connection.socket.write('$5\r\nhello\r\n') });
  const c = client({ host: '127.0.0.1', port: fake.port, replyLimits: { maxBulkBytes: 4 } });
  const error = await rejection(c.command(['GET', 'k']));
  assertUnavailable(error, 'connection_lost');
  assert.ok(error.cause instanceof RedisProtocolError);
  assert.equal(error.cause.code, 'redis_reply_too_large');
});

test('silence: the oldest command times out at commandTimeoutMs, the rest are lost, the client reconnects', async () => {
  const fake = await startFakeRedis({});
  const recorder = createStateRecorder();
  const scheduler = new ManualScheduler();
  const c = client({ host: '127.0.0.1', port: fake.port, commandTimeoutMs: 100, onStateChange: recorder.onStateChange }, scheduler);
  const first = rejection(c.command(['GET', 'a']));
  const second = rejection(c.command(['GET', 'b']));
  const firstSettled = settledFlag(first);
  await received(fake, 2);
  assert.deepEqual(scheduler.pending(), [100]);
  await scheduler.advance(99);
  assert.equal(firstSettled(), false);
  assert.equal(c.state, 'ready');
  await scheduler.advance(1);
  const timedOut = await first;
  assertUnavailable(timedOut, 'command_timeout');
  assert.match(timedOut.message, /sent no reply within 100 ms; the connection is dropped and the command may have run/);
  assertUnavailable(await second, 'connection_lost');
  assert.equal(c.state, 'reconnecting');
  assert.equal(await scheduler.next(), FIRST_RECONNECT_MS);
  await recorder.reach('ready');
  assert.equal(fake.connections.length, 2);
  assert.deepEqual(fake.connections[0]?.commands, [['GET', 'a'], ['GET', 'b']]);
});

test('failed connects back off 25, 50, 100 ms; once connected the next outage starts again at 25', async () => {
  // The password makes a connection wait for its AUTH reply before it is
  // ready, so the fake failing a connection at once fails the attempt.
  const fake = await startFakeRedis({
    onConnect(connection) {
      if (connection.index < 3) connection.socket.destroy();
    },
    onCommand: (connection) => connection.socket.write('+OK\r\n'),
  });
  const lines: string[] = [];
  const scheduler = new ManualScheduler();
  const recorder = createStateRecorder();
  const c = client({
    host: '127.0.0.1',
    port: fake.port,
    password: 'pw',
    onStateChange: recorder.onStateChange,
    logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }),
  }, scheduler);
  const logged = (): Array<Record<string, unknown>> => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const failures = (): number => logged().filter((entry) => entry['msg'] === 'redis connect failed' || entry['msg'] === 'redis reconnect attempt failed').length;
  for (const [attempt, delay] of [25, 50, 100].entries()) {
    await eventually(() => failures() === attempt + 1, `failed attempt ${attempt + 1}`);
    assert.deepEqual(scheduler.pending(), [delay], `the wait after failed attempt ${attempt + 1}`);
    await scheduler.advance(delay);
  }
  await recorder.reach('ready');
  assert.equal(await c.command(['SET', 'k', 'v']), 'OK');
  const reconnected = logged().find((entry) => entry['msg'] === 'redis reconnected');
  // Down from the first failure at 0 to the ready connection at 25 + 50 + 100.
  assert.deepEqual([reconnected?.['down_ms'], reconnected?.['attempts']], [175, 3]);

  fake.connections[3]?.socket.destroy();
  await recorder.reach('reconnecting');
  assert.deepEqual(scheduler.pending(), [25]);
  assert.deepEqual(recorder.changes, ['connecting->reconnecting', 'reconnecting->ready', 'ready->reconnecting']);
});

test('maxQueued bounds the commands in flight and those held during the first connect', async () => {
  const fake = await startFakeRedis({});
  const c = client({ host: '127.0.0.1', port: fake.port, maxQueued: 2 });
  const held = [rejection(c.command(['GET', 'a'])), rejection(c.command(['GET', 'b']))];
  assertUnavailable(await rejection(c.command(['GET', 'c'])), 'queue_full');
  await received(fake, 2);
  assert.equal(c.state, 'ready');
  assertUnavailable(await rejection(c.command(['GET', 'd'])), 'queue_full');
  await c.close();
  for (const error of await Promise.all(held)) assertUnavailable(error, 'closed');
  assert.deepEqual(fake.connections[0]?.commands, [['GET', 'a'], ['GET', 'b']]);
});

test('a handshake never answered fails the first connect at connectTimeoutMs', async () => {
  const fake = await startFakeRedis({});
  const recorder = createStateRecorder();
  const scheduler = new ManualScheduler();
  const c = client({ host: '127.0.0.1', port: fake.port, password: 'pw', connectTimeoutMs: 100, onStateChange: recorder.onStateChange }, scheduler);
  const pending = rejection(c.command(['PING']));
  const pendingSettled = settledFlag(pending);
  await received(fake, 1);
  assert.deepEqual(fake.connections[0]?.commands, [['AUTH', 'pw']]);
  await scheduler.advance(99);
  assert.equal(pendingSettled(), false);
  assert.equal(c.state, 'connecting');
  await scheduler.advance(1);
  const error = await pending;
  assertUnavailable(error, 'not_connected');
  assert.match(error.message, /no ready connection within connectTimeoutMs \(100 ms\)/);
  assert.equal(c.state, 'reconnecting');
  assertUnavailable(await rejection(c.command(['PING'])), 'not_connected');
  // The reply deadline of the AUTH went with the connection; the backoff is all that is left.
  assert.deepEqual(scheduler.pending(), [FIRST_RECONNECT_MS]);
});

test('nothing listening: the first connect fails, then commands fail fast', async () => {
  const fake = await startFakeRedis({});
  const port = fake.port;
  await fake.close();
  const c = client({ host: '127.0.0.1', port });
  const error = await rejection(c.command(['PING']));
  assertUnavailable(error, 'not_connected');
  assert.match(error.message, new RegExp(`^Redis at 127\\.0\\.0\\.1:${port} is not connected \\(connecting; last error: connect ECONNREFUSED`));
  assert.equal(c.state, 'reconnecting');
  assertUnavailable(await rejection(c.command(['PING'])), 'not_connected');
});

test('a bad argument rejects only its own command', async () => {
  const fake = await startFakeRedis({ onCommand: pong });
  const c = client({ host: '127.0.0.1', port: fake.port });
  const [bad, good] = await Promise.allSettled([c.command(['SET', 'k', Number.NaN]), c.command(['PING'])]);
  assert.equal(bad.status, 'rejected');
  assert.ok(bad.reason instanceof TypeError);
  assert.deepEqual(good, { status: 'fulfilled', value: 'PONG' });
});

test('a connection kept busy re-arms its one reply timer instead of timing out a newer command', async () => {
  // The one timer is armed for the first command's deadline (500). When it
  // fires, the second, younger command is the oldest in flight and has 250 ms
  // left: the timer must be re-armed for those, not fire a timeout.
  const fake = await startFakeRedis({});
  const recorder = createStateRecorder();
  const scheduler = new ManualScheduler();
  const c = client({ host: '127.0.0.1', port: fake.port, commandTimeoutMs: 500, onStateChange: recorder.onStateChange }, scheduler);
  const first = c.command(['PING']);
  await received(fake, 1);
  assert.deepEqual(scheduler.pending(), [500]);
  await scheduler.advance(250);
  pong(fake.connections[0] as FakeConnection);
  assert.equal(await first, 'PONG');

  const second = c.command(['PING']);
  const secondSettled = settledFlag(second);
  await received(fake, 2);
  await scheduler.advance(250);
  assert.equal(secondSettled(), false);
  assert.deepEqual(scheduler.pending(), [250], 're-armed for what is left of the second command\'s 500 ms');
  await scheduler.advance(249);
  pong(fake.connections[0] as FakeConnection);
  assert.equal(await second, 'PONG');
  await scheduler.advance(1);
  assert.deepEqual(recorder.changes, ['connecting->ready']);
  assert.equal(fake.connections.length, 1);
});

test('an onStateChange that throws is logged and changes nothing', async () => {
  const lines: string[] = [];
  const fake = await startFakeRedis({ onCommand: pong });
  const c = client({
    host: '127.0.0.1',
    port: fake.port,
    logger: createLogger({ level: 'error', write: (line) => lines.push(line) }),
    onStateChange() {
      throw new Error('observer bug');
    },
  });
  assert.equal(await c.command(['PING']), 'PONG');
  assert.equal(c.state, 'ready');
  const logged = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
  assert.deepEqual([logged['msg'], logged['error']], ['redis onStateChange callback threw', 'observer bug']);
});

test('options that cannot work are refused at creation', () => {
  assert.throws(() => createRedisClient({ host: '', port: 6379 }), TypeError);
  assert.throws(() => createRedisClient({ host: 'h', port: 0 }), RangeError);
  assert.throws(() => createRedisClient({ host: 'h', port: 6379, db: -1 }), RangeError);
  assert.throws(() => createRedisClient({ host: 'h', port: 6379, username: 'u' }), TypeError);
  assert.throws(() => createRedisClient({ host: 'h', port: 6379, commandTimeoutMs: 0 }), RangeError);
  assert.throws(() => createRedisClient({ host: 'h', port: 6379, reconnect: { maxDelayMs: 10 } }), RangeError);
});
