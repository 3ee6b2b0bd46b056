// A strict parser of the Prometheus text exposition format 0.0.4, for tests:
// it reads what a scrape would read and throws, naming the line, on anything
// Prometheus would reject or that a well-behaved exporter never writes.
// Spec: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
//
// Stricter than the spec on purpose, so that sloppy output fails a test:
// - every sample belongs to a family declared by `# TYPE` before it, and a
//   family's lines are contiguous (no interleaving, no second HELP or TYPE);
// - no empty lines; the text ends with a line feed;
// - one space between the series, its value and an optional timestamp, and
//   no spaces inside the braces; label names starting with `__` are refused;
// - values spelled as Go's ParseFloat reads them in decimal, plus exactly
//   `NaN`, `+Inf`, `-Inf`; counters are not negative;
// - histograms: per series, `le` strictly increasing, cumulative counts not
//   decreasing, a `+Inf` bucket, `_count` equal to it, and a `_sum`;
//   summaries: a `quantile` per sample, `_count` and `_sum` per series.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch, when the line carries one. */
  timestamp?: number;
}

export interface MetricFamily {
  type: MetricType;
  /** Unescaped; '' when the family has no HELP line. */
  help: string;
  samples: Sample[];
}

export class PrometheusTextError extends Error {
  override name = 'PrometheusTextError';
  /** 1-based line number. */
  readonly line: number;
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TIMESTAMP = /^-?\d+$/;
const TYPES: readonly string[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

interface FamilyDraft {
  name: string;
  line: number;
  type: MetricType | undefined;
  help: string | undefined;
  samples: Sample[];
  /** Line of each sample, for errors found once the family is complete. */
  sampleLines: number[];
}

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const drafts = new Map<string, FamilyDraft>();
  if (text === '') return new Map();
  const lines = text.split('\n');
  if (lines[lines.length - 1] !== '') throw new PrometheusTextError(lines.length, 'the text must end with a line feed');
  lines.pop();

  let current: FamilyDraft | undefined;
  const seriesSeen = new Set<string>();

  /** The family a HELP or TYPE line is about; opens it when new. */
  function familyFor(name: string, lineNo: number, what: string): FamilyDraft {
    if (!METRIC_NAME.test(name)) throw new PrometheusTextError(lineNo, `invalid metric name ${JSON.stringify(name)} in ${what}`);
    if (current !== undefined && current.name === name) {
      if (current.samples.length > 0) throw new PrometheusTextError(lineNo, `${what} for ${name} after its samples`);
      return current;
    }
    if (drafts.has(name)) throw new PrometheusTextError(lineNo, `${what} for ${name}, whose family appeared earlier`);
    closeFamily(current);
    current = { name, line: lineNo, type: undefined, help: undefined, samples: [], sampleLines: [] };
    drafts.set(name, current);
    return current;
  }

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const lineNo = index + 1;
    if (line === '') throw new PrometheusTextError(lineNo, 'empty line');
    if (line.startsWith('#')) {
      const help = /^# HELP (\S+)(?: (.*))?$/s.exec(line);
      if (help !== null) {
        const family = familyFor(help[1]!, lineNo, 'HELP');
        if (family.help !== undefined) throw new PrometheusTextError(lineNo, `second HELP for ${family.name}`);
        family.help = unescapeHelp(help[2] ?? '', lineNo);
        continue;
      }
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type !== null) {
        const family = familyFor(type[1]!, lineNo, 'TYPE');
        if (family.type !== undefined) throw new PrometheusTextError(lineNo, `second TYPE for ${family.name}`);
        if (!TYPES.includes(type[2]!)) throw new PrometheusTextError(lineNo, `unknown type ${JSON.stringify(type[2])}`);
        family.type = type[2] as MetricType;
        continue;
      }
      if (/^#\s*(?:HELP|TYPE)\b/.test(line)) throw new PrometheusTextError(lineNo, `malformed HELP or TYPE line`);
      continue; // any other comment is ignored, as the spec says
    }

    const sample = parseSampleLine(line, lineNo);
    if (current === undefined || !belongsTo(sample.name, current)) {
      throw new PrometheusTextError(lineNo, `sample ${sample.name} before its TYPE line (or outside its family)`);
    }
    if (current.type === undefined) throw new PrometheusTextError(lineNo, `sample ${sample.name} before its TYPE line`);
    const key = seriesKey(sample.name, sample.labels);
    if (seriesSeen.has(key)) throw new PrometheusTextError(lineNo, `duplicate series ${key}`);
    seriesSeen.add(key);
    checkSampleForType(sample, current.type, current.name, lineNo);
    current.samples.push(sample);
    current.sampleLines.push(lineNo);
  }
  closeFamily(current);

