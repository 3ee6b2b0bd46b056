// The connection table's bookkeeping, exactly: counts in all and per address,
// which connection is reclaimed (the one reclaimable longest), that busy ones
// never are, pipelined requests, closes after a reclaim counted once, and
// limits changed on a running table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionAdmission, createConnectionTable, defaultPerAddress, type AdmitResult, type TrackedConnection } from '../../src/http/connection-table.ts';

function admitted<S>(result: AdmitResult<S>): { connection: TrackedConnection<S>; reclaimed: S | null } {
  assert.equal(result.kind, ConnectionAdmission.Admitted);
  if (result.kind !== ConnectionAdmission.Admitted) throw new Error('unreachable');
  return { connection: result.connection, reclaimed: result.reclaimed?.socket ?? null };
}

test('under the caps every connection is admitted and counted per address; null addresses are not counted per address', () => {
  const table = createConnectionTable<string>({ max: 5, perAddress: 2 });
  admitted(table.admit('a1', 'A'));
  admitted(table.admit('a2', 'A'));
  assert.deepEqual(table.admit('a3', 'A'), { kind: ConnectionAdmission.AddressFull });
  admitted(table.admit('p1', null));
  admitted(table.admit('p2', null));
  admitted(table.admit('p3', null));
  assert.equal(table.open, 5);
  assert.equal(table.openFrom('A'), 2);
  assert.equal(table.reclaimable, 5);
});

test('full: the connection reclaimable longest gives its place; busy ones never; none reclaimable: refused', () => {
  const table = createConnectionTable<string>({ max: 3, perAddress: 3 });
  const a = admitted(table.admit('a', 'A')).connection;
  const b = admitted(table.admit('b', 'B')).connection;
  const c = admitted(table.admit('c', 'C')).connection;
  // `a` gets a request: `b` is now the oldest reclaimable.
  assert.equal(table.requestStarted(a), true);
  const d = admitted(table.admit('d', 'D'));
  assert.equal(d.reclaimed, 'b');
  assert.equal(b.released, true);
  assert.equal(table.open, 3);
  assert.equal(table.openFrom('B'), 0);
  // `a`'s answer ends: it is reclaimable again, but as the newest (after c and d).
  table.requestEnded(a);
  const e = admitted(table.admit('e', 'E'));
  assert.equal(e.reclaimed, 'c');
  const f = admitted(table.admit('f', 'F'));
  assert.equal(f.reclaimed, 'd');
  const g = admitted(table.admit('g', 'G'));
  assert.equal(g.reclaimed, 'a');
  // The reclaimed connections' sockets close later: counted once.
  table.closed(b);
  table.closed(c);
  assert.equal(table.open, 3);
  // A reclaimed connection whose request completes later is not served.
  assert.equal(table.requestStarted(c), false);
  // Everything busy: refused, nothing reclaimed.
  assert.equal(table.reclaimable, 3);
  for (const { connection } of [e, f, g]) assert.equal(table.requestStarted(connection), true);
  assert.deepEqual(table.admit('h', 'H'), { kind: ConnectionAdmission.Full });
  assert.deepEqual([table.open, table.reclaimable, table.openFrom('H')], [3, 0, 0]);
});

test('a connection with requests in flight is never reclaimed; pipelined requests keep it busy until the last answer', () => {
  const table = createConnectionTable<string>({ max: 2, perAddress: 2 });
  const a = admitted(table.admit('a', 'A')).connection;
  const b = admitted(table.admit('b', 'A')).connection;
  table.requestStarted(a);
  table.requestStarted(a);
  table.requestStarted(b);
  assert.equal(table.reclaimable, 0);
  assert.deepEqual(table.admit('c', 'C'), { kind: ConnectionAdmission.Full });
  table.requestEnded(a);
  assert.deepEqual(table.admit('c', 'C'), { kind: ConnectionAdmission.Full });
  table.requestEnded(a);
  assert.equal(table.reclaimable, 1);
  // An extra end (a response closed twice) changes nothing.
  table.requestEnded(a);
  assert.equal(table.reclaimable, 1);
  assert.equal(admitted(table.admit('c', 'C')).reclaimed, 'a');
  assert.equal(a.served, true);
  table.closed(b);
  assert.equal(table.open, 1);
  assert.equal(table.openFrom('A'), 0);
  assert.equal(table.reclaimable, 1);
});

test('closing removes a connection wherever it is in the list; counts return to zero', () => {
  const table = createConnectionTable<string>({ max: 10, perAddress: 10 });
  const cs = ['a', 'b', 'c', 'd'].map((s) => admitted(table.admit(s, 'X')).connection);
  const [a, b, c, d] = cs as [TrackedConnection<string>, TrackedConnection<string>, TrackedConnection<string>, TrackedConnection<string>];
  table.closed(b);
  table.closed(d);
  table.closed(a);
  table.closed(a);
  assert.equal(table.open, 1);
  assert.equal(table.reclaimable, 1);
  assert.equal(table.openFrom('X'), 1);
  table.closed(c);
  assert.deepEqual([table.open, table.reclaimable, table.openFrom('X')], [0, 0, 0]);
});

test('limits changed while running: a lowered cap keeps those open and reclaims one per new connection; a raised one admits', () => {
  const table = createConnectionTable<string>({ max: 3, perAddress: 3 });
  for (const s of ['a', 'b', 'c']) admitted(table.admit(s, s));
  table.setLimits(2, 1);
  assert.equal(admitted(table.admit('d', 'd')).reclaimed, 'a');
  assert.equal(table.open, 3);
  table.setLimits(5, 1);
  assert.equal(admitted(table.admit('e', 'e')).reclaimed, null);
  assert.deepEqual(table.admit('e2', 'e'), { kind: ConnectionAdmission.AddressFull });
});

test('the default share: min(cap / 4, max(8, cap / 64)), at least one', () => {
  const caps = [1, 3, 4, 7, 8, 12, 32, 50, 384, 575, 576, 1024, 16_384, 1_000_000];
  assert.deepEqual(caps.map(defaultPerAddress), [1, 1, 1, 1, 2, 3, 8, 8, 8, 8, 9, 16, 256, 15_625]);
});
