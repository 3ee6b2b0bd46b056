// The usage store contract run against the file adapter: a fresh data directory per case
// (existing, as the backend's key store creates it before usage is written), then a
// usage file written before cost was recorded.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createFileUsageStore } from '../../src/state/file-usage-store.ts';
import { runUsageStoreContract } from '../../src/testing/usage-store-contract.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const root = tempDir('usage-contract');
runUsageStoreContract('file', () => createFileUsageStore(freshDir(root)));

test('a usage file without costNanos and the guard fields (written before they were recorded) reads them as 0 and gains them at the next flush', async () => {
  const dir = freshDir(root);
  const NOW = Date.UTC(2026, 10, 22, 12, 30);
  const old = { requests: 4, promptTokens: 40, completionTokens: 20, cachedTokens: 0, errors: 1 };
  const none = { costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  writeFileSync(join(dir, 'usage.json'), JSON.stringify({ version: 2, keys: { key_a: { totals: old, hours: { '2026-11-22T12': old }, days: { '2026-11-22': old } } } }));
  const store = createFileUsageStore(dir);
  assert.deepEqual(await store.totals(), new Map([['key_a', { ...old, ...none }]]));
  const hours = await store.series('key_a', 'hour', NOW);
  assert.deepEqual(hours.buckets.at(-1), { start: '2026-11-22T12:00:00.000Z', ...old, ...none });
  await store.add(new Map([['key_a', new Map([[Date.UTC(2026, 10, 22, 12), { requests: 1, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 7, guardBlocked: 0, guardMasked: 2, guardLogged: 1 }]])]]), NOW);
  const after = { ...old, requests: 5, costNanos: 7, guardBlocked: 0, guardMasked: 2, guardLogged: 1 };
  assert.deepEqual(await store.totals(), new Map([['key_a', after]]));
  const stored = JSON.parse(readFileSync(join(dir, 'usage.json'), 'utf8')) as { keys: { key_a: { days: unknown } } };
  assert.deepEqual(stored.keys.key_a.days, { '2026-11-22': after });
});

test('a guard field that is not a non-negative integer makes the file unreadable, naming the place', async () => {
  const dir = freshDir(root);
  const bad = { requests: 1, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, guardMasked: -1 };
  writeFileSync(join(dir, 'usage.json'), JSON.stringify({ version: 2, keys: { key_a: { totals: bad, hours: {}, days: {} } } }));
  await assert.rejects(createFileUsageStore(dir).totals(), {
    name: 'UsageFileError',
    message: `${join(dir, 'usage.json')}: keys.key_a.totals must hold requests, promptTokens, completionTokens, cachedTokens, errors (and costNanos, guardBlocked, guardMasked, guardLogged, if present) as non-negative integers`,
  });
});
