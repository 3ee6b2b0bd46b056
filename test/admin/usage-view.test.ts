// The usage view's count of what the records hold for a spending budget's
// window, beside what the limiter charged while the budget was set.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordedCostInWindow } from '../../src/admin/usage-view.ts';
import { emptyStoredUsage, addHour, seriesOf } from '../../src/usage/usage-series.ts';
import { emptyUsage } from '../../src/usage/usage-ledger.ts';

const spent = (costNanos: number) => ({ ...emptyUsage(), requests: 1, costNanos });

test('the window sums the day buckets from its start: the day alone, or the month so far', () => {
  const stored = emptyStoredUsage();
  addHour(stored, Date.parse('2026-10-31T23:00:00.000Z'), spent(7));
  addHour(stored, Date.parse('2026-11-01T00:00:00.000Z'), spent(100));
  addHour(stored, Date.parse('2026-11-21T10:00:00.000Z'), spent(20));
  addHour(stored, Date.parse('2026-11-22T04:00:00.000Z'), spent(3));
  const now = Date.parse('2026-11-22T05:30:00.000Z');
  const days = seriesOf(stored, 'day', now);
  assert.equal(recordedCostInWindow(days, 'day', now), 3);
  assert.equal(recordedCostInWindow(days, 'month', now), 123);
});

test('on the 31st the 30-day series misses the 1st: the month is not claimed (null)', () => {
  const now = Date.parse('2026-12-31T12:00:00.000Z');
  const days = seriesOf(emptyStoredUsage(), 'day', now);
  assert.equal(recordedCostInWindow(days, 'month', now), null);
  assert.equal(recordedCostInWindow(days, 'day', now), 0);
  assert.equal(recordedCostInWindow(seriesOf(emptyStoredUsage(), 'hour', now), 'day', now), null, 'hours are not days');
});
