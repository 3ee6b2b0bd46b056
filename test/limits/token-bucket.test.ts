import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charge, DEBT_FLOOR, isFull, msUntilLevel, refill, remainingUnits, WINDOW_MS } from '../../src/limits/token-bucket.ts';

test('a new bucket is full; refill is exact and stops at capacity', () => {
  const full = refill(undefined, 7, 1000);
  assert.deepEqual(full, { limit: 7, level: 7 * WINDOW_MS, lastMs: 1000 });
  assert.equal(isFull(full), true);
  const empty = charge(full, 7);
  assert.deepEqual(refill(empty, 7, 1001), { limit: 7, level: 7, lastMs: 1001 });
  assert.deepEqual(refill(empty, 7, 1000 + 60_000), { limit: 7, level: 7 * WINDOW_MS, lastMs: 61_000 });
  // A long idle time does not multiply into an inexact number.
  assert.deepEqual(refill(empty, 1_000_000_000, Number.MAX_SAFE_INTEGER), { limit: 1_000_000_000, level: 6e13, lastMs: Number.MAX_SAFE_INTEGER });
});

test('an earlier clock refills nothing and keeps the latest time', () => {
  const empty = charge(refill(undefined, 2, 10_000), 2);
  assert.deepEqual(refill(empty, 2, 5000), { limit: 2, level: 0, lastMs: 10_000 });
  assert.equal(msUntilLevel(empty, 1, 5000), 5000 + 30_000);
  assert.equal(msUntilLevel(empty, 1, 10_000), 30_000);
});

test('charges go into debt down to the floor, and back up to capacity', () => {
  const bucket = refill(undefined, 1000, 0);
  const debt = charge(bucket, 1500);
  assert.equal(debt.level, -500 * WINDOW_MS);
  assert.equal(remainingUnits(debt), 0);
  assert.equal(charge(bucket, -10).level, 1000 * WINDOW_MS);
  let deep = debt;
  for (let i = 0; i < 20; i++) deep = charge(deep, 1_000_000_000); // 20 * 6e13 scaled units > 1e15
  assert.equal(deep.level, DEBT_FLOOR);
  assert.equal(msUntilLevel(debt, 0, 0), 30_000);
  assert.equal(msUntilLevel(bucket, 1000, 0), 0);
});

test('a lowered limit clamps the level; remaining rounds down', () => {
  const bucket = charge(refill(undefined, 10, 0), 5);
  assert.equal(refill(bucket, 2, 0).level, 2 * WINDOW_MS);
  assert.equal(remainingUnits({ limit: 10, level: 2 * WINDOW_MS - 1, lastMs: 0 }), 1);
});
