// The pieces of the Prometheus text exposition format 0.0.4 that do not depend
// on the registry: the name grammar, escaping and number rendering.
// Spec: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels
// "Metric names may contain ASCII letters and digits, as well as underscores
// and colons. It must match the regex [a-zA-Z_:][a-zA-Z0-9_:]*."
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
// "Label names may contain ASCII letters, numbers, as well as underscores.
// They must match the regex [a-zA-Z_][a-zA-Z0-9_]*. Label names beginning
// with __ are reserved for internal use."
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function isMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

export function isLabelName(name: string): boolean {
  return LABEL_NAME.test(name);
}

/** Names starting with `__` belong to Prometheus itself (`__name__`, relabelling). */
export function isReservedName(name: string): boolean {
  return name.startsWith('__');
}

const BACKSLASH = 0x5c;
const LINE_FEED = 0x0a;
const DOUBLE_QUOTE = 0x22;

// "HELP lines may contain any sequence of UTF-8 characters (after the metric
// name), but the backslash and the line feed characters have to be escaped as
// \\ and \n, respectively."
export function escapeHelp(text: string): string {
  return escape(text, false);
}

// "label_value can be any sequence of UTF-8 characters, but the backslash (\),
// double-quote ("), and line feed (\n) characters have to be escaped as \\,
// \", and \n, respectively."
function escapeLabelValue(value: string): string {
  return escape(value, true);
}

function escape(text: string, quotes: boolean): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let replacement: string;
    if (code === BACKSLASH) replacement = '\\\\';
    else if (code === LINE_FEED) replacement = '\\n';
    else if (quotes && code === DOUBLE_QUOTE) replacement = '\\"';
    else continue;
    out += text.slice(from, i) + replacement;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

// "value is a float represented as required by Go's ParseFloat() function. In
// addition to standard numerical values, NaN, +Inf, and -Inf are valid values."
// JS renders integers without a fraction and other doubles as the shortest
// string that reads back to the same double, which ParseFloat accepts.
export function formatSampleValue(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  return String(value);
}

/** `a="x",b="y"` for the given names and values (no braces), escaped. */
export function renderLabelPairs(names: readonly string[], values: readonly string[]): string {
  let out = '';
  for (let i = 0; i < names.length; i++) {
    if (i > 0) out += ',';
    out += `${names[i]}="${escapeLabelValue(values[i] ?? '')}"`;
  }
  return out;
}
