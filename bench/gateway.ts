// The gateway benchmark: the same chat requests, side by side in one
// run, against
//   upstream     a fast fake OpenAI-compatible upstream, hit directly;
//   http-proxy   a bare pass-through proxy on node:http in front of it;
//   fetch-proxy  a bare pass-through proxy on built-in fetch in front of it;
//   gateway      the real gateway (compiled CLI `serve`: auth, validation,
//                routing, normalisation and its JSON access log on stdout,
//                piped to a sink process), its upstream on built-in fetch;
//   gateway-node the same gateway with "transport": "node" (node:http);
//   baseline     only with BENCH_BASELINE: another build's compiled CLI, started
//                exactly as the gateway is (same config, its own data
//                directory, key and log sink), for a before/after in one run.
// Each server runs in its own process; the load generator is this process.
// Throughput and latency at concurrency 1, 16 and 64; for streams, time to
// first body byte and total time at 1 and 16; CPU per request of the server
// under test. Cells are interleaved (each round runs every target at one
// concurrency, in rotating order) after a warm-up, so a noisy neighbour hurts
// all targets alike rather than one. With a baseline, a last table gives
// gateway / baseline for every figure of every cell. Last, memory per open
// stream: BENCH_OPEN_STREAMS streams held open at once through each gateway
// (./gateway-open-streams.ts).
//
//   npm run build && node dist/bench/gateway.js
//   test/node_modules/.bin/tsx bench/gateway.ts   (tsx comes with npm ci --prefix test)
//   BENCH_BASELINE=/tmp/old/dist/src/cli/main.js node dist/bench/gateway.js
//     (the baseline: `git worktree add /tmp/old <commit>`, then `npm ci` and
//     `npm run build` there; commits before the test packages moved to
//     test/package.json also compile test/ and need `npm ci` for the SDKs)
//
// Env: BENCH_SCALE (default 1) multiplies every request count;
//      BENCH_ROUNDS (default 3) splits each cell into interleaved rounds;
//      BENCH_WARMUP (default 500) requests per target and mode before measuring;
//      BENCH_GATEWAY_NODE_FLAGS node flags for the gateway (and baseline)
//        only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (written when it stops);
//      BENCH_OPEN_STREAMS (default 1000; 0 skips) streams held open at once
//        per gateway for the memory table;
//      BENCH_BASELINE (default none) path of another build's compiled CLI,
//        e.g. /tmp/old/dist/src/cli/main.js: adds the `baseline` target and
//        the before/after table (gateway / baseline);
//      BENCH_BASELINE_TRANSPORT (fetch or node, default fetch) the baseline's
//        upstream transport; with node the table is gateway-node / baseline.

import { Buffer } from 'node:buffer';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createAgent, fetchOnce, runLoad, type LoadTarget } from './gateway-load.ts';
import { formatOpenStreams, measureOpenStreams, type OpenStreamsResult } from './gateway-open-streams.ts';
import type { LogBytesReply } from './gateway-log-sink.ts';
import {
  childExecArgv,
  createIpcAsker,
  createKey,
  envNumber,
  forkBenchServer,
  startGateway,
  stopAll,
  type BenchProcess,
} from './gateway-processes.ts';
import {
  addRound,
  BASELINE,
  formatBeforeAfter,
  formatTable,
  formatTargets,
  Mode,
  TARGETS,
  type CellResult,
  type TargetName,
} from './gateway-report.ts';
import { ANSWER_TEXT, HOLD_MODEL } from './gateway-upstream-answers.ts';

const ALIAS = 'service-bench';
/** The alias whose streams the fake upstream holds open (HOLD_MODEL). */
const HOLD_ALIAS = 'service-hold';

const SCALE = envNumber('BENCH_SCALE', 1, 0.01, 100);
const ROUNDS = Math.round(envNumber('BENCH_ROUNDS', 3, 1, 20));
const WARMUP = Math.round(envNumber('BENCH_WARMUP', 500, 0, 100_000));
const OPEN_STREAMS = Math.round(envNumber('BENCH_OPEN_STREAMS', 1000, 0, 20_000));
const GATEWAY_NODE_FLAGS = (process.env['BENCH_GATEWAY_NODE_FLAGS'] ?? '').split(/\s+/).filter((f) => f !== '');

