// The limit on audit records of refusals anyone can provoke (src/admin/refusal-record-limit.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRefusalRecordLimit } from '../../src/admin/refusal-record-limit.ts';

test('one record per key per interval; another key is its own', () => {
  let now = 1_000_000;
  const limit = createRefusalRecordLimit({ clock: () => now, intervalMs: 60_000 });
  assert.equal(limit.take('tok_a|127.0.0.1|admin_token_revoked'), true);
  assert.equal(limit.take('tok_a|127.0.0.1|admin_token_revoked'), false);
  assert.equal(limit.take('tok_a|127.0.0.2|admin_token_revoked'), true);
  assert.equal(limit.take('tok_a|127.0.0.1|admin_token_expired'), true);
  now += 59_999;
  assert.equal(limit.take('tok_a|127.0.0.1|admin_token_revoked'), false);
  now += 1;
  assert.equal(limit.take('tok_a|127.0.0.1|admin_token_revoked'), true);
});

test('at most maxPerInterval records in all per interval, however many keys (many addresses)', () => {
  let now = 0;
  const limit = createRefusalRecordLimit({ clock: () => now, intervalMs: 60_000, maxPerInterval: 5 });
  const taken = Array.from({ length: 20 }, (_, i) => limit.take(`-|10.0.0.${i}|state_unknown`)).filter(Boolean).length;
  assert.equal(taken, 5);
  now += 60_000;
  assert.equal(limit.take('-|10.0.0.19|state_unknown'), true, 'a new interval records again');
});

test('memory is bounded: beyond maxKeys the stalest key is forgotten (and may be recorded again)', () => {
  let now = 0;
  const limit = createRefusalRecordLimit({ clock: () => now, maxKeys: 3, maxPerInterval: 100 });
  for (const key of ['a', 'b', 'c']) assert.equal(limit.take(key), true);
  now += 1;
  assert.equal(limit.take('d'), true);
  assert.equal(limit.take('b'), false, 'b is still held');
  assert.equal(limit.take('a'), true, 'a was the stalest and was dropped');
});
