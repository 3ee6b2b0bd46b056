// The connection caps on a real listener. Connections with a request in
// flight are never touched: beyond maxConnections with every connection busy,
// a new one gets exactly the 503 bytes and is closed, even when it sends a
// large body at once; those open keep being served. With connections that
// hold no request, the oldest of them gives its place to the new one: a
// kept-alive one is closed without a byte, a fresh one gets the 503 (and its
// request, completed later, is not served). One address beyond its share is
// refused with its own message, a trusted proxy's connections are not counted
// per address. Refusals and reclaims are logged once per burst and counted;
// a raised cap (a reload) lets the next one in; beyond the refusal margin the
// refused connections are closed at once and still counted. Burst quiet times
// and lingers run on a manual scheduler and are asserted at their exact
// moments. A TLS listener: connection-limit.system.test.ts.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/config/config.ts';
import { trustedProxies } from '../../src/http/client-address.ts';
import { REFUSAL_LINGER_MS, shareKey } from '../../src/http/connection-limit.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { ADDRESS_REFUSAL, busy, closeShells, connect, OK_REQUEST, REFUSAL, REFUSAL_QUIET_MS, servedFrom, start } from './connection-limit-fixtures.ts';

after(closeShells);

const BURST_START = 'connection limit reached: new connections are refused with 503 too_many_connections';
const BURST_END = 'connection limit: no more refusals';
const RECLAIM_START = 'connection limit reached: connections without a request in flight are closed, oldest first, to make room';
const RECLAIM_END = 'connection limit: no more connections closed to make room';
const SHARE_START = 'connection limit per address reached: new connections from an address at its share are refused with 503 too_many_connections';
const SHARE_END = 'connection limit per address: no more refusals';

test('every connection busy: beyond maxConnections the exact 503 bytes, then closed; those open are answered; one log line per burst, its end exactly the quiet time after the last refusal', async () => {
  const scheduler = new ManualScheduler();
  const s = await start({ maxConnections: 2, maxConnectionsPerAddress: 2 }, { scheduler });
  const first = await busy(s);
  const second = await busy(s);
  assert.equal(s.shell.openConnections, 2);

  const refusedTexts = await Promise.all([1, 2, 3].map(async () => (await connect(s.port, '', false, '127.0.0.9')).closed));
  assert.deepEqual(refusedTexts, [REFUSAL, REFUSAL, REFUSAL]);
  assert.equal(s.refused(), 3);
  assert.equal(s.reclaimed(), 0);
  assert.equal(s.shell.openConnections, 2);

  // The requests in flight are untouched.
  s.release();
  assert.match(await first.answers(1), /^HTTP\/1\.1 200 OK\r\n[^]*\{"held":true\}$/);
  assert.match(await second.answers(1), /^HTTP\/1\.1 200 OK\r\n[^]*\{"held":true\}$/);

  const started = s.logs.filter((l) => l['msg'] === BURST_START);
  assert.deepEqual(started.map((l) => [l['level'], l['listener'], l['maxConnections']]), [['warn', 'api', 2]]);
  await scheduler.advance(REFUSAL_QUIET_MS - 1);
  assert.equal(s.logs.filter((l) => l['msg'] === BURST_END).length, 0);
  await scheduler.advance(1);
  assert.deepEqual(
    s.logs.filter((l) => l['msg'] === BURST_END).map((l) => [l['level'], l['listener'], l['refused'], l['durationMs']]),
    [['info', 'api', 3, 0]],
  );
  // A refused connection never became a request: no access-log line for it.
  assert.equal(s.logs.filter((l) => l['msg'] === 'request').length, 2);
  first.socket.destroy();
  second.socket.destroy();
});

test('full, with kept-alive connections: the one idle longest is closed without a byte, the new one served; then the next oldest', async () => {
  const scheduler = new ManualScheduler();
  const s = await start({ maxConnections: 3, maxConnectionsPerAddress: 3 }, { scheduler });
  const older = await servedFrom(s.port, '127.0.0.2');
  const newer = await servedFrom(s.port, '127.0.0.3');
  const holder = await busy(s, '127.0.0.4');
  const olderText = older.text();

  const incoming = await servedFrom(s.port, '127.0.0.5');
  assert.equal(await older.closed, olderText, 'the reclaimed keep-alive connection got nothing more');
  assert.equal(newer.socket.destroyed, false);
  assert.equal(s.shell.openConnections, 3);
  assert.equal(s.reclaimed(), 1);
  assert.equal(s.refused(), 0);

  // `incoming` is idle now too, but newer than `newer`: `newer` goes next.
  const newerText = newer.text();
  const another = await servedFrom(s.port, '127.0.0.6');
  assert.equal(await newer.closed, newerText);
  assert.equal(incoming.socket.destroyed, false);
  assert.equal(s.reclaimed(), 2);

  // The busy one was never a candidate; its answer arrives whole.
  s.release();
  assert.match(await holder.answers(1), /\{"held":true\}$/);
  assert.deepEqual(
    s.logs.filter((l) => l['msg'] === RECLAIM_START).map((l) => [l['level'], l['listener'], l['maxConnections']]),
    [['warn', 'api', 3]],
  );
  await scheduler.advance(REFUSAL_QUIET_MS);
  assert.deepEqual(
    s.logs.filter((l) => l['msg'] === RECLAIM_END).map((l) => [l['listener'], l['reclaimed'], l['durationMs']]),
    [['api', 2, 0]],
  );
  assert.equal(s.logs.filter((l) => l['msg'] === BURST_START).length, 0);
  for (const raw of [holder, incoming, another]) raw.socket.destroy();
});