  const families = new Map<string, MetricFamily>();
  for (const draft of drafts.values()) {
    families.set(draft.name, { type: draft.type!, help: draft.help ?? '', samples: draft.samples });
  }
  return families;
}

/** The value of the sample with exactly this name (e.g. `x_bucket`) and label set. */
export function sampleValue(
  families: ReadonlyMap<string, MetricFamily>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const key = seriesKey(name, labels);
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && seriesKey(sample.name, sample.labels) === key) return sample.value;
    }
  }
  return undefined;
}

function closeFamily(family: FamilyDraft | undefined): void {
  if (family === undefined) return;
  if (family.type === undefined) throw new PrometheusTextError(family.line, `family ${family.name} has no TYPE line`);
  if (family.type === 'histogram') checkHistogram(family);
  if (family.type === 'summary') checkSummary(family);
}

function belongsTo(sampleName: string, family: FamilyDraft): boolean {
  if (sampleName === family.name) return family.type !== 'histogram';
  const suffix = sampleName.startsWith(family.name) ? sampleName.slice(family.name.length) : '';
  if (family.type === 'histogram') return suffix === '_bucket' || suffix === '_sum' || suffix === '_count';
  if (family.type === 'summary') return suffix === '_sum' || suffix === '_count';
  return false;
}

function checkSampleForType(sample: Sample, type: MetricType, family: string, lineNo: number): void {
  const hasLe = Object.hasOwn(sample.labels, 'le');
  const hasQuantile = Object.hasOwn(sample.labels, 'quantile');
  if (type === 'counter' && !(sample.value >= 0)) throw new PrometheusTextError(lineNo, `counter ${family} is ${sample.value}`);
  if (type === 'histogram') {
    const isBucket = sample.name === `${family}_bucket`;
    if (isBucket && !hasLe) throw new PrometheusTextError(lineNo, `${sample.name} without an le label`);
    if (!isBucket && hasLe) throw new PrometheusTextError(lineNo, `${sample.name} must not carry an le label`);
    if (isBucket) parseValue(sample.labels.le!, lineNo, 'le');
    if (!(sample.value >= 0) && sample.name !== `${family}_sum`) throw new PrometheusTextError(lineNo, `${sample.name} is ${sample.value}`);
  }
  if (type === 'summary') {
    const isQuantile = sample.name === family;
    if (isQuantile && !hasQuantile) throw new PrometheusTextError(lineNo, `${sample.name} without a quantile label`);
    if (!isQuantile && hasQuantile) throw new PrometheusTextError(lineNo, `${sample.name} must not carry a quantile label`);
    if (isQuantile) {
      const q = parseValue(sample.labels.quantile!, lineNo, 'quantile');
      if (!(q >= 0 && q <= 1)) throw new PrometheusTextError(lineNo, `quantile ${q} is outside [0, 1]`);
    }
  }
}

interface HistogramSeries {
  line: number;
  buckets: Array<{ le: number; count: number; line: number }>;
  sum: number | undefined;
  count: number | undefined;
}

function checkHistogram(family: FamilyDraft): void {
  const series = new Map<string, HistogramSeries>();
  family.samples.forEach((sample, i) => {
    const lineNo = family.sampleLines[i]!;
    const { le, ...rest } = sample.labels;
    const key = seriesKey(family.name, rest);
    let entry = series.get(key);
    if (entry === undefined) {
      entry = { line: lineNo, buckets: [], sum: undefined, count: undefined };
      series.set(key, entry);
    }
    if (le !== undefined) entry.buckets.push({ le: parseValue(le, lineNo, 'le'), count: sample.value, line: lineNo });
    else if (sample.name.endsWith('_sum')) entry.sum = sample.value;
    else entry.count = sample.value;
  });
  for (const [key, entry] of series) {
    let previous: { le: number; count: number } | undefined;
    for (const bucket of entry.buckets) {
      if (previous !== undefined) {
        if (!(bucket.le > previous.le)) throw new PrometheusTextError(bucket.line, `${key}: le ${bucket.le} does not increase on ${previous.le}`);
        if (bucket.count < previous.count) {
          throw new PrometheusTextError(bucket.line, `${key}: bucket le=${bucket.le} counts ${bucket.count}, fewer than ${previous.count} below it`);
        }
      }
      previous = bucket;
    }
    if (previous === undefined || previous.le !== Infinity) throw new PrometheusTextError(entry.line, `${key}: no +Inf bucket`);
    if (entry.count === undefined) throw new PrometheusTextError(entry.line, `${key}: no _count`);
    if (entry.sum === undefined) throw new PrometheusTextError(entry.line, `${key}: no _sum`);
    if (entry.count !== previous.count) {
      throw new PrometheusTextError(entry.line, `${key}: _count ${entry.count} differs from the +Inf bucket ${previous.count}`);
    }
  }
}

