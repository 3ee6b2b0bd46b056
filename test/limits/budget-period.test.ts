import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetWindowAt } from '../../src/limits/budget-period.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const window = (now: string, period: 'day' | 'month') => {
  const w = budgetWindowAt(Date.parse(now), period);
  return [w.id, iso(w.startMs), iso(w.endMs)];
};

test('UTC days, including the first and last millisecond and the year end', () => {
  assert.deepEqual(window('2026-11-22T00:00:00.000Z', 'day'), ['2026-11-22', '2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  assert.deepEqual(window('2026-11-22T23:59:59.999Z', 'day'), ['2026-11-22', '2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  assert.deepEqual(window('2026-12-31T12:00:00.000Z', 'day'), ['2026-12-31', '2026-12-31T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  assert.deepEqual(window('2028-02-29T12:00:00.000Z', 'day'), ['2028-02-29', '2028-02-29T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
  assert.deepEqual(window('0999-01-05T00:00:00.000Z', 'day'), ['0999-01-05', '0999-01-05T00:00:00.000Z', '0999-01-06T00:00:00.000Z']);
});

test('UTC months of every length, and December into January', () => {
  const lengths: [string, number][] = [
    ['2026-01', 31], ['2026-02', 28], ['2026-04', 30], ['2026-11', 30], ['2027-02', 28], ['2028-02', 29], ['2100-02', 28], ['2000-02', 29],
  ];
  for (const [month, days] of lengths) {
    const w = budgetWindowAt(Date.parse(`${month}-15T08:00:00.000Z`), 'month');
    assert.equal(w.id, month);
    assert.equal(iso(w.startMs), `${month}-01T00:00:00.000Z`);
    assert.equal((w.endMs - w.startMs) / 86_400_000, days, month);
  }
  assert.deepEqual(window('2026-12-31T23:59:59.999Z', 'month'), ['2026-12', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
});
