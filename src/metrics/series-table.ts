// The series of one metric, one per label set, found without building a
// string per call: a tree with one level per label name, walked with one
// Map.get per label value. A key made by joining values would cost a string
// per observation on the request path and would need an escape to stay
// unambiguous; the tree needs neither.
//
// Bounded: at most `maxSeries` label sets get a series of their own. Label
// values often come from outside (an alias a client asked for, a status an
// upstream sent), and a flood of distinct values must not grow memory and
// scrape size without limit. Later label sets are folded into one series whose
// values are all OTHER_LABEL_VALUE; nothing is thrown, because a request must
// not fail over its metrics. So a metric exposes at most maxSeries + 1 series.

import { MetricError, MetricErrorCode } from './metric-error.ts';
import { renderLabelPairs } from './exposition-format.ts';

export const OTHER_LABEL_VALUE = '_other';
export const DEFAULT_MAX_SERIES = 1000;

export type LabelValues = Readonly<Record<string, string>>;

export interface SeriesEntry<S> {
  readonly values: readonly string[];
  /** `a="x",b="y"`, escaped, rendered once when the series is created. */
  readonly labelPairs: string;
  readonly series: S;
}

export interface SeriesTable<S> {
  /** The series for `labels`, created on first use. Throws a MetricError with
   * code label_mismatch when `labels` lacks a declared name or has another. */
  get(labels: LabelValues): S;
  /** True when `series` is the one that label sets beyond the cap fold into. */
  isOverflow(series: S): boolean;
  /** Every series, sorted by label values (stable across runs whatever the
   * order traffic arrived in), the overflow series last. */
  entries(): Array<SeriesEntry<S>>;
}

interface Branch<S> {
  children: Map<string, Branch<S>> | undefined;
  entry: SeriesEntry<S> | undefined;
}

export function createSeriesTable<S>(
  metric: string,
  labelNames: readonly string[],
  maxSeries: number,
  create: () => S,
): SeriesTable<S> {
  const depth = labelNames.length;
  const root: Branch<S> = { children: undefined, entry: undefined };
  const all: Array<SeriesEntry<S>> = [];
  let overflow: SeriesEntry<S> | undefined;

  // A metric without labels has exactly one series, shown from the start
  // (a counter at 0 says "nothing happened yet", a missing one says nothing).
  if (depth === 0) add([]);

  function add(values: readonly string[]): SeriesEntry<S> {
    let node = root;
    for (const value of values) {
      node.children ??= new Map();
      let child = node.children.get(value);
      if (child === undefined) {
        child = { children: undefined, entry: undefined };
        node.children.set(value, child);
      }
      node = child;
    }
    if (node.entry !== undefined) return node.entry;
    const entry: SeriesEntry<S> = { values, labelPairs: renderLabelPairs(labelNames, values), series: create() };
    node.entry = entry;
    all.push(entry);
    return entry;
  }

  function mismatch(labels: LabelValues): MetricError {
    const given = Object.keys(labels).join(', ');
    return new MetricError(
      MetricErrorCode.LabelMismatch,
      metric,
      `expected labels [${labelNames.join(', ')}] with string values, got [${given}]`,
    );
  }

  /** Cold path: a label set seen for the first time. */
  function insert(labels: LabelValues): S {
    const values: string[] = [];
    for (const name of labelNames) {
      const value = labels[name];
      if (typeof value !== 'string') throw mismatch(labels);
      values.push(value);
    }
    if (all.length >= maxSeries) {
      // The overflow series lives in the tree like any other, so a label set
      // that really is all OTHER_LABEL_VALUE lands in it instead of beside it.
      overflow ??= add(labelNames.map(() => OTHER_LABEL_VALUE));
      return overflow.series;
    }
    return add(values).series;
  }

  return {
    get(labels: LabelValues): S {
      let keys = 0;
      for (const _ in labels) keys++;
      if (keys !== depth) throw mismatch(labels);
      let node = root;
      for (let i = 0; i < depth; i++) {
        const value = labels[labelNames[i]!];
        if (typeof value !== 'string') throw mismatch(labels);
        const child = node.children?.get(value);
        if (child === undefined) return insert(labels);
        node = child;
      }
      // Every path in the tree ends in an entry: add() builds whole paths only.
      return node.entry!.series;
    },
    isOverflow(series: S): boolean {
      return overflow !== undefined && overflow.series === series;
    },
    entries(): Array<SeriesEntry<S>> {
      const sorted = all.filter((entry) => entry !== overflow).sort(byLabelValues);
      if (overflow !== undefined) sorted.push(overflow);
      return sorted;
    },
  };
}

function byLabelValues(a: SeriesEntry<unknown>, b: SeriesEntry<unknown>): number {
  for (let i = 0; i < a.values.length; i++) {
    const x = a.values[i]!;
    const y = b.values[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
