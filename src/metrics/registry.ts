// A Prometheus metrics registry: counters, gauges and histograms with label
// names fixed at creation, rendered in the text exposition format 0.0.4.
// Pure: no timers, no I/O; the admin listener calls expose() on a scrape.
// Spec: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
//
// Definitions are checked when a metric is created (names, duplicates,
// buckets) and a call with the wrong label set throws: both are programming
// errors that tests catch. Label values are bounded per metric, see
// series-table.ts.

import {
  escapeHelp,
  formatSampleValue,
  isLabelName,
  isMetricName,
  isReservedName,
} from './exposition-format.ts';
import { MetricError, MetricErrorCode } from './metric-error.ts';
import { createSeriesTable, DEFAULT_MAX_SERIES, type LabelValues, type SeriesTable } from './series-table.ts';

export { PROMETHEUS_CONTENT_TYPE } from './exposition-format.ts';
export { DEFAULT_MAX_SERIES, OTHER_LABEL_VALUE, type LabelValues } from './series-table.ts';
export { MetricError, MetricErrorCode } from './metric-error.ts';

interface MetricOptions {
  /** Matches [a-zA-Z_:][a-zA-Z0-9_:]*, unique in the registry. */
  name: string;
  help: string;
  /** Each matches [a-zA-Z_][a-zA-Z0-9_]*, no `__` prefix. Default none. */
  labelNames?: readonly string[];
  /** Label sets with a series of their own; later ones fold into `_other`.
   * Default DEFAULT_MAX_SERIES (or the registry's). */
  maxSeries?: number;
}

export type CounterOptions = MetricOptions;

interface GaugeSample {
  labels: LabelValues;
  value: number;
}

export interface GaugeOptions extends MetricOptions {
  /** Read at every scrape instead of a stored value (for state that lives
   * elsewhere, such as circuit state per target). A gauge with `collect`
   * refuses set/inc/dec. A label set given twice in one scrape throws. */
  collect?: () => Iterable<GaugeSample>;
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds (inclusive), strictly increasing, finite; a trailing +Inf
   * is allowed and implied anyway. */
  buckets: readonly number[];
}

export interface Counter {
  readonly name: string;
  /** `by` must be finite and not negative: a counter only goes up. */
  inc(labels: LabelValues, by?: number): void;
}

export interface Gauge {
  readonly name: string;
  set(labels: LabelValues, value: number): void;
  inc(labels: LabelValues, by?: number): void;
  dec(labels: LabelValues, by?: number): void;
}

export interface Histogram {
  readonly name: string;
  /** `value` in the unit of the buckets (seconds for durations); not NaN. */
  observe(labels: LabelValues, value: number): void;
}

export interface Registry {
  counter(options: CounterOptions): Counter;
  gauge(options: GaugeOptions): Gauge;
  histogram(options: HistogramOptions): Histogram;
  /** Every family in registration order, series sorted by label values. */
  expose(): string;
}

interface RegistryOptions {
  /** Default for each metric's maxSeries. Default DEFAULT_MAX_SERIES. */
  maxSeries?: number;
}

/** One family's part of the exposition, `# HELP` line included. */
type RenderFamily = () => string;

interface Definition {
  name: string;
  labelNames: readonly string[];
  maxSeries: number;
  sampleNames: readonly string[];
  header: string;
}

