// The client against a fake Redis on 127.0.0.1:0 that misbehaves on purpose:
// garbage, unsolicited replies, silence, and a check that commands are really
// pipelined (written before earlier replies arrive).

import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { createRedisClient, type RedisClient, type RedisClientOptions } from '../../src/redis/client.ts';
import { RedisProtocolError, RedisUnavailableError } from '../../src/redis/errors.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createRespDecoder, type RedisReply } from '../../src/redis/resp.ts';
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
  const c = client({
    host: '127.0.0.1',
    port: fake.port,
    onStateChange: recorder.onStateChange,
    logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }),
  });
  const error = await rejection(c.command(['PING']));
  assertUnavailable(error, 'connection_lost');
  assert.ok(error.cause instanceof RedisProtocolError);
  assert.equal(error.cause.code, 'redis_protocol_error');
  assert.equal(error.cause.message, 'Unexpected reply type byte 0x67 (at byte 0)');

  await recorder.reach('ready', 5000);
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
  const c = client({ host: '127.0.0.1', port: fake.port, onStateChange: recorder.onStateChange });
  await recorder.reach('reconnecting');
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

test('silence: the oldest command times out, the rest are lost, the client reconnects', async () => {
  const fake = await startFakeRedis({});
  const recorder = createStateRecorder();
  const c = client({ host: '127.0.0.1', port: fake.port, commandTimeoutMs: 100, onStateChange: recorder.onStateChange });
  const first = rejection(c.command(['GET', 'a']));
  const second = rejection(c.command(['GET', 'b']));
  const timedOut = await first;
  assertUnavailable(timedOut, 'command_timeout');
  assert.match(timedOut.message, /sent no reply within 100 ms; the connection is dropped and the command may have run/);
  assertUnavailable(await second, 'connection_lost');
  await recorder.reach('reconnecting');
  await recorder.reach('ready');
  assert.equal(fake.connections.length, 2);
  assert.deepEqual(fake.connections[0]?.commands, [['GET', 'a'], ['GET', 'b']]);
});

test('maxQueued bounds the commands in flight and those held during the first connect', async () => {
  const fake = await startFakeRedis({});
  const c = client({ host: '127.0.0.1', port: fake.port, maxQueued: 2, commandTimeoutMs: 5000 });
  const held = [rejection(c.command(['GET', 'a'])), rejection(c.command(['GET', 'b']))];
  assertUnavailable(await rejection(c.command(['GET', 'c'])), 'queue_full');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(c.state, 'ready');
  assertUnavailable(await rejection(c.command(['GET', 'd'])), 'queue_full');
  await c.close();
  for (const error of await Promise.all(held)) assertUnavailable(error, 'closed');
  assert.deepEqual(fake.connections[0]?.commands, [['GET', 'a'], ['GET', 'b']]);
});

test('a handshake never answered fails the first connect after connectTimeoutMs', async () => {
  const fake = await startFakeRedis({});
  const recorder = createStateRecorder();
  const c = client({ host: '127.0.0.1', port: fake.port, password: 'pw', connectTimeoutMs: 100, onStateChange: recorder.onStateChange });
  const error = await rejection(c.command(['PING']));
  assertUnavailable(error, 'not_connected');
  assert.match(error.message, /no ready connection within connectTimeoutMs \(100 ms\)/);
  assert.equal(c.state, 'reconnecting');
  assertUnavailable(await rejection(c.command(['PING'])), 'not_connected');
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
  // Each reply comes 250 ms after its command, within the 500 ms timeout.
  // The timer armed for the first command fires while the second, younger
  // one is the oldest in flight; it must be re-armed, not fire a timeout.
  const fake = await startFakeRedis({
    onCommand(connection) {
      setTimeout(() => pong(connection), 250);
    },
  });
  const recorder = createStateRecorder();
  const c = client({ host: '127.0.0.1', port: fake.port, commandTimeoutMs: 500, onStateChange: recorder.onStateChange });
  assert.equal(await c.command(['PING']), 'PONG');
  assert.equal(await c.command(['PING']), 'PONG');
  assert.equal(await c.command(['PING']), 'PONG');
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
