// The embeddings benchmark: one request of 2,048 inputs of 1 kB each, which
// the gateway splits in 4 calls of 512 (the openai provider's default
// maxInputsPerCall) sent 4 at a time, against the same 4 calls sent directly
// to the same fake upstream (./embeddings-upstream.ts: 3,072-wide base64
// vectors, prebuilt), side by side in one run, interleaved round by round.
// Figures: the time of each (median and p90 of BENCH_ROUNDS), the gateway's
// extra time over direct, and the gateway's peak memory per request: its
// resident set's high-water mark (VmHWM, reset before each request through
// /proc/PID/clear_refs) above its resident set before the request, against the
// size of the answer it wrote. Both upstream transports (fetch, node).
//
//   npm run build && node dist/bench/embeddings.js
//
// Env: BENCH_ROUNDS (default 10) timed requests per target;
//      BENCH_UPSTREAM_MS (default 0) the fake model's time per call: with 0 the
//        upstream is only the wire, which no proxy can add 5 % to (it must read
//        and write every byte again); a real model takes seconds for 512 inputs;
//      BENCH_GATEWAY_NODE_FLAGS node flags for the gateways, e.g.
//        "--cpu-prof --cpu-prof-dir=/tmp/prof" (written when they stop).
// The codec alone (base64 and float conversion in MB/s): bench/embeddings-codec.ts.
import http from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKey, forkBenchServer, startGateway, stopAll, type BenchProcess } from './gateway-processes.ts';

const INPUTS = 2048;
const INPUT_BYTES = 1024;
const PART = 512;
const WIDTH = 3072;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 10);
const WARMUP = 2;
const UPSTREAM_MS = Number(process.env['BENCH_UPSTREAM_MS'] ?? 0);
const MODEL = 'bench-embed';
const CLI_MAIN = new URL('../src/cli/main.js', import.meta.url);
const GATEWAY_NODE_FLAGS = (process.env['BENCH_GATEWAY_NODE_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');

function sibling(name: string): URL {
  return new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
}

interface Posted {
  status: number;
  bytes: number;
}

/** A connection per request: a kept-alive socket the server closes just as it is reused would fail a round; setting one up on loopback costs nothing next to 33 MB. */
const agent = new http.Agent({ keepAlive: false, maxSockets: 8 });

/** POSTs `body` and counts the answer's bytes (never holds them: the client's memory is not the gateway's). */
function post(port: number, body: string, key: string | null): Promise<Posted & { head: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key !== null) headers['authorization'] = `Bearer ${key}`;
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/embeddings', headers, agent }, (res) => {
      let bytes = 0;
      let head = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // The start of the answer, for an error's message.
        if (head.length < 500) head += chunk.toString('utf8', 0, 500);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, head }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Target {
  name: string;
  /** One request's worth of work: resolves with the answer bytes. */
  run(): Promise<number>;
  /** The process whose memory is measured; null for direct (the upstream's own). */
  process: BenchProcess | null;
  times: number[];
  peaks: number[];
  answerBytes: number;
}

function procStatusKb(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]);
}