export function createRegistry(options: RegistryOptions = {}): Registry {
  const defaultMaxSeries = checkMaxSeries('registry', options.maxSeries ?? DEFAULT_MAX_SERIES);
  const families: RenderFamily[] = [];
  // Every sample name a family writes, so that no two families can write
  // the same one (a histogram `x` writes x_bucket, x_sum and x_count).
  const takenNames = new Set<string>();

  function define(options: MetricOptions, type: string, sampleNames: readonly string[], reservedLabels: readonly string[]): Definition {
    const { name, help } = options;
    if (typeof name !== 'string' || !isMetricName(name) || isReservedName(name)) {
      throw new MetricError(MetricErrorCode.InvalidMetricName, String(name), 'metric name must match [a-zA-Z_:][a-zA-Z0-9_:]* and not start with __');
    }
    if (typeof help !== 'string') throw new MetricError(MetricErrorCode.InvalidHelp, name, 'help must be a string');
    const labelNames = [...(options.labelNames ?? [])];
    const seen = new Set<string>();
    for (const label of labelNames) {
      if (typeof label !== 'string' || !isLabelName(label) || isReservedName(label)) {
        throw new MetricError(MetricErrorCode.InvalidLabelName, name, `label name ${JSON.stringify(label)} must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __`);
      }
      if (reservedLabels.includes(label)) {
        throw new MetricError(MetricErrorCode.ReservedLabelName, name, `label name "${label}" is reserved for the ${type} itself`);
      }
      if (seen.has(label)) throw new MetricError(MetricErrorCode.DuplicateLabelName, name, `label name "${label}" given twice`);
      seen.add(label);
    }
    const maxSeries = checkMaxSeries(name, options.maxSeries ?? defaultMaxSeries);
    for (const sampleName of sampleNames) {
      if (takenNames.has(sampleName)) {
        throw new MetricError(MetricErrorCode.DuplicateMetric, name, `"${sampleName}" is already written by another metric`);
      }
    }
    return { name, labelNames, maxSeries, sampleNames, header: `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n` };
  }

  /** Takes the names once every check has passed, so a refused definition takes none. */
  function register(definition: Definition, render: RenderFamily): void {
    for (const sampleName of definition.sampleNames) takenNames.add(sampleName);
    families.push(render);
  }

  return {
    counter(options: CounterOptions): Counter {
      const definition = define(options, 'counter', [options.name], []);
      const { name, labelNames, maxSeries, header } = definition;
      const table = createSeriesTable(name, labelNames, maxSeries, () => ({ value: 0 }));
      register(definition, () => header + renderSingleValues(name, table));
      return {
        name,
        inc(labels: LabelValues, by = 1): void {
          if (!(typeof by === 'number' && by >= 0 && by < Infinity)) {
            throw new MetricError(MetricErrorCode.InvalidValue, name, `a counter only goes up; cannot add ${by}`);
          }
          table.get(labels).value += by;
        },
      };
    },

    gauge(options: GaugeOptions): Gauge {
      const definition = define(options, 'gauge', [options.name], []);
      const { name, labelNames, maxSeries, header } = definition;
      const collect = options.collect;
      if (collect !== undefined) {
        register(definition, () => header + renderSingleValues(name, collectGauge(name, labelNames, maxSeries, collect)));
        const refuse = (): never => {
          throw new MetricError(MetricErrorCode.CollectedGauge, name, 'this gauge is read by its collect function; set/inc/dec are not used');
        };
        return { name, set: refuse, inc: refuse, dec: refuse };
      }
      const table = createSeriesTable(name, labelNames, maxSeries, () => ({ value: 0 }));
      register(definition, () => header + renderSingleValues(name, table));
      const add = (labels: LabelValues, by: number): void => {
        if (!Number.isFinite(by)) throw new MetricError(MetricErrorCode.InvalidValue, name, `cannot add ${by} to a gauge`);
        table.get(labels).value += by;
      };
      return {
        name,
        set(labels: LabelValues, value: number): void {
          if (typeof value !== 'number') throw new MetricError(MetricErrorCode.InvalidValue, name, 'a gauge value is a number');
          table.get(labels).value = value;
        },
        inc: (labels: LabelValues, by = 1) => add(labels, by),
        dec: (labels: LabelValues, by = 1) => add(labels, -by),
      };
    },

    histogram(options: HistogramOptions): Histogram {
      const base = options.name;
      const definition = define(options, 'histogram', [base, `${base}_bucket`, `${base}_sum`, `${base}_count`], ['le']);
      const { name, labelNames, maxSeries, header } = definition;
      const bounds = checkBuckets(name, options.buckets);
      const bucketCount = bounds.length;
      const le = Array.from(bounds, (bound) => `le="${formatSampleValue(bound)}"`);
      const table = createSeriesTable(name, labelNames, maxSeries, () => ({
        // Per-bucket (not cumulative) counts; the +Inf bucket is `count`.
        counts: new Float64Array(bucketCount),
        sum: 0,
        count: 0,
      }));
      register(definition, () => {
        let out = header;
        for (const { labelPairs, series } of table.entries()) {
          const prefix = labelPairs === '' ? `${name}_bucket{` : `${name}_bucket{${labelPairs},`;
          let cumulative = 0;
          for (let i = 0; i < bucketCount; i++) {
            cumulative += series.counts[i]!;
            out += `${prefix}${le[i]!}} ${formatSampleValue(cumulative)}\n`;
          }
          out += `${prefix}le="+Inf"} ${formatSampleValue(series.count)}\n`;
          const selector = labelPairs === '' ? '' : `{${labelPairs}}`;
          out += `${name}_sum${selector} ${formatSampleValue(series.sum)}\n`;
          out += `${name}_count${selector} ${formatSampleValue(series.count)}\n`;
        }
        return out;
      });
      return {
        name,
        observe(labels: LabelValues, value: number): void {
          if (typeof value !== 'number' || Number.isNaN(value)) {
            throw new MetricError(MetricErrorCode.InvalidValue, name, `cannot observe ${value}`);
          }
          const series = table.get(labels);
          // Bucket lists are short (about a dozen): a linear scan beats a
          // binary search's branches. Upper bounds are inclusive (`le`).
          let i = 0;
          while (i < bucketCount && value > bounds[i]!) i++;
          if (i < bucketCount) series.counts[i]!++;
          series.sum += value;
          series.count++;
        },
      };
    },

    expose(): string {
      let out = '';
      for (const render of families) out += render();
      return out;
    },
  };
}

