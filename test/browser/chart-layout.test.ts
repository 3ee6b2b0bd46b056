// Usage chart geometry: the rounded scale, stacked segments from the bottom,
// the minimum visible height, and the bounds on input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHART_HEIGHT, layoutColumns, MAX_COLUMNS, niceCeiling, SLOT_WIDTH } from '../../src/dashboard/chart-layout.ts';

test('niceCeiling rounds up to 1, 2 or 5 times a power of ten', () => {
  const cases: Array<[number, number]> = [
    [-5, 1], [0, 1], [0.3, 1], [1, 1], [1.01, 2], [2, 2], [3, 5], [5, 5], [6, 10], [10, 10], [11, 20], [99, 100], [101, 200], [480, 500], [501, 1000], [123_456, 200_000],
  ];
  for (const [value, expected] of cases) assert.equal(niceCeiling(value), expected, `niceCeiling(${value})`);
  assert.equal(niceCeiling(Number.NaN), 1);
  assert.equal(niceCeiling(Number.POSITIVE_INFINITY) >= Number.MAX_VALUE, true);
});

test('stacked columns: segments from the bottom, scaled to the rounded peak', () => {
  const layout = layoutColumns([[3, 1], [0, 0], [10, 0]]);
  assert.equal(layout.peak, 10);
  assert.equal(layout.scaleMax, 10);
  assert.equal(layout.width, 3 * SLOT_WIDTH);
  assert.equal(layout.height, CHART_HEIGHT);
  assert.deepEqual(layout.columns, [
    { index: 0, x: 1, width: 8, total: 4, segments: [{ series: 0, value: 3, y: 70, height: 30 }, { series: 1, value: 1, y: 60, height: 10 }] },
    { index: 1, x: 11, width: 8, total: 0, segments: [] },
    { index: 2, x: 21, width: 8, total: 10, segments: [{ series: 0, value: 10, y: 0, height: 100 }] },
  ]);
});

test('a small value beside a large one still draws one unit high', () => {
  const layout = layoutColumns([[1], [4000]]);
  assert.equal(layout.scaleMax, 5000);
  assert.deepEqual(layout.columns[0]?.segments, [{ series: 0, value: 1, y: 99, height: 1 }]);
  assert.deepEqual(layout.columns[1]?.segments, [{ series: 0, value: 4000, y: 20, height: 80 }]);
});

test('negative and non-finite values count as zero; no data keeps a one-slot box', () => {
  const layout = layoutColumns([[-3, Number.NaN, Number.POSITIVE_INFINITY, 2]]);
  assert.equal(layout.peak, 2);
  assert.deepEqual(layout.columns[0]?.segments, [{ series: 3, value: 2, y: 0, height: 100 }]);
  const empty = layoutColumns([]);
  assert.deepEqual(empty, { width: SLOT_WIDTH, height: CHART_HEIGHT, scaleMax: 1, peak: 0, columns: [] });
});

test('columns past MAX_COLUMNS are not drawn', () => {
  const layout = layoutColumns(Array.from({ length: MAX_COLUMNS + 5 }, () => [1]));
  assert.equal(layout.columns.length, MAX_COLUMNS);
  assert.equal(layout.width, MAX_COLUMNS * SLOT_WIDTH);
});