async function measure(target: Target): Promise<void> {
  const pid = target.process?.pid;
  let before = 0;
  if (pid !== undefined) {
    // 5: reset the peak resident set to the current one.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    before = procStatusKb(pid, 'VmRSS');
  }
  const started = performance.now();
  target.answerBytes = await target.run();
  target.times.push(performance.now() - started);
  if (pid !== undefined) target.peaks.push((procStatusKb(pid, 'VmHWM') - before) * 1024);
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function startGatewayFor(dir: string, transport: 'fetch' | 'node', upstreamPort: number): Promise<{ process: BenchProcess; key: string }> {
  const own = path.join(dir, transport);
  mkdirSync(own);
  const configPath = path.join(own, 'config.json');
  const config = {
    dataDir: path.join(own, 'data'),
    providers: { bench: { type: 'openai', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, transport } },
    aliases: { chat: { provider: 'bench', model: 'bench-model' }, [MODEL]: { kind: 'embeddings', provider: 'bench', model: MODEL } },
    auto: { default: 'chat' },
    admin: { port: 0 },
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const key = createKey(CLI_MAIN, configPath);
  const sink = await forkBenchServer(`${transport} log-sink`, sibling('gateway-log-sink'), [], 'pipe');
  const stdin = sink.child.stdin;
  if (stdin === null) throw new Error('the log sink has no stdin pipe');
  const server = await startGateway({ mainModule: CLI_MAIN, configPath, stdout: stdin, nodeFlags: GATEWAY_NODE_FLAGS, name: `gateway-${transport}` });
  return { process: server, key };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-embeddings-'));
  try {
    const upstream = await forkBenchServer('upstream', sibling('embeddings-upstream'), [String(UPSTREAM_MS)]);
    const inputs = Array.from({ length: INPUTS }, (_, i) => `${String(i).padStart(4, '0')} ${'x'.repeat(INPUT_BYTES - 5)}`);
    const whole = JSON.stringify({ model: MODEL, input: inputs, encoding_format: 'base64' });
    const parts: string[] = [];
    for (let start = 0; start < INPUTS; start += PART) parts.push(JSON.stringify({ model: MODEL, input: inputs.slice(start, start + PART), encoding_format: 'base64' }));
    const targets: Target[] = [
      {
        name: 'direct (4 calls)',
        process: null,
        times: [],
        peaks: [],
        answerBytes: 0,
        run: async () => {
          const answers = await Promise.all(parts.map((body) => post(upstream.port, body, null)));
          for (const a of answers) if (a.status !== 200) throw new Error(`the upstream answered ${a.status}: ${a.head}`);
          return answers.reduce((sum, a) => sum + a.bytes, 0);
        },
      },
    ];
    for (const transport of ['fetch', 'node'] as const) {
      const gateway = await startGatewayFor(dir, transport, upstream.port);
      targets.push({
        name: `gateway (${transport})`,
        process: gateway.process,
        times: [],
        peaks: [],
        answerBytes: 0,
        run: async () => {
          const answer = await post(gateway.process.port, whole, gateway.key);
          if (answer.status !== 200) throw new Error(`the gateway (${transport}) answered ${answer.status}: ${answer.head}`);
          return answer.bytes;
        },
      });
    }
    for (const target of targets) for (let i = 0; i < WARMUP; i++) await target.run();
    for (let round = 0; round < ROUNDS; round++) {
      // Rotating order: no target always goes first after the others.
      for (let i = 0; i < targets.length; i++) await measure(targets[(round + i) % targets.length] as Target);
    }
    report(targets, whole.length);
  } finally {
    agent.destroy();
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(targets: readonly Target[], requestBytes: number): void {
  const direct = targets[0] as Target;
  const base = quantile(direct.times, 0.5);
  console.log(`${INPUTS} inputs of ${INPUT_BYTES} B (request ${(requestBytes / 1e6).toFixed(1)} MB), ${WIDTH}-wide base64 vectors, ${INPUTS / PART} calls of ${PART}, the fake model ${UPSTREAM_MS} ms a call; ${ROUNDS} rounds, node ${process.version}`);
  console.log('| target | median ms | p90 ms | gateway / direct | extra ms | answer MB | peak memory per request MB | peak / answer |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const t of targets) {
    const median = quantile(t.times, 0.5);
    const ratio = t === direct ? '1.00' : (median / base).toFixed(3);
    const peak = t.peaks.length === 0 ? '-' : (quantile(t.peaks, 0.5) / 1e6).toFixed(1);
    const perAnswer = t.peaks.length === 0 ? '-' : (quantile(t.peaks, 0.5) / t.answerBytes).toFixed(2);
    const extra = t === direct ? '-' : (median - base).toFixed(1);
    console.log(`| ${t.name} | ${median.toFixed(1)} | ${quantile(t.times, 0.9).toFixed(1)} | ${ratio} | ${extra} | ${(t.answerBytes / 1e6).toFixed(1)} | ${peak} | ${perAnswer} |`);
  }
}

await main();
