// The gateway benchmark of issue 3: the same chat requests, side by side in one
// run, against
//   upstream     a fast fake OpenAI-compatible upstream, hit directly;
//   http-proxy   a bare pass-through proxy on node:http in front of it;
//   fetch-proxy  a bare pass-through proxy on built-in fetch in front of it;
//   gateway      the real gateway (compiled CLI `serve`: auth, validation,
//                routing, normalisation and its JSON access log on stdout,
//                piped to a sink process).
// Each server runs in its own process; the load generator is this process.
// Throughput and latency at concurrency 1, 16 and 64; for streams, time to
// first body byte and total time at 1 and 16; CPU per request of the server
// under test. Cells are interleaved (each round runs every target at one
// concurrency, in rotating order) after a warm-up, so a noisy neighbour hurts
// all targets alike rather than one.
//
//   npm run build && node dist/bench/gateway.js
//   test/node_modules/.bin/tsx bench/gateway.ts   (tsx comes with npm ci --prefix test)
//
// Env: BENCH_SCALE (default 1) multiplies every request count;
//      BENCH_ROUNDS (default 3) splits each cell into interleaved rounds;
//      BENCH_WARMUP (default 500) requests per target and mode before measuring;
//      BENCH_GATEWAY_NODE_FLAGS node flags for the gateway only, e.g.
//        "--cpu-prof --cpu-prof-dir=/tmp/prof" (written when it stops).

import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, fetchOnce, runLoad, type LoadTarget } from './gateway-load.ts';
import type { LogBytesReply } from './gateway-log-sink.ts';
import {
  childExecArgv,
  createIpcAsker,
  forkBenchServer,
  startGateway,
  stopAll,
  type BenchProcess,
} from './gateway-processes.ts';
import { addRound, formatTable, formatTargets, Mode, TARGETS, type CellResult, type TargetName } from './gateway-report.ts';
import { ANSWER_TEXT } from './gateway-upstream-answers.ts';

const ALIAS = 'service-bench';

function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number from ${min} to ${max}`);
  return value;
}

const SCALE = envNumber('BENCH_SCALE', 1, 0.01, 100);
const ROUNDS = Math.round(envNumber('BENCH_ROUNDS', 3, 1, 20));
const WARMUP = Math.round(envNumber('BENCH_WARMUP', 500, 0, 100_000));
const GATEWAY_NODE_FLAGS = (process.env['BENCH_GATEWAY_NODE_FLAGS'] ?? '').split(/\s+/).filter((f) => f !== '');

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
}

function writeGatewayConfig(dir: string, upstreamOrigin: string): string {
  const file = path.join(dir, 'portcullis.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    dataDir: path.join(dir, 'data'),
    providers: { bench: { type: 'openai', baseUrl: `${upstreamOrigin}/v1` } },
    aliases: { [ALIAS]: { provider: 'bench', model: 'bench-model' } },
    auto: { default: ALIAS },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

function createKey(configPath: string): string {
  const out = execFileSync(
    process.execPath,
    [...childExecArgv(), fileURLToPath(CLI_MAIN), 'keys', 'create', '--name', 'bench', '--json', '--config', configPath],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
  );
  const key = (JSON.parse(out) as { key?: unknown }).key;
  if (typeof key !== 'string') throw new Error(`keys create printed no key: ${out}`);
  return key;
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
  console.log('# Gateway benchmark');
  console.log(describeMachine());
  console.log(`BENCH_SCALE=${SCALE} BENCH_ROUNDS=${ROUNDS} BENCH_WARMUP=${WARMUP}; gateway: ${fileURLToPath(CLI_MAIN)}`);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-'));
  try {
    const upstream = await forkBenchServer('upstream', sibling('gateway-upstream'), []);
    const origin = `http://127.0.0.1:${upstream.port}`;
    const [fetchProxy, httpProxy, sink] = await Promise.all([
      forkBenchServer('fetch-proxy', sibling('gateway-fetch-proxy'), [origin]),
      forkBenchServer('http-proxy', sibling('gateway-http-proxy'), [origin]),
      forkBenchServer('log-sink', sibling('gateway-log-sink'), [], 'pipe'),
    ]);
    const configPath = writeGatewayConfig(dir, origin);
    const key = createKey(configPath);
    const sinkStdin = sink.child.stdin;
    if (sinkStdin === null) throw new Error('the log sink has no stdin pipe');
    const gateway = await startGateway({ mainModule: CLI_MAIN, configPath, stdout: sinkStdin, nodeFlags: GATEWAY_NODE_FLAGS });
    const askSink = createIpcAsker(sink.child, 'log-sink');
    const logBytes = async (): Promise<number> => ((await askSink({ type: 'log-bytes' })) as unknown as LogBytesReply).bytes;

    // Every target gets the same headers, the key included, so that header
    // bytes are not a difference between them.
    const headers = { authorization: `Bearer ${key}` };
    const byName: Record<TargetName, BenchProcess> = { upstream, 'http-proxy': httpProxy, 'fetch-proxy': fetchProxy, gateway };
    const servers: Server[] = TARGETS.map((name) => ({ name, process: byName[name], load: { port: byName[name].port, headers } }));

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
    let gatewayLogBytes = 0;
    let gatewayRequests = 0;
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
          const logBefore = server.name === 'gateway' ? await logBytes() : 0;
          addRound(stepCells[index] as CellResult, await measureRound(server, step.mode, step.concurrency, perRound));
          if (server.name === 'gateway') {
            gatewayLogBytes += (await logBytes()) - logBefore;
            gatewayRequests += perRound + step.concurrency * 2;
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
        '(gateway: /proc, 10 ms ticks; others: process.cpuUsage).',
    );
    console.log(`Gateway access log: ${Math.round(gatewayLogBytes / gatewayRequests)} bytes per request on stdout.`);
    const failed = cells.filter((c) => c.errors > 0);
    for (const c of failed) console.log(`ERRORS ${c.target} ${c.mode} c${c.concurrency}: ${c.errors} (first: ${c.firstError})`);
    const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`Run took ${((performance.now() - started) / 1000).toFixed(1)} s; load average now ${load}.`);
    return failed.length > 0 ? 1 : 0;
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
    process.stderr.write(`bench/gateway: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
