// A census of what the gateway makes per request, counted rather than timed,
// so that it does not move with the machine's load:
// - async resources per request, PROMISE among them (an `await` on a promise
//   makes one too while the hook is on), for a JSON answer and for streams of 1
//   and 100 chunks, so that (100 - 1) / 99 is the cost of one more chunk;
// - function objects ("closure"), objects, strings and bytes live per request
//   in flight: heap snapshots with none and with HOLD requests held open.
// Counted in the serving process only (./request-census-child.ts): this
// process drives the requests, the fake upstream (./request-census-upstream.ts)
// is a third. Each upstream transport, both bare proxies of bench/gateway.ts
// as the floor, and with BENCH_BASELINE another build's gateway side by side.
//
// BENCH_BASELINE: another build's dist directory (or its dist/src/cli/main.js,
// as bench/gateway.ts takes it). CENSUS_REQUESTS scales the request counts.

import { Buffer } from 'node:buffer';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { forkBenchServer, stopAll, stopProcess, type BenchProcess } from './gateway-processes.ts';
import type { CensusRequest } from './request-census-child.ts';
import { heapPerRequest, readHeapCensus, type HeapCensus } from './request-census-heap.ts';

const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const sibling = (name: string): URL => new URL(`./${name}${EXT}`, import.meta.url);
/** This build's dist directory (bench/ sits in it, compiled). */
const THIS_DIST = fileURLToPath(new URL('..', import.meta.url));

const SCALE = Number(process.env['CENSUS_REQUESTS'] ?? '1');
const N_JSON = Math.max(1, Math.round(200 * SCALE));
const N_STREAM_1 = Math.max(1, Math.round(100 * SCALE));
const N_STREAM_100 = Math.max(1, Math.round(20 * SCALE));
const HOLD = 200;
const QUERY_TIMEOUT_MS = 120_000;
const HOLD_TIMEOUT_MS = 60_000;

const MESSAGES = [{ role: 'user', content: 'What does an inference gateway do between a client and a model server?' }];
const body = (model: string, stream: boolean): Buffer =>
  Buffer.from(JSON.stringify({ model, messages: MESSAGES, max_tokens: 64, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }));
const BODIES = {
  json: body('census-json', false),
  stream1: body('census-1', true),
  stream100: body('census-100', true),
  holdJson: body('census-hold', false),
  holdStream: body('census-hold', true),
};

/** Request/reply over IPC with a long timeout: a heap snapshot takes seconds on a loaded machine. */
function asker(child: ChildProcess, name: string): (query: CensusRequest | { type: 'held' | 'release' }) => Promise<Record<string, unknown>> {
  let nextId = 1;
  const pending = new Map<number, (reply: Record<string, unknown>) => void>();
  child.on('message', (message: unknown) => {
    const reply = message as Record<string, unknown>;
    const resolve = pending.get(reply['id'] as number);
    pending.delete(reply['id'] as number);
    resolve?.(reply);
  });
  return (query) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`${name} did not answer '${query.type}' within ${QUERY_TIMEOUT_MS} ms`)), QUERY_TIMEOUT_MS);
      pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      child.send({ ...query, id });
    });
}

interface Answer {
  status: number;
  text: string;
}