/** A bad setting: reported as its message alone, no stack. */
class BenchEnvError extends Error {}

/** BENCH_BASELINE: the compiled CLI (src/cli/main.js) of another build, or
 * undefined when unset. Checked before anything starts. */
function baselineCli(): URL | undefined {
  const raw = process.env['BENCH_BASELINE'];
  if (raw === undefined || raw === '') return undefined;
  const file = path.resolve(raw);
  const hint = "set it to another build's compiled CLI, e.g. /tmp/old/dist/src/cli/main.js, or unset it";
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch (error) {
    throw new BenchEnvError(`BENCH_BASELINE=${raw}: ${file} does not exist (${(error as NodeJS.ErrnoException).code ?? 'error'}); ${hint}`);
  }
  if (!isFile) throw new BenchEnvError(`BENCH_BASELINE=${raw}: ${file} is not a file; ${hint}`);
  return pathToFileURL(file);
}

/** BENCH_BASELINE_TRANSPORT: the baseline's upstream transport (fetch by default). */
function baselineTransport(): 'fetch' | 'node' {
  const raw = process.env['BENCH_BASELINE_TRANSPORT'] ?? '';
  if (raw === '' || raw === 'fetch' || raw === 'node') return raw === 'node' ? 'node' : 'fetch';
  throw new BenchEnvError(`BENCH_BASELINE_TRANSPORT=${raw}: must be fetch or node`);
}

/** Requests per cell at BENCH_SCALE=1 (about a minute in all on 2 cores). */
const PLAN: readonly { mode: Mode; concurrency: number; requests: number }[] = [
  { mode: Mode.Json, concurrency: 1, requests: 3000 },
  { mode: Mode.Json, concurrency: 16, requests: 8000 },
  { mode: Mode.Json, concurrency: 64, requests: 8000 },
  { mode: Mode.Stream, concurrency: 1, requests: 1200 },
  { mode: Mode.Stream, concurrency: 16, requests: 3000 },
];

const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant. Answer in one sentence.' },
  { role: 'user', content: 'What does an inference gateway do between a client and a model server?' },
];
const HOLD_BODY = Buffer.from(JSON.stringify({ model: HOLD_ALIAS, messages: MESSAGES, max_tokens: 64, stream: true }));
const BODIES: Record<Mode, Buffer> = {
  json: Buffer.from(JSON.stringify({ model: ALIAS, messages: MESSAGES, temperature: 0.2, max_tokens: 64 })),
  stream: Buffer.from(
    JSON.stringify({ model: ALIAS, messages: MESSAGES, temperature: 0.2, max_tokens: 64, stream: true, stream_options: { include_usage: true } }),
  ),
};

/** Compiled, siblings are .js files under dist/; under tsx, the .ts sources. */
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const sibling = (name: string): URL => new URL(`./${name}${EXT}`, import.meta.url);
const CLI_MAIN = new URL(`../src/cli/main${EXT}`, import.meta.url);

interface Server {
  name: TargetName;
  process: BenchProcess;
  load: LoadTarget;
  /** Gateways only: bytes their log sink has read from their stdout so far. */
  logBytes?: () => Promise<number>;
}

/** Which upstream transport a gateway target uses; "fetch" writes no setting, so a baseline build that predates the setting reads the config too. */
type Transport = 'fetch' | 'node';

/**
 * Every request of the benchmark comes from 127.0.0.1, and the memory test holds 1,000 streams
 * from it: more than one address may hold by default (limits.maxConnectionsPerAddress), so each
 * gateway lets this one client hold them all. A baseline that predates the setting refuses the
 * config (its key creation fails), and has no per-address limit to lift: it runs without it.
 */
const ONE_CLIENT_LIMITS = { maxConnections: 4096, maxConnectionsPerAddress: 4096 };

