// npm run bench:streams: memory per open stream. For each
// upstream transport (fetch, the default, and "transport": "node"), the real
// gateway (compiled CLI `serve`, its log on a pipe to a sink process) holds
// first 2,000 and then 10,000 concurrent streams to the fake upstream's held
// model (bench/gateway-upstream.ts, its own process); this process is the
// load generator. While they are open the gateway's resident memory (VmRSS)
// and file descriptors are read from /proc; then the upstream finishes them
// and every one must end with [DONE] (bench/gateway-open-streams.ts).
//
// Descriptors: each open stream costs the gateway two (its client's socket and
// its upstream socket), so a gateway under RLIMIT_NOFILE n can hold at most
// about n/2 streams. The largest count is capped to fit the limit this process
// runs under (the children inherit it), and the cap is printed.
//
// The streams are opened 500 at a time (each batch once the last is open), so
// that the count held at once is measured, not the listen backlog of a
// machine flooded with 10,000 connections in one instant.
//
// BENCH_STREAMS="2000,10000" sets the counts.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatOpenStreams, measureOpenStreams, type OpenStreamsResult } from './gateway-open-streams.ts';
import { childExecArgv, forkBenchServer, startGateway, stopAll, stopProcess, type BenchProcess } from './gateway-processes.ts';
import { HOLD_MODEL } from './gateway-upstream-answers.ts';

const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const sibling = (name: string): URL => new URL(`./${name}${EXT}`, import.meta.url);
const CLI_MAIN = new URL(`../src/cli/main${EXT}`, import.meta.url);

const HOLD_ALIAS = 'service-hold';
const BODY = Buffer.from(
  JSON.stringify({
    model: HOLD_ALIAS,
    messages: [{ role: 'user', content: 'What does an inference gateway do between a client and a model server?' }],
    max_tokens: 64,
    stream: true,
  }),
);
/** Streams opened at once; the next batch follows when these are open (see measureOpenStreams). */
const OPEN_BATCH = 500;
/** Descriptors the gateway needs besides its streams' sockets (listeners, files, pipes, epoll, with room). */
const GATEWAY_BASE_FDS = 100;

type Transport = 'fetch' | 'node';

function counts(): number[] {
  const raw = process.env['BENCH_STREAMS'] ?? '2000,10000';
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1 || n > 100_000)) throw new Error(`BENCH_STREAMS=${raw}: a comma-separated list of counts from 1 to 100000`);
  return list;
}

/** The soft RLIMIT_NOFILE this process (and so its children) runs under. */
function openFileLimit(): number {
  const out = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  return out === 'unlimited' ? Number.POSITIVE_INFINITY : Number(out);
}

/** `streams`: the count held; the connection cap is set just above it. Left
 * unset, the cap is derived from RLIMIT_NOFILE with a reserve (limits.maxConnections),
 * and under a 20000 limit it refuses the last 78 of 9950 streams with 503:
 * the cap working, not streams lost. */
function writeConfig(dir: string, upstreamOrigin: string, transport: Transport, streams: number): string {
  const file = path.join(dir, 'portcullis.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    // Every stream comes from 127.0.0.1: this one client may hold them all.
    limits: { maxConnections: streams + 16, maxConnectionsPerAddress: streams + 16 },
    admin: { enabled: false },
    dataDir: path.join(dir, 'data'),
    providers: { bench: { type: 'openai', baseUrl: `${upstreamOrigin}/v1`, ...(transport === 'node' ? { transport } : {}) } },
    aliases: { [HOLD_ALIAS]: { provider: 'bench', model: HOLD_MODEL } },
    auto: { default: HOLD_ALIAS },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

function createKey(configPath: string): string {
  const out = execFileSync(process.execPath, [...childExecArgv(), fileURLToPath(CLI_MAIN), 'keys', 'create', '--name', 'bench', '--json', '--config', configPath], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000,
  });
  const key = (JSON.parse(out) as { key?: unknown }).key;
  if (typeof key !== 'string') throw new Error(`keys create printed no key: ${out}`);
  return key;
}

async function startGatewayFor(own: string, transport: Transport, upstreamOrigin: string, streams: number): Promise<{ gateway: BenchProcess; key: string }> {
  mkdirSync(own);
  const sink = await forkBenchServer(`${transport} log-sink`, sibling('gateway-log-sink'), [], 'pipe');
  const configPath = writeConfig(own, upstreamOrigin, transport, streams);
  const key = createKey(configPath);
  if (sink.child.stdin === null) throw new Error('the log sink has no stdin pipe');
  const gateway = await startGateway({ mainModule: CLI_MAIN, configPath, stdout: sink.child.stdin, nodeFlags: [], name: `gateway-${transport}` });
  return { gateway, key };
}

async function main(): Promise<void> {
  const limit = openFileLimit();
  const cap = Math.floor((limit - GATEWAY_BASE_FDS) / 2);
  const wanted = counts();
  const rows: { target: string; result: OpenStreamsResult }[] = [];
  const problems: string[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-streams-'));
  try {
    for (const transport of ['fetch', 'node'] as const) {
      for (const want of wanted) {
        // A fresh gateway (and upstream) per count: RSS a process once grew to
        // is seldom returned, so a second round would start from the first's peak.
        const count = Math.min(want, cap);
        if (count < want) process.stderr.write(`  ${want} streams need about ${want * 2 + GATEWAY_BASE_FDS} descriptors in the gateway; RLIMIT_NOFILE is ${limit}: holding ${count}\n`);
        const upstream = await forkBenchServer('upstream', sibling('gateway-upstream'), []);
        const { gateway, key } = await startGatewayFor(path.join(dir, `${transport}-${count}`), transport, `http://127.0.0.1:${upstream.port}`, count);
        try {
          process.stderr.write(`  holding ${count} open streams through the gateway (transport ${transport})\n`);
          const target = { port: gateway.port, headers: { authorization: `Bearer ${key}` } };
          const result = await measureOpenStreams(gateway.pid, target, BODY, count, () => upstream.child.send({ type: 'release' }), OPEN_BATCH);
          rows.push({ target: `gateway (${transport})`, result });
          if (result.completed !== result.count) problems.push(`transport ${transport}: ${result.count - result.completed} of ${result.count} held streams did not complete`);
        } finally {
          await stopProcess(gateway.child);
          await stopAll();
        }
      }
    }
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`\nOpen streams, held by the fake upstream after their first event (RLIMIT_NOFILE ${limit}; ${os.cpus().length} CPUs; Node ${process.version})\n\n`);
  process.stdout.write(`${formatOpenStreams(rows)}\n`);
  if (problems.length > 0) {
    process.stderr.write(`\n${problems.join('\n')}\n`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