function renderSingleValues(name: string, table: SeriesTable<{ value: number }>): string {
  let out = '';
  for (const { labelPairs, series } of table.entries()) {
    out += labelPairs === '' ? name : `${name}{${labelPairs}}`;
    out += ` ${formatSampleValue(series.value)}\n`;
  }
  return out;
}

/** A fresh table per scrape, so collected series are checked and capped like stored ones. */
function collectGauge(
  name: string,
  labelNames: readonly string[],
  maxSeries: number,
  collect: () => Iterable<GaugeSample>,
): SeriesTable<{ value: number; set: boolean }> {
  const table = createSeriesTable(name, labelNames, maxSeries, () => ({ value: 0, set: false }));
  for (const { labels, value } of collect()) {
    if (typeof value !== 'number') throw new MetricError(MetricErrorCode.InvalidValue, name, 'a gauge value is a number');
    const series = table.get(labels);
    if (series.set && !table.isOverflow(series)) {
      throw new MetricError(MetricErrorCode.DuplicateCollectedSeries, name, `collect gave ${JSON.stringify(labels)} twice`);
    }
    series.value = value;
    series.set = true;
  }
  return table;
}

function checkMaxSeries(metric: string, maxSeries: number): number {
  if (!Number.isSafeInteger(maxSeries) || maxSeries < 1) {
    throw new MetricError(MetricErrorCode.InvalidMaxSeries, metric, `maxSeries must be a positive integer, got ${maxSeries}`);
  }
  return maxSeries;
}

/** The finite upper bounds; the +Inf bucket is always added by the exposition. */
function checkBuckets(metric: string, buckets: readonly number[]): Float64Array {
  if (!Array.isArray(buckets)) throw new MetricError(MetricErrorCode.InvalidBuckets, metric, 'buckets must be an array of numbers');
  const finite = buckets.length > 0 && buckets[buckets.length - 1] === Infinity ? buckets.slice(0, -1) : buckets;
  for (let i = 0; i < finite.length; i++) {
    const bound = finite[i];
    if (typeof bound !== 'number' || !Number.isFinite(bound)) {
      throw new MetricError(MetricErrorCode.InvalidBuckets, metric, `bucket ${i} is ${bound}; bounds are finite numbers (+Inf only last)`);
    }
    if (i > 0 && !(bound > finite[i - 1]!)) {
      throw new MetricError(MetricErrorCode.InvalidBuckets, metric, `buckets must be strictly increasing; ${bound} follows ${finite[i - 1]}`);
    }
  }
  return Float64Array.from(finite);
}
