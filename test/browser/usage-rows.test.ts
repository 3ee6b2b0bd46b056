// The usage table's rows: newest first, quiet runs folded into one row.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UsageBucket } from '../../src/dashboard/admin-model.ts';
import { usageRows } from '../../src/dashboard/usage-rows.ts';

const hour = (h: number, requests = 0): UsageBucket => ({
  start: `2026-01-01T${String(h).padStart(2, '0')}:00:00.000Z`,
  requests,
  errors: 0,
  promptTokens: requests * 5,
  completionTokens: requests * 7,
  cachedTokens: 0,
});

test('one busy hour among 48: the busy hour first, then one row for the 47 quiet ones', () => {
  const buckets = Array.from({ length: 24 }, (_, h) => hour(h, h === 23 ? 2 : 0));
  const rows = usageRows(buckets);
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0], { kind: 'traffic', bucket: buckets[23] });
  assert.deepEqual(rows[1], { kind: 'quiet', newest: buckets[22]?.start, oldest: buckets[0]?.start, count: 23 });
});

test('quiet runs between busy hours each become one row, newest first', () => {
  const rows = usageRows([hour(0, 1), hour(1), hour(2), hour(3, 4), hour(4)]);
  assert.deepEqual(
    rows.map((r) => (r.kind === 'traffic' ? `busy ${r.bucket.start.slice(11, 13)}` : `quiet ${r.count} ${r.newest.slice(11, 13)}-${r.oldest.slice(11, 13)}`)),
    ['quiet 1 04-04', 'busy 03', 'quiet 2 02-01', 'busy 00'],
  );
});

test('an hour with only errors, only tokens, only cost or only guard findings counts as traffic; no buckets, no rows', () => {
  assert.equal(usageRows([{ ...hour(0), errors: 1 }])[0]?.kind, 'traffic');
  assert.equal(usageRows([{ ...hour(0), cachedTokens: 3 }])[0]?.kind, 'traffic');
  assert.equal(usageRows([{ ...hour(0), costNanos: 1 }])[0]?.kind, 'traffic');
  assert.equal(usageRows([{ ...hour(0), costNanos: 0 }])[0]?.kind, 'quiet');
  assert.equal(usageRows([{ ...hour(0), guardLogged: 1 }])[0]?.kind, 'traffic');
  assert.equal(usageRows([{ ...hour(0), guardBlocked: 0, guardMasked: 0, guardLogged: 0 }])[0]?.kind, 'quiet');
  assert.deepEqual(usageRows([]), []);
});