function checkSummary(family: FamilyDraft): void {
  const series = new Map<string, { line: number; sum: boolean; count: boolean }>();
  family.samples.forEach((sample, i) => {
    const { quantile: _quantile, ...rest } = sample.labels;
    const key = seriesKey(family.name, rest);
    const entry = series.get(key) ?? { line: family.sampleLines[i]!, sum: false, count: false };
    series.set(key, entry);
    if (sample.name === `${family.name}_sum`) entry.sum = true;
    if (sample.name === `${family.name}_count`) entry.count = true;
  });
  for (const [key, entry] of series) {
    if (!entry.count) throw new PrometheusTextError(entry.line, `${key}: no _count`);
    if (!entry.sum) throw new PrometheusTextError(entry.line, `${key}: no _sum`);
  }
}

/** `name{a="x"} 1 [timestamp]`, read character by character. */
function parseSampleLine(line: string, lineNo: number): Sample {
  let i = 0;
  while (i < line.length && line[i] !== '{' && line[i] !== ' ') i++;
  const name = line.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new PrometheusTextError(lineNo, `invalid metric name ${JSON.stringify(name)}`);
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const eq = line.indexOf('=', i);
      if (eq === -1) throw new PrometheusTextError(lineNo, `label without "=" at column ${i + 1}`);
      const labelName = line.slice(i, eq);
      // `__` names are Prometheus's own (and `__proto__` would not survive as a key).
      if (!LABEL_NAME.test(labelName) || labelName.startsWith('__')) {
        throw new PrometheusTextError(lineNo, `invalid label name ${JSON.stringify(labelName)}`);
      }
      if (Object.hasOwn(labels, labelName)) throw new PrometheusTextError(lineNo, `label ${labelName} given twice`);
      if (line[eq + 1] !== '"') throw new PrometheusTextError(lineNo, `label ${labelName}: value must be double-quoted`);
      const { value, end } = readLabelValue(line, eq + 2, lineNo);
      labels[labelName] = value;
      i = end;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new PrometheusTextError(lineNo, `expected "," or "}" at column ${i + 1}`);
    }
    i++;
  }
  if (line[i] !== ' ') throw new PrometheusTextError(lineNo, `expected one space before the value at column ${i + 1}`);
  const rest = line.slice(i + 1).split(' ');
  if (rest.length > 2 || rest.some((token) => token === '')) throw new PrometheusTextError(lineNo, 'expected "value" or "value timestamp" after the series');
  const sample: Sample = { name, labels, value: parseValue(rest[0]!, lineNo, 'value') };
  if (rest[1] !== undefined) {
    if (!TIMESTAMP.test(rest[1])) throw new PrometheusTextError(lineNo, `invalid timestamp ${JSON.stringify(rest[1])}`);
    sample.timestamp = Number(rest[1]);
  }
  return sample;
}

// "label_value can be any sequence of UTF-8 characters, but the backslash (\),
// double-quote ("), and line feed (\n) characters have to be escaped as \\,
// \", and \n, respectively."
function readLabelValue(line: string, start: number, lineNo: number): { value: string; end: number } {
  let value = '';
  for (let i = start; i < line.length; i++) {
    const c = line[i];
    if (c === '"') return { value, end: i + 1 };
    if (c !== '\\') {
      value += c;
      continue;
    }
    const next = line[++i];
    if (next === '\\') value += '\\';
    else if (next === '"') value += '"';
    else if (next === 'n') value += '\n';
    else throw new PrometheusTextError(lineNo, `bad escape "\\${next ?? ''}" in a label value`);
  }
  throw new PrometheusTextError(lineNo, 'unterminated label value');
}

// "the backslash and the line feed characters have to be escaped as \\ and
// \n, respectively" (HELP); a double quote is not escaped there.
function unescapeHelp(text: string, lineNo: number): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = text[++i];
    if (next === '\\') out += '\\';
    else if (next === 'n') out += '\n';
    else throw new PrometheusTextError(lineNo, `bad escape "\\${next ?? ''}" in HELP`);
  }
  return out;
}

function parseValue(token: string, lineNo: number, what: string): number {
  if (token === 'NaN') return NaN;
  if (token === '+Inf') return Infinity;
  if (token === '-Inf') return -Infinity;
  if (!DECIMAL_FLOAT.test(token)) throw new PrometheusTextError(lineNo, `invalid ${what} ${JSON.stringify(token)}`);
  return Number(token);
}

function seriesKey(name: string, labels: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((key) => `${key}=${JSON.stringify(labels[key])}`);
  return `${name}{${pairs.join(',')}}`;
}