function writeGatewayConfig(dir: string, upstreamOrigin: string, transport: Transport, oneClient: boolean): string {
  const file = path.join(dir, 'portcullis.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    ...(oneClient ? { limits: ONE_CLIENT_LIMITS } : {}),
    admin: { port: 0 },
    dataDir: path.join(dir, 'data'),
    providers: { bench: { type: 'openai', baseUrl: `${upstreamOrigin}/v1`, ...(transport === 'node' ? { transport } : {}) } },
    aliases: { [ALIAS]: { provider: 'bench', model: 'bench-model' }, [HOLD_ALIAS]: { provider: 'bench', model: HOLD_MODEL } },
    auto: { default: ALIAS },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}


type GatewayName = 'gateway' | 'gateway-node' | typeof BASELINE;

interface GatewayTarget {
  process: BenchProcess;
  key: string;
  logBytes: () => Promise<number>;
}

/** The gateway, or the baseline with another build's CLI, set up the same way:
 * its own directory under `dir` (config and data directory, so that the two
 * share no key store or usage file), a key created by that CLI (same length,
 * so the same header bytes), and its own log sink on its stdout. */
async function startGatewayTarget(name: GatewayName, cli: URL, dir: string, upstreamOrigin: string): Promise<GatewayTarget> {
  const own = path.join(dir, name);
  mkdirSync(own);
  const sinkName = name === 'gateway' ? 'log-sink' : `${name} log-sink`;
  const sink = await forkBenchServer(sinkName, sibling('gateway-log-sink'), [], 'pipe');
  const transport = name === 'gateway-node' ? 'node' : name === BASELINE ? baselineTransport() : 'fetch';
  let configPath = writeGatewayConfig(own, upstreamOrigin, transport, true);
  let key: string;
  try {
    key = createKey(cli, configPath);
  } catch (error) {
    if (name !== BASELINE) throw error;
    process.stderr.write(`  the baseline refused the one-client limits (a build from before limits.maxConnectionsPerAddress): started without them\n`);
    configPath = writeGatewayConfig(own, upstreamOrigin, transport, false);
    key = createKey(cli, configPath);
  }
  const sinkStdin = sink.child.stdin;
  if (sinkStdin === null) throw new Error(`the ${sinkName} has no stdin pipe`);
  const server = await startGateway({ mainModule: cli, configPath, stdout: sinkStdin, nodeFlags: GATEWAY_NODE_FLAGS, name });
  const askSink = createIpcAsker(sink.child, sinkName);
  const logBytes = async (): Promise<number> => ((await askSink({ type: 'log-bytes' })) as unknown as LogBytesReply).bytes;
  return { process: server, key, logBytes };
}

/** One full answer from each target, checked, before any timing: a benchmark
 * of error responses would be fast and worthless. */
async function checkAnswers(server: Server): Promise<void> {
  const json = await fetchOnce(server.load, BODIES.json);
  if (json.status !== 200) throw new Error(`${server.name}: status ${json.status}: ${json.text.slice(0, 500)}`);
  const content = (JSON.parse(json.text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  if (content !== ANSWER_TEXT) throw new Error(`${server.name}: unexpected completion: ${json.text.slice(0, 500)}`);

  const stream = await fetchOnce(server.load, BODIES.stream);
  if (stream.status !== 200) throw new Error(`${server.name}: stream status ${stream.status}: ${stream.text.slice(0, 500)}`);
  const events = stream.text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice('data: '.length));
  if (events[events.length - 1] !== '[DONE]') throw new Error(`${server.name}: stream did not end with [DONE]: ${stream.text.slice(-300)}`);
  let text = '';
  for (const data of events.slice(0, -1)) {
    const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
    text += chunk.choices?.[0]?.delta?.content ?? '';
  }
  if (text !== ANSWER_TEXT) throw new Error(`${server.name}: streamed text was ${JSON.stringify(text)}`);
}

async function measureRound(server: Server, mode: Mode, concurrency: number, requests: number): Promise<Omit<CellResult, 'target' | 'mode' | 'concurrency'>> {
  const agent = createAgent(concurrency);
  try {
    const run = { target: server.load, body: BODIES[mode], stream: mode === Mode.Stream, concurrency, agent };
    // Opens the connections outside the measured window.
    await runLoad({ ...run, requests: concurrency * 2 });
    const cpuBefore = await server.process.cpuMicros();
    const samples = await runLoad({ ...run, requests });
    const cpuAfter = await server.process.cpuMicros();
    return { ...samples, cpuMicros: cpuAfter - cpuBefore };
  } finally {
    agent.destroy();
  }
}

function describeMachine(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return `Node ${process.version} (${process.platform} ${process.arch}); ${cpus.length} CPUs: ${cpus[0]?.model ?? 'unknown'}; load average ${load}`;
}

async function main(): Promise<number> {
  const started = performance.now();
  const baselineMain = baselineCli();
  baselineTransport();
  console.log('# Gateway benchmark');
  console.log(describeMachine());
  const baselineNote = baselineMain === undefined ? '' : `; baseline: ${fileURLToPath(baselineMain)}`;
  console.log(`BENCH_SCALE=${SCALE} BENCH_ROUNDS=${ROUNDS} BENCH_WARMUP=${WARMUP}; gateway: ${fileURLToPath(CLI_MAIN)}${baselineNote}`);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-'));
  try {
    const upstream = await forkBenchServer('upstream', sibling('gateway-upstream'), []);
    const origin = `http://127.0.0.1:${upstream.port}`;
    const [fetchProxy, httpProxy] = await Promise.all([
      forkBenchServer('fetch-proxy', sibling('gateway-fetch-proxy'), [origin]),
      forkBenchServer('http-proxy', sibling('gateway-http-proxy'), [origin]),
    ]);
    const gateway = await startGatewayTarget('gateway', CLI_MAIN, dir, origin);
    const gatewayNode = await startGatewayTarget('gateway-node', CLI_MAIN, dir, origin);
    const baseline = baselineMain === undefined ? undefined : await startGatewayTarget(BASELINE, baselineMain, dir, origin);

    // Every target gets the same headers, the key included, so that header
    // bytes are not a difference between them (the baseline: its own key of
    // the same length).
    // (gateway-node: its own key, of the same length.)
    const headers = { authorization: `Bearer ${gateway.key}` };
    const byName: Record<(typeof TARGETS)[number], BenchProcess> = {
      upstream,
      'http-proxy': httpProxy,
      'fetch-proxy': fetchProxy,
      gateway: gateway.process,
      'gateway-node': gatewayNode.process,
    };
    const servers: Server[] = TARGETS.map((name) => ({
      name,
      process: byName[name],
      load: { port: byName[name].port, headers: name === 'gateway-node' ? { authorization: `Bearer ${gatewayNode.key}` } : headers },
      logBytes: name === 'gateway' ? gateway.logBytes : name === 'gateway-node' ? gatewayNode.logBytes : undefined,
    }));
    if (baseline !== undefined) {
      const load = { port: baseline.process.port, headers: { authorization: `Bearer ${baseline.key}` } };
      servers.push({ name: BASELINE, process: baseline.process, load, logBytes: baseline.logBytes });
    }

    for (const server of servers) await checkAnswers(server);

    if (WARMUP > 0) {
      process.stderr.write(`  warm-up: ${WARMUP} requests per target and mode\n`);
      for (const server of servers) {
        for (const mode of [Mode.Json, Mode.Stream]) {
          const agent = createAgent(16);
          const warm = await runLoad({ target: server.load, body: BODIES[mode], stream: mode === Mode.Stream, concurrency: 16, requests: WARMUP, agent });
          agent.destroy();
          if (warm.errors > 0) throw new Error(`${server.name}: ${warm.errors} errors during warm-up (${warm.firstError})`);
        }
      }
    }

    const cells: CellResult[] = [];
    const failedOpen: string[] = [];
    /** Per gateway target: access log bytes and the requests that wrote them. */
    const accessLogs = new Map<TargetName, { bytes: number; requests: number }>();
    for (const step of PLAN) {
      const perRound = Math.max(1, Math.ceil((step.requests * SCALE) / ROUNDS));
      const stepCells = servers.map((s): CellResult => ({
        target: s.name,
        mode: step.mode,
        concurrency: step.concurrency,
        requests: 0,
        errors: 0,
        firstError: undefined,
        elapsedMs: 0,
        cpuMicros: 0,
        totalMs: new Float64Array(0),
        firstByteMs: new Float64Array(0),
      }));
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < servers.length; k++) {
          const index = (round + k) % servers.length;
          const server = servers[index] as Server;
          const logBefore = server.logBytes === undefined ? 0 : await server.logBytes();
          addRound(stepCells[index] as CellResult, await measureRound(server, step.mode, step.concurrency, perRound));
          if (server.logBytes !== undefined) {
            const log = accessLogs.get(server.name) ?? { bytes: 0, requests: 0 };
            log.bytes += (await server.logBytes()) - logBefore;
            log.requests += perRound + step.concurrency * 2;
            accessLogs.set(server.name, log);
          }
        }
      }
      cells.push(...stepCells);
      process.stderr.write(`  measured ${step.mode} c${step.concurrency} (${perRound * ROUNDS} requests per target)\n`);
    }

    console.log('');
    console.log(formatTable(cells));
    console.log('');
    console.log(formatTargets(cells));
    console.log(
      'Latencies in ms; TTFB = first body byte; ΔTTFB = vs fetch-proxy; CPU = user+system of that server process only ' +
        '(gateways: /proc, 10 ms ticks; others: process.cpuUsage).',
    );
    for (const [name, log] of accessLogs) {
      console.log(`${name} access log: ${Math.round(log.bytes / log.requests)} bytes per request on stdout.`);
    }
    if (OPEN_STREAMS > 0) {
      const rows: { target: string; result: OpenStreamsResult }[] = [];
      for (const server of servers) {
        if (server.logBytes === undefined) continue;
        process.stderr.write(`  holding ${OPEN_STREAMS} open streams through ${server.name}\n`);
        const result = await measureOpenStreams(server.process.pid, server.load, HOLD_BODY, OPEN_STREAMS, () => upstream.child.send({ type: 'release' }));
        rows.push({ target: server.name, result });
        if (result.completed !== result.count) failedOpen.push(`${server.name}: ${result.count - result.completed} of ${result.count} held streams did not complete`);
      }
      console.log('');
      console.log(`Memory per open stream: ${OPEN_STREAMS} streams held open at once through each gateway (RSS and descriptors from /proc).`);
      console.log('');
      console.log(formatOpenStreams(rows));
      for (const line of failedOpen) console.log(`ERRORS ${line}`);
    }
    const failed = cells.filter((c) => c.errors > 0);
    for (const c of failed) console.log(`ERRORS ${c.target} ${c.mode} c${c.concurrency}: ${c.errors} (first: ${c.firstError})`);
    const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`Run took ${((performance.now() - started) / 1000).toFixed(1)} s; load average now ${load}.`);
    const beforeAfter = formatBeforeAfter(cells, baselineTransport() === 'node' ? 'gateway-node' : 'gateway');
    if (beforeAfter !== '') console.log(`\n${beforeAfter}`);
    return failed.length > 0 || failedOpen.length > 0 ? 1 : 0;
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Ctrl-C: stop the servers at once; the run then fails on its next request
// and main's cleanup (the temporary config and key store) still happens.
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  process.stderr.write('interrupted; stopping the servers\n');
  void stopAll();
});

main().then(
  (code) => {
    process.exitCode = interrupted ? 130 : code;
  },
  (error: unknown) => {
    if (interrupted) {
      process.exitCode = 130;
      return;
    }
    const text = error instanceof BenchEnvError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`bench/gateway: ${text}\n`);
    process.exitCode = 1;
  },
);
