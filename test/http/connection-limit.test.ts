// limits.maxConnections on a real listener: the connections under the cap are
// served and keep being served; one beyond it gets exactly the 503 bytes and
// is closed, even when it sends a large body at once; the refusals are logged
// once per burst and counted; a freed slot or a raised cap (a reload) lets the
// next one in; beyond the refusal margin node drops connections without a
// word and they are still counted. The burst's quiet time and the refused
// connections' linger run on a manual scheduler and are asserted at their
// exact moments. A TLS listener: connection-limit.system.test.ts.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/config/config.ts';
import { REFUSAL_LINGER_MS } from '../../src/http/connection-limit.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { closeShells, connect, OK_REQUEST, REFUSAL, REFUSAL_QUIET_MS, served, start } from './connection-limit-fixtures.ts';

after(closeShells);

const BURST_START = 'connection limit reached: new connections are refused with 503 too_many_connections';
const BURST_END = 'connection limit: no more refusals';

test('beyond maxConnections: the exact 503 bytes, then closed; those open keep being served; one log line per burst, its end exactly the quiet time after the last refusal', async () => {
  const scheduler = new ManualScheduler();
  const s = await start({ maxConnections: 2 }, { scheduler });
  const first = await served(s.port);
  const second = await served(s.port);
  assert.equal(s.shell.openConnections, 2);

  const refusedTexts = await Promise.all([1, 2, 3].map(async () => (await connect(s.port)).closed));
  assert.deepEqual(refusedTexts, [REFUSAL, REFUSAL, REFUSAL]);
  assert.equal(s.refused(), 3);
  assert.equal(s.shell.openConnections, 2);

  // The connections under the cap are untouched.
  first.socket.write(OK_REQUEST);
  assert.match(await first.answers(2), /\r\n\r\n\{"ok":true\}HTTP\/1\.1 200 OK\r\n/);
  second.socket.write(OK_REQUEST);
  await second.answers(2);

  const started = s.logs.filter((l) => l['msg'] === BURST_START);
  assert.deepEqual(started.map((l) => [l['level'], l['listener'], l['maxConnections']]), [['warn', 'api', 2]]);
  // All three refusals came at the scheduler's moment 0: the burst is over at REFUSAL_QUIET_MS, not before.
  await scheduler.advance(REFUSAL_QUIET_MS - 1);
  assert.equal(s.logs.filter((l) => l['msg'] === BURST_END).length, 0);
  await scheduler.advance(1);
  const ended = s.logs.filter((l) => l['msg'] === BURST_END);
  assert.deepEqual(
    ended.map((l) => [l['level'], l['listener'], l['refused'], l['durationMs']]),
    [['info', 'api', 3, 0]],
  );
  // A refused connection never became a request: no access-log line for it.
  assert.equal(s.logs.filter((l) => l['msg'] === 'request').length, 4);

  // A slot freed is a slot for the next connection.
  first.socket.destroy();
  await eventually(() => s.shell.openConnections === 1, 'the first connection to close');
  const third = await served(s.port);
  assert.equal(s.shell.openConnections, 2);
  second.socket.destroy();
  third.socket.destroy();
});

test('a refused client that sends its whole request at once still reads the 503, not a reset', async () => {
  const s = await start({ maxConnections: 1 });
  const holder = await served(s.port);
  const body = 'x'.repeat(256 * 1024);
  const refused = await connect(s.port, `POST /ok HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  assert.equal(await refused.closed, REFUSAL);
  holder.socket.destroy();
});

test('a reload that raises maxConnections lets the next connection in at once', async () => {
  const s = await start({ maxConnections: 1 });
  const holder = await served(s.port);
  assert.equal(await (await connect(s.port)).closed, REFUSAL);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 2 });
  const next = await served(s.port);
  assert.equal(s.shell.openConnections, 2);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 1 });
  // Lowering it keeps those open; the next one is refused.
  next.socket.write(OK_REQUEST);
  await next.answers(2);
  assert.equal(await (await connect(s.port)).closed, REFUSAL);
  holder.socket.destroy();
  next.socket.destroy();
});

test('beyond the refusal margin (16 over a small cap) node drops the connection without an answer; still counted; the refused ones go at the end of their linger', async () => {
  const scheduler = new ManualScheduler();
  const s = await start({ maxConnections: 1 }, { scheduler });
  const holder = await served(s.port);
  // Refused connections that never close their side stay open for their linger: they fill the margin.
  const lingering = await Promise.all(Array.from({ length: 16 }, () => connect(s.port, '', true)));
  await eventually(() => lingering.every((raw) => raw.text() === REFUSAL), `the 16 refusals: ${JSON.stringify(lingering.map((raw) => raw.text().length))}`);
  const dropped = await connect(s.port);
  assert.equal(await dropped.closed, '');
  await eventually(() => s.refused() === 17, 'the dropped connection to be counted');
  holder.socket.write(OK_REQUEST);
  await holder.answers(2);
  // The server's sides of the 16 refused connections: open until the linger ends, then destroyed.
  const refusedSides = s.accepted.slice(1);
  assert.equal(refusedSides.length, 16);
  await scheduler.advance(REFUSAL_LINGER_MS - 1);
  assert.deepEqual(refusedSides.filter((socket) => socket.destroyed).length, 0);
  await scheduler.advance(1);
  assert.deepEqual(refusedSides.filter((socket) => socket.destroyed).length, 16);
  for (const raw of lingering) raw.socket.destroy();
  holder.socket.destroy();
});