/** One request; `onData` is called with each part of the answer's body as it arrives. */
function send(port: number, key: string | null, payload: Buffer, agent: http.Agent | false, onData?: (first: boolean) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': payload.length };
    if (key !== null) headers['authorization'] = `Bearer ${key}`;
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (part: string) => {
        onData?.(text === '');
        text += part;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function check(name: string, answer: Answer, stream: boolean): void {
  const complete = stream ? answer.text.endsWith('data: [DONE]\n\n') : answer.text.includes('"chat.completion"');
  if (answer.status !== 200 || !complete) throw new Error(`${name}: status ${answer.status}: ${answer.text.slice(0, 400)}`);
}

type Counts = Record<string, number>;

interface Served {
  name: string;
  process: BenchProcess;
  key: string | null;
  ask: ReturnType<typeof asker>;
  /** What a reset and a read cost with no request between them. */
  idle: Counts;
}

/** `count` requests one after another; a stream's next event leaves the upstream once the client received the previous one. */
async function sequential(served: Served, upstream: Served, payload: Buffer, stream: boolean, count: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const next = (): void => void upstream.process.child.send({ type: 'next' });
  try {
    for (let i = 0; i < count; i++) check(served.name, await send(served.process.port, served.key, payload, agent, stream ? next : undefined), stream);
  } finally {
    agent.destroy();
  }
}

/** Async resources made per request, by type, while `count` requests run one after another. */
async function countPerRequest(served: Served, upstream: Served, payload: Buffer, stream: boolean, count: number): Promise<Counts> {
  await served.ask({ type: 'reset' });
  await sequential(served, upstream, payload, stream, count);
  const { counts } = (await served.ask({ type: 'read' })) as { counts: Counts };
  const perRequest: Counts = {};
  for (const [type, made] of Object.entries(counts)) perRequest[type] = (made - (served.idle[type] ?? 0)) / count;
  return perRequest;
}

async function snapshot(served: Served, dir: string, name: string): Promise<HeapCensus> {
  const file = path.join(dir, `${name}.heapsnapshot`);
  await served.ask({ type: 'snapshot', file });
  try {
    return readHeapCensus(file);
  } finally {
    rmSync(file, { force: true });
  }
}

/** Holds HOLD requests in flight (each on its own connection, upstream too), runs `whileHeld`, then releases them and checks every answer. */
async function holdInFlight(served: Served, upstream: Served, stream: boolean, whileHeld: () => Promise<void>): Promise<void> {
  const payload = stream ? BODIES.holdStream : BODIES.holdJson;
  let opened = 0;
  const answers: Promise<Answer>[] = [];
  for (let i = 0; i < HOLD; i++) answers.push(send(served.process.port, served.key, payload, false, (first) => void (first && opened++)));
  // A stream is in flight once its first chunk reached the client; a JSON request once the upstream holds it.
  const deadline = Date.now() + HOLD_TIMEOUT_MS;
  while ((stream && opened < HOLD) || ((await upstream.ask({ type: 'held' })) as { count: number }).count < HOLD) {
    if (Date.now() > deadline) throw new Error(`${served.name}: ${HOLD} requests were not all in flight within ${HOLD_TIMEOUT_MS} ms`);
    await delay(20);
  }
  await whileHeld();
  await upstream.ask({ type: 'release' });
  for (const answer of await Promise.all(answers)) check(served.name, answer, stream);
}

/** The heap with HOLD requests in flight less the heap with none, per request. */
async function heapPerInFlight(served: Served, upstream: Served, dir: string, stream: boolean): Promise<HeapCensus> {
  // The connections of earlier requests close first: only the held ones' count.
  await delay(1000);
  const before = await snapshot(served, dir, 'before');
  let during: HeapCensus | undefined;
  await holdInFlight(served, upstream, stream, async () => {
    during = await snapshot(served, dir, 'during');
  });
  if (during === undefined) throw new Error(`${served.name}: no heap snapshot was taken`);
  return heapPerRequest(before, during, HOLD);
}

interface Census {
  json: Counts;
  stream1: Counts;
  stream100: Counts;
  heapJson: HeapCensus;
  heapStream: HeapCensus;
}

async function takeCensus(served: Served, upstream: Served, dir: string): Promise<Census> {
  // Warm-up: lazy initialisation and the JIT out of the way before anything is counted.
  await sequential(served, upstream, BODIES.json, false, 50);
  await sequential(served, upstream, BODIES.stream1, true, 20);
  await sequential(served, upstream, BODIES.stream100, true, 3);
  await served.ask({ type: 'reset' });
  served.idle = ((await served.ask({ type: 'read' })) as { counts: Counts }).counts;
  const json = await countPerRequest(served, upstream, BODIES.json, false, N_JSON);
  const stream1 = await countPerRequest(served, upstream, BODIES.stream1, true, N_STREAM_1);
  const stream100 = await countPerRequest(served, upstream, BODIES.stream100, true, N_STREAM_100);
  // Held once unmeasured first: connection pools and lazily made state reach the size they keep, in both snapshots.
  await holdInFlight(served, upstream, false, async () => undefined);
  await holdInFlight(served, upstream, true, async () => undefined);
  const heapJson = await heapPerInFlight(served, upstream, dir, false);
  const heapStream = await heapPerInFlight(served, upstream, dir, true);
  return { json, stream1, stream100, heapJson, heapStream };
}

async function start(name: string, module: string, args: string[]): Promise<Served> {
  const process = await forkBenchServer(name, sibling(module), args);
  const ask = asker(process.child, name);
  const { key } = module === 'request-census-child' ? ((await ask({ type: 'key' })) as { key?: string | null }) : {};
  return { name, process, key: key ?? null, ask, idle: {} };
}

/** BENCH_BASELINE as a dist directory, whichever form it was given in; undefined when unset. */
function baselineDist(): string | undefined {
  const raw = process.env['BENCH_BASELINE'];
  if (raw === undefined || raw === '') return undefined;
  const given = path.resolve(raw);
  // dist/src/cli/main.js, as bench/gateway.ts takes it, names the same build.
  const dist = given.endsWith('.js') ? path.resolve(given, '../../..') : given;
  try {
    statSync(path.join(dist, 'src/gateway/gateway.js'));
  } catch {
    throw new Error(`BENCH_BASELINE=${raw}: ${dist} holds no src/gateway/gateway.js; set it to another build's dist directory, or unset it`);
  }
  return dist;
}

type Transport = 'fetch' | 'node';
type Column = 'baseline' | 'build' | 'bare';
const TRANSPORTS: readonly Transport[] = ['fetch', 'node'];

const promises = (counts: Counts): number => counts['PROMISE'] ?? 0;
const others = (counts: Counts): number => Object.entries(counts).reduce((sum, [type, n]) => (type === 'PROMISE' ? sum : sum + n), 0);
const perChunk = (c: Census, pick: (counts: Counts) => number): number => (pick(c.stream100) - pick(c.stream1)) / 99;

const ROWS: readonly { label: string; value: (c: Census) => number; digits: number }[] = [
  { label: 'promises / JSON request', value: (c) => promises(c.json), digits: 1 },
  { label: 'promises / stream request (1 chunk)', value: (c) => promises(c.stream1), digits: 1 },
  { label: 'promises / extra stream chunk', value: (c) => perChunk(c, promises), digits: 2 },
  { label: 'other async resources / JSON request', value: (c) => others(c.json), digits: 1 },
  { label: 'other async resources / stream request (1 chunk)', value: (c) => others(c.stream1), digits: 1 },
  { label: 'other async resources / extra stream chunk', value: (c) => perChunk(c, others), digits: 2 },
  { label: 'closures live / JSON request in flight', value: (c) => c.heapJson.closures, digits: 0 },
  { label: 'objects live / JSON request in flight', value: (c) => c.heapJson.objects, digits: 0 },
  { label: 'strings live / JSON request in flight', value: (c) => c.heapJson.strings, digits: 0 },
  { label: 'kB live / JSON request in flight', value: (c) => c.heapJson.bytes / 1024, digits: 1 },
  { label: 'closures live / open stream', value: (c) => c.heapStream.closures, digits: 0 },
  { label: 'objects live / open stream', value: (c) => c.heapStream.objects, digits: 0 },
  { label: 'strings live / open stream', value: (c) => c.heapStream.strings, digits: 0 },
  { label: 'kB live / open stream', value: (c) => c.heapStream.bytes / 1024, digits: 1 },
];

function table(results: Map<string, Census>, withBaseline: boolean): string {
  const columns: Column[] = withBaseline ? ['baseline', 'build', 'bare'] : ['build', 'bare'];
  const head = ['measure', 'transport', ...(withBaseline ? ['baseline', 'this build', 'ratio'] : ['this build']), 'bare proxy'];
  const lines = [`| ${head.join(' | ')} |`, `|---|---|${head.slice(2).map(() => '---:').join('|')}|`];
  for (const row of ROWS) {
    for (const transport of TRANSPORTS) {
      const value = (column: Column): number | undefined => {
        const census = results.get(`${column}/${transport}`);
        return census === undefined ? undefined : row.value(census);
      };
      const cell = (v: number | undefined): string => (v === undefined ? '-' : v.toLocaleString('en-US', { minimumFractionDigits: row.digits, maximumFractionDigits: row.digits }));
      const cells = columns.map((column) => cell(value(column)));
      if (withBaseline) {
        const base = value('baseline');
        const build = value('build');
        cells.splice(2, 0, base === undefined || build === undefined || base === 0 ? '-' : (build / base).toFixed(2));
      }
      lines.push(`| ${row.label} | ${transport} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

/** The async resources other than promises, per JSON request, for each target. */
function otherTypes(results: Map<string, Census>): string {
  const lines: string[] = [];
  for (const [target, census] of results) {
    const types = Object.entries(census.json).filter(([type, n]) => type !== 'PROMISE' && Math.abs(n) >= 0.05);
    lines.push(`- ${target}: ${types.map(([type, n]) => `${type} ${n.toFixed(1)}`).join(', ') || 'none'}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const baseline = baselineDist();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-census-'));
  const results = new Map<string, Census>();
  try {
    const upstream = await start('census upstream', 'request-census-upstream', []);
    const origin = `http://127.0.0.1:${upstream.process.port}`;
    const targets: { column: Column; transport: Transport; args: string[] }[] = [];
    for (const transport of TRANSPORTS) {
      if (baseline !== undefined) targets.push({ column: 'baseline', transport, args: [origin, 'gateway', baseline, transport] });
      targets.push({ column: 'build', transport, args: [origin, 'gateway', THIS_DIST, transport] });
      targets.push({ column: 'bare', transport, args: [origin, transport === 'fetch' ? 'bare-fetch' : 'bare-node'] });
    }
    for (const target of targets) {
      const name = `${target.column}/${target.transport}`;
      process.stderr.write(`  census of ${name}...\n`);
      // One serving process at a time: the others would only add load.
      const served = await start(name, 'request-census-child', target.args);
      try {
        results.set(name, await takeCensus(served, upstream, dir));
      } finally {
        await stopProcess(served.process.child);
      }
    }
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`## Per request, counted in the serving process\n`);
  console.log(`Sequential requests: ${N_JSON} JSON, ${N_STREAM_1} streams of 1 chunk, ${N_STREAM_100} of 100; heap: ${HOLD} held at once.`);
  if (baseline !== undefined) console.log(`Baseline: ${baseline}; ratio = this build / baseline.`);
  console.log(`\n${table(results, baseline !== undefined)}\n`);
  console.log(`Other async resources per JSON request, by type (a keep-alive http.Agent announces a reused socket as a new TCPWRAP):\n${otherTypes(results)}`);
}

try {
  await main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
