// Regression, "one client locks out every other client": with
// limits.maxConnections 50, one address holding 60 silent connections and
// re-opening each as soon as it is closed, as fast as it can, while four
// other addresses (127.0.0.3-6, which Linux routes on lo) ask 25 times each
// on new connections. With the default share (12 of 50) the flooder never
// reaches the others' places; with a share as large as the cap the flooder
// fills the listener, and its silent connections are the ones reclaimed. The
// share served is printed as a diagnostic. A TLS listener:
// connection-fairness.system.test.ts.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { closeShells, start } from './connection-limit-fixtures.ts';
import { flood, share } from './connection-flood.ts';

after(closeShells);

const CLIENTS = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];

test('one address floods with silent connections, the default share: every other client is answered', { timeout: 60_000 }, async (t) => {
  const s = await start({ maxConnections: 50 });
  const result = await flood({ port: s.port, flooders: ['127.0.0.2'], held: 60, clients: CLIENTS, requests: 25, flooded: () => s.shell.openConnections === 12 });
  t.diagnostic(`served ${share(result)}; failures ${JSON.stringify(result.failures)}; flooder connections ${result.flooderConnections}`);
  assert.deepEqual(result.failures, {});
  assert.equal(result.served, 100);
  assert.ok(s.refused() > 0, 'the flooder was refused beyond its share');
  assert.equal(s.reclaimed(), 0);
});

test('one address floods with silent connections, a share as large as the cap: it fills the listener, its oldest silent connections give way, the others are answered', { timeout: 60_000 }, async (t) => {
  const s = await start({ maxConnections: 50, maxConnectionsPerAddress: 50 });
  const result = await flood({ port: s.port, flooders: ['127.0.0.2'], held: 60, clients: CLIENTS, requests: 25, flooded: () => s.shell.openConnections === 50 });
  t.diagnostic(`served ${share(result)}; failures ${JSON.stringify(result.failures)}; flooder connections ${result.flooderConnections}; reclaimed ${s.reclaimed()}`);
  // A client's own connection is reclaimable only until its request arrives; the flooder
  // would have to open 50 connections in that time. Under a loaded machine a few may lose.
  assert.ok(result.served >= 95, share(result));
  assert.ok(s.reclaimed() > 0, 'silent connections were reclaimed');
});

test('two addresses flood with silent connections, a share as large as the cap: they fill the listener and push each other out; the others are answered', { timeout: 60_000 }, async (t) => {
  const s = await start({ maxConnections: 50, maxConnectionsPerAddress: 50 });
  const result = await flood({ port: s.port, flooders: ['127.0.0.2', '127.0.0.7'], held: 60, clients: CLIENTS, requests: 25, flooded: () => s.shell.openConnections === 50 });
  t.diagnostic(`served ${share(result)}; failures ${JSON.stringify(result.failures)}; flooder connections ${result.flooderConnections}; reclaimed ${s.reclaimed()}`);
  assert.ok(result.served >= 95, share(result));
  assert.ok(s.reclaimed() > 100, `silent connections were reclaimed: ${s.reclaimed()}`);
});