test('full, with a connection that never sent a request: it gets the 503 and its request, completed later, is not served', async () => {
  const s = await start({ maxConnections: 2, maxConnectionsPerAddress: 2 });
  const silent = await connect(s.port, 'GET /ok HTTP/1.1\r\n', true, '127.0.0.2');
  await eventually(() => s.shell.openConnections === 1, 'the silent connection to be accepted');
  const holder = await busy(s, '127.0.0.3');
  const incoming = await servedFrom(s.port, '127.0.0.4');
  await eventually(() => silent.text() === REFUSAL, `the 503 on the silent connection: ${JSON.stringify(silent.text())}`);
  // The rest of its request arrives after the answer: not served, no access-log line.
  silent.socket.end('Host: x\r\n\r\n');
  assert.equal(await silent.closed, REFUSAL);
  assert.equal(s.reclaimed(), 1);
  incoming.socket.write(OK_REQUEST);
  await incoming.answers(2);
  assert.deepEqual(
    s.logs.filter((l) => l['msg'] === 'request').map((l) => [l['path'], l['status']]),
    [
      ['/ok', 200],
      ['/ok', 200],
    ],
  );
  s.release();
  await holder.answers(1);
  holder.socket.destroy();
  incoming.socket.destroy();
});

test('one address at its share is refused with its own message; other addresses are admitted; a freed place is the address\'s again', async () => {
  const scheduler = new ManualScheduler();
  const s = await start({ maxConnections: 10, maxConnectionsPerAddress: 2 }, { scheduler });
  const a1 = await servedFrom(s.port, '127.0.0.2');
  const a2 = await connect(s.port, '', false, '127.0.0.2');
  await eventually(() => s.shell.openConnections === 2, 'two connections');
  assert.equal(await (await connect(s.port, '', false, '127.0.0.2')).closed, ADDRESS_REFUSAL);
  assert.equal(await (await connect(s.port, OK_REQUEST, false, '127.0.0.2')).closed, ADDRESS_REFUSAL);
  const b = await servedFrom(s.port, '127.0.0.3');
  assert.equal(s.refused(), 2);
  assert.equal(s.reclaimed(), 0);
  assert.equal(s.shell.openConnections, 3);
  assert.deepEqual(
    s.logs.filter((l) => l['msg'] === SHARE_START).map((l) => [l['level'], l['listener'], l['maxConnectionsPerAddress']]),
    [['warn', 'api', 2]],
  );
  await scheduler.advance(REFUSAL_QUIET_MS);
  assert.deepEqual(s.logs.filter((l) => l['msg'] === SHARE_END).map((l) => [l['refused']]), [[2]]);
  assert.equal(s.logs.filter((l) => l['msg'] === BURST_START).length, 0);
  a2.socket.destroy();
  await eventually(() => s.shell.openConnections === 2, 'the freed place');
  const a3 = await servedFrom(s.port, '127.0.0.2');
  for (const raw of [a1, a3, b]) raw.socket.destroy();
});

test('unset, the share is derived from maxConnections (2 of 8, 4 of 16); a reload changes both', async () => {
  const s = await start({ maxConnections: 8 });
  const held = [await servedFrom(s.port, '127.0.0.4'), await servedFrom(s.port, '127.0.0.4')];
  assert.equal(await (await connect(s.port, '', false, '127.0.0.4')).closed, ADDRESS_REFUSAL);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 8, maxConnectionsPerAddress: 3 });
  held.push(await servedFrom(s.port, '127.0.0.4'));
  assert.equal(await (await connect(s.port, '', false, '127.0.0.4')).closed, ADDRESS_REFUSAL);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 16 });
  held.push(await servedFrom(s.port, '127.0.0.4'));
  assert.equal(s.shell.openConnections, 4);
  for (const raw of held) raw.socket.destroy();
});

