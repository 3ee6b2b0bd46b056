// The table bench/gateway.ts prints: one row per (mode, concurrency, target),
// with the ratios the benchmark holds targets for, computed against the bare
// proxies of the same run (the gateway on fetch against the bare fetch proxy,
// the gateway on node:http against the bare node:http proxy); with
// BENCH_BASELINE, also the before/after table of gateway / baseline ratios.
// Pure: results in, text out.

import { percentile } from './gateway-load.ts';

/** `gateway`: upstreams on the built-in fetch (the default); `gateway-node`: "transport": "node". */
export const TARGETS = ['upstream', 'http-proxy', 'fetch-proxy', 'gateway', 'gateway-node'] as const;
/** The optional fifth target (BENCH_BASELINE): another build's gateway, run the same way. */
export const BASELINE = 'baseline';
export type TargetName = (typeof TARGETS)[number] | typeof BASELINE;
/** Row order within a (mode, concurrency) group; targets not measured are skipped. */
const TABLE_ORDER: readonly TargetName[] = [...TARGETS, BASELINE];

export const Mode = {
  Json: 'json',
  Stream: 'stream',
} as const;
export type Mode = (typeof Mode)[keyof typeof Mode];

/** One measured cell, all its rounds added up. */
export interface CellResult {
  target: TargetName;
  mode: Mode;
  concurrency: number;
  requests: number;
  errors: number;
  firstError: string | undefined;
  /** Wall time of the measured requests, all rounds, ms. */
  elapsedMs: number;
  /** CPU time (user + system) of the server under test over the same time, µs. */
  cpuMicros: number;
  totalMs: Float64Array;
  firstByteMs: Float64Array;
}

/** The share of the bare proxy's throughput on the same client each transport
 * is held to: 0.6 of the bare node:http proxy for node, 0.85 of the fetch proxy for fetch. */
interface TransportTarget {
  gateway: TargetName;
  bare: TargetName;
  /** Minimum throughput ratio at concurrency 16 (JSON). */
  throughput: number;
  /** Maximum stream TTFB p50 over the bare proxy's, ms; undefined: no target set. */
  firstByteMs: number | undefined;
}
export const TRANSPORT_TARGETS: readonly TransportTarget[] = [
  { gateway: 'gateway', bare: 'fetch-proxy', throughput: 0.85, firstByteMs: 0.5 },
  { gateway: 'gateway-node', bare: 'http-proxy', throughput: 0.6, firstByteMs: 0.5 },
];
/** The concurrency the issue's throughput targets are set at. */
const TARGET_CONCURRENCY = 16;

export function throughput(cell: CellResult): number {
  return cell.elapsedMs > 0 ? (cell.totalMs.length * 1000) / cell.elapsedMs : Number.NaN;
}

function cpuPerRequest(cell: CellResult): number {
  return cell.totalMs.length > 0 ? cell.cpuMicros / cell.totalMs.length : Number.NaN;
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

function signed(value: number, digits: number): string {
  return Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(digits)}` : '-';
}

function find(cells: readonly CellResult[], target: TargetName, mode: Mode, concurrency: number): CellResult | undefined {
  return cells.find((c) => c.target === target && c.mode === mode && c.concurrency === concurrency);
}

const HEADERS = ['mode', 'conc', 'target', 'req/s', 'vs fetch', 'vs http', 'p50 ms', 'p99 ms', 'TTFB p50', 'TTFB p99', 'ΔTTFB p50', 'CPU µs/req', 'errors'];
/** Text columns are left-aligned, numbers right-aligned. */
const LEFT = new Set([0, 2]);

export function formatTable(cells: readonly CellResult[]): string {
  const rows: string[][] = [];
  const seen = new Set<string>();
  for (const cell of cells) {
    const key = `${cell.mode}/${cell.concurrency}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const fetchCell = find(cells, 'fetch-proxy', cell.mode, cell.concurrency);
    const httpCell = find(cells, 'http-proxy', cell.mode, cell.concurrency);
    for (const target of TABLE_ORDER) {
      const c = find(cells, target, cell.mode, cell.concurrency);
      if (c === undefined) continue;
      const stream = c.mode === Mode.Stream;
      const ratio = fetchCell === undefined ? Number.NaN : throughput(c) / throughput(fetchCell);
      const httpRatio = httpCell === undefined ? Number.NaN : throughput(c) / throughput(httpCell);
      const firstByteDelta =
        stream && fetchCell !== undefined ? percentile(c.firstByteMs, 0.5) - percentile(fetchCell.firstByteMs, 0.5) : Number.NaN;
      rows.push([
        c.mode,
        String(c.concurrency),
        target,
        fixed(throughput(c), 0),
        target === 'fetch-proxy' ? '1.00' : fixed(ratio, 2),
        target === 'http-proxy' ? '1.00' : fixed(httpRatio, 2),
        fixed(percentile(c.totalMs, 0.5), 3),
        fixed(percentile(c.totalMs, 0.99), 3),
        stream ? fixed(percentile(c.firstByteMs, 0.5), 3) : '-',
        stream ? fixed(percentile(c.firstByteMs, 0.99), 3) : '-',
        stream && target !== 'fetch-proxy' ? signed(firstByteDelta, 3) : '-',
        fixed(cpuPerRequest(c), 0),
        String(c.errors),
      ]);
    }
  }
  return renderTable(HEADERS, rows, LEFT);
}

