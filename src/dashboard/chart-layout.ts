// Geometry of the usage bar chart: stacked columns in a fixed coordinate box,
// scaled to a rounded maximum. Pure numbers, no DOM, so it is unit-tested in
// Node; usage-chart.ts turns the result into SVG.

/** Width of one column slot in chart units; the bar leaves a gap on both sides. */
export const SLOT_WIDTH = 10;
const BAR_WIDTH = 8;
export const CHART_HEIGHT = 100;
/** A non-zero value never draws thinner than this, so one request is visible beside thousands. */
const MIN_VISIBLE_HEIGHT = 1;
/** Columns beyond this are not drawn (the API sends at most 48 hours or 30 days). */
export const MAX_COLUMNS = 400;

interface Segment {
  series: number;
  value: number;
  y: number;
  height: number;
}

interface Column {
  index: number;
  x: number;
  width: number;
  total: number;
  segments: Segment[];
}

interface ChartLayout {
  width: number;
  height: number;
  /** The value at the top of the box: the peak rounded up to 1, 2 or 5 times a power of ten. */
  scaleMax: number;
  peak: number;
  columns: Column[];
}

/** Smallest of 1, 2, 5, 10, 20, 50, ... that is at least `value` (1 for zero or less). */
export function niceCeiling(value: number): number {
  if (!(value > 1)) return 1;
  let magnitude = 1;
  // Bounded: 10^308 is past Number.MAX_VALUE.
  for (let step = 0; step < 309 && magnitude * 10 < value; step++) magnitude *= 10;
  for (const factor of [1, 2, 5, 10]) {
    if (magnitude * factor >= value) return magnitude * factor;
  }
  return magnitude * 10;
}

/**
 * Lays out columns of stacked values (one array per column, one entry per
 * series, bottom first). Negative or non-finite values count as zero.
 */
export function layoutColumns(values: readonly (readonly number[])[]): ChartLayout {
  const drawn = values.slice(0, MAX_COLUMNS).map((column) => column.map((v) => (Number.isFinite(v) && v > 0 ? v : 0)));
  const totals = drawn.map((column) => column.reduce((sum, v) => sum + v, 0));
  const peak = totals.reduce((max, t) => Math.max(max, t), 0);
  const scaleMax = niceCeiling(peak);
  const columns = drawn.map((column, index): Column => {
    let top = CHART_HEIGHT;
    const segments: Segment[] = [];
    column.forEach((value, series) => {
      if (value === 0) return;
      const height = Math.max(MIN_VISIBLE_HEIGHT, (value / scaleMax) * CHART_HEIGHT);
      top = Math.max(0, top - height);
      segments.push({ series, value, y: round(top), height: round(Math.min(height, CHART_HEIGHT)) });
    });
    return { index, x: index * SLOT_WIDTH + (SLOT_WIDTH - BAR_WIDTH) / 2, width: BAR_WIDTH, total: totals[index] ?? 0, segments };
  });
  return { width: Math.max(1, drawn.length) * SLOT_WIDTH, height: CHART_HEIGHT, scaleMax, peak, columns };
}

/** Three decimals are plenty for a 100-unit box and keep the SVG text short. */
function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
