// Errors raised by the metrics registry. All of them are programming errors
// (a bad metric definition, a call with the wrong label set): they surface in
// tests and at start-up, never because of what a client sent. A flood of
// distinct label values is not an error; the registry folds it (see
// series-table.ts).

export const MetricErrorCode = {
  InvalidMetricName: 'invalid_metric_name',
  InvalidLabelName: 'invalid_label_name',
  DuplicateLabelName: 'duplicate_label_name',
  ReservedLabelName: 'reserved_label_name',
  DuplicateMetric: 'duplicate_metric',
  InvalidHelp: 'invalid_help',
  InvalidBuckets: 'invalid_buckets',
  InvalidMaxSeries: 'invalid_max_series',
  LabelMismatch: 'label_mismatch',
  InvalidValue: 'invalid_value',
  CollectedGauge: 'collected_gauge',
  DuplicateCollectedSeries: 'duplicate_collected_series',
} as const;
export type MetricErrorCode = (typeof MetricErrorCode)[keyof typeof MetricErrorCode];

export class MetricError extends Error {
  override name = 'MetricError';
  readonly code: MetricErrorCode;
  /** The metric the error is about. */
  readonly metric: string;

  constructor(code: MetricErrorCode, metric: string, message: string) {
    super(`${metric}: ${message}`);
    this.code = code;
    this.metric = metric;
  }
}