/** A Markdown table, columns padded to their widest cell. */
function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], left: ReadonlySet<number>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cols: readonly string[]): string =>
    `| ${cols.map((col, i) => (left.has(i) ? col.padEnd(widths[i] as number) : col.padStart(widths[i] as number))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (left.has(i) ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

function mean(values: Float64Array): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

const BEFORE_AFTER_HEADERS = ['mode', 'conc', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'TTFB p50', 'TTFB p99', 'CPU µs/req'];
const LEFT_BEFORE_AFTER = new Set([0]);

/** Each figure of the gateway (`against`: the gateway target on the same
 * transport as the baseline) divided by the same figure of the baseline, one
 * row per (mode, concurrency): before/after of a change in one run. Empty
 * when no baseline was measured. */
export function formatBeforeAfter(cells: readonly CellResult[], against: 'gateway' | 'gateway-node' = 'gateway'): string {
  const rows: string[][] = [];
  for (const after of cells) {
    if (after.target !== against) continue;
    const before = find(cells, BASELINE, after.mode, after.concurrency);
    if (before === undefined) continue;
    const stream = after.mode === Mode.Stream;
    const ratio = (of: (c: CellResult) => number): string => fixed(of(after) / of(before), 2);
    rows.push([
      after.mode,
      String(after.concurrency),
      ratio(throughput),
      ratio((c) => mean(c.totalMs)),
      ratio((c) => percentile(c.totalMs, 0.5)),
      ratio((c) => percentile(c.totalMs, 0.99)),
      stream ? ratio((c) => percentile(c.firstByteMs, 0.5)) : '-',
      stream ? ratio((c) => percentile(c.firstByteMs, 0.99)) : '-',
      ratio(cpuPerRequest),
    ]);
  }
  if (rows.length === 0) return '';
  return [
    `Before/after: ${against} / baseline, same cells (req/s above 1.00 is faster; latency, TTFB and CPU below 1.00 are better).`,
    '',
    renderTable(BEFORE_AFTER_HEADERS, rows, LEFT_BEFORE_AFTER),
    '',
    'Ratios within about ±5 % (0.95 to 1.05) are noise on a shared 2-core machine; CPU ratios are coarser still at small BENCH_SCALE (10 ms ticks).',
  ].join('\n');
}

/** The issue's targets, one line each per transport: throughput at
 * concurrency 16 and stream TTFB p50 over the bare proxy on the same client. */
export function formatTargets(cells: readonly CellResult[]): string {
  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const lines: string[] = [];
  for (const t of TRANSPORT_TARGETS) {
    const throughputParts: string[] = [];
    const firstByteParts: string[] = [];
    for (const gateway of cells) {
      if (gateway.target !== t.gateway) continue;
      const bare = find(cells, t.bare, gateway.mode, gateway.concurrency);
      if (bare === undefined) continue;
      if (gateway.mode === Mode.Json) {
        const ratio = throughput(gateway) / throughput(bare);
        const judged = gateway.concurrency === TARGET_CONCURRENCY ? ` (${verdict(ratio >= t.throughput)})` : '';
        throughputParts.push(`c${gateway.concurrency} ${fixed(ratio, 2)}${judged}`);
      } else {
        const delta = percentile(gateway.firstByteMs, 0.5) - percentile(bare.firstByteMs, 0.5);
        const judged = t.firstByteMs === undefined ? '' : ` (${verdict(delta <= t.firstByteMs)})`;
        firstByteParts.push(`c${gateway.concurrency} ${signed(delta, 3)} ms${judged}`);
      }
    }
    if (throughputParts.length === 0) continue;
    lines.push(`${t.gateway} / ${t.bare} throughput (target at c${TARGET_CONCURRENCY} >= ${t.throughput}): ${throughputParts.join(', ')}`);
    const ttfbTarget = t.firstByteMs === undefined ? '' : ` (target <= +${t.firstByteMs} ms)`;
    lines.push(`${t.gateway} - ${t.bare} TTFB p50, streams${ttfbTarget}: ${firstByteParts.join(', ')}`);
  }
  return lines.join('\n');
}

/** Adds a round's measurement to a cell's running total. */
export function addRound(into: CellResult, round: Omit<CellResult, 'target' | 'mode' | 'concurrency'>): void {
  into.requests += round.requests;
  into.errors += round.errors;
  into.firstError ??= round.firstError;
  into.elapsedMs += round.elapsedMs;
  into.cpuMicros += round.cpuMicros;
  into.totalMs = concat(into.totalMs, round.totalMs);
  into.firstByteMs = concat(into.firstByteMs, round.firstByteMs);
}

function concat(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