test('a trusted proxy\'s connections count towards the cap only, and its requests name the client from X-Forwarded-For', async () => {
  const s = await start({ maxConnections: 4, maxConnectionsPerAddress: 1 }, { trustedProxies: trustedProxies(['127.0.0.1']) });
  const viaProxy = await Promise.all([1, 2, 3].map(() => connect(s.port, 'GET /who HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.7, 127.0.0.1\r\n\r\n')));
  for (const raw of viaProxy) assert.match(await raw.answers(1), /\{"client":"198\.51\.100\.7"\}$/);
  const direct = await connect(s.port, 'GET /who HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.7\r\n\r\n', false, '127.0.0.5');
  assert.match(await direct.answers(1), /\{"client":"127\.0\.0\.5"\}$/);
  assert.equal(await (await connect(s.port, '', false, '127.0.0.5')).closed, ADDRESS_REFUSAL);
  assert.equal(s.shell.openConnections, 4);
  for (const raw of [...viaProxy, direct]) raw.socket.destroy();
});

test('a refused client that sends its whole request at once still reads the 503, not a reset', async () => {
  const s = await start({ maxConnections: 1 });
  const holder = await busy(s);
  const body = 'x'.repeat(256 * 1024);
  const refused = await connect(s.port, `POST /ok HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`, false, '127.0.0.9');
  assert.equal(await refused.closed, REFUSAL);
  s.release();
  await holder.answers(1);
  holder.socket.destroy();
});

test('a reload that raises maxConnections lets the next connection in at once', async () => {
  const s = await start({ maxConnections: 1, maxConnectionsPerAddress: 1 });
  const holder = await busy(s);
  assert.equal(await (await connect(s.port, '', false, '127.0.0.9')).closed, REFUSAL);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 2, maxConnectionsPerAddress: 2 });
  const next = await busy(s);
  assert.equal(s.shell.openConnections, 2);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 1, maxConnectionsPerAddress: 2 });
  // Lowering it keeps those open; the next one is refused.
  assert.equal(await (await connect(s.port, '', false, '127.0.0.9')).closed, REFUSAL);
  s.release();
  await holder.answers(1);
  await next.answers(1);
  holder.socket.destroy();
  next.socket.destroy();
});

test('beyond the refusal margin (16 over a small cap) a refused connection is closed at once without an answer; still counted; the others go at the end of their linger', async () => {
  const scheduler = new ManualScheduler();
  const s = await start({ maxConnections: 1 }, { scheduler });
  const holder = await busy(s);
  // Refused connections that never close their side stay open for their linger: they fill the margin.
  const lingering = await Promise.all(Array.from({ length: 16 }, () => connect(s.port, '', true, '127.0.0.9')));
  await eventually(() => lingering.every((raw) => raw.text() === REFUSAL), `the 16 refusals: ${JSON.stringify(lingering.map((raw) => raw.text().length))}`);
  const dropped = await connect(s.port, '', false, '127.0.0.9');
  assert.equal(await dropped.closed, '');
  assert.equal(s.refused(), 17);
  // The server's sides of the 16 lingering connections: open until the linger ends, then destroyed.
  const refusedSides = s.accepted.slice(1, 17);
  assert.equal(refusedSides.length, 16);
  await scheduler.advance(REFUSAL_LINGER_MS - 1);
  assert.equal(refusedSides.filter((socket) => socket.destroyed).length, 0);
  await scheduler.advance(1);
  assert.equal(refusedSides.filter((socket) => socket.destroyed).length, 16);
  // Their places in the margin are free again: the next refusal is answered.
  assert.equal(await (await connect(s.port, '', false, '127.0.0.9')).closed, REFUSAL);
  s.release();
  await holder.answers(1);
  for (const raw of lingering) raw.socket.destroy();
  holder.socket.destroy();
});

test('what a connection counts against: its IPv4 address (mapped ones unmapped), an IPv6 peer\'s /56, nothing for a trusted proxy', () => {
  const proxies = trustedProxies(['10.0.0.0/8', 'fd00::/8']);
  const cases: Array<[string | undefined, string | null]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:0::/56'],
    ['2001:db8:1:2ff::9', '2001:db8:1:200::/56'],
    ['2001:db8:1:ff::9', '2001:db8:1:0::/56'],
    ['2001:db8::1', '2001:db8:0:0::/56'],
    ['::1', '0:0:0:0::/56'],
    ['fe80::1%lo', 'fe80:0:0:0::/56'],
    ['10.1.2.3', null],
    ['::ffff:10.1.2.3', null],
    ['fd00::5', null],
    [undefined, 'unknown'],
  ];
  for (const [peer, key] of cases) assert.equal(shareKey(peer, proxies), key, String(peer));
});
