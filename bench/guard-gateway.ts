// The egress guard's cost in the running gateway: the CPU the gateway process
// spends per chat request (the kernel's account of it: HTTP, auth, parse,
// validation, routing, the guard, the upstream exchange, the access line),
// with the guard off, with the request guard on (every detector, mask), and
// with the answers scanned and restored too, at 1 kB, 32 kB and 1 MB of prompt
// (code, logs, prose and JSON, a planted AWS key id about every 4 kB). The
// three gateways are the same build, each in its own process against the same
// fast fake upstream; rounds are interleaved so a noisy neighbour hurts all
// three alike. Requests run one at a time: CPU per request, not throughput.
//
//   npm run bench:guard-gateway
//   node dist/bench/guard-gateway.js      (after npm run build)
//
// Env: BENCH_SCALE (default 1) multiplies every request count;
//      BENCH_ROUNDS (default 4) interleaved rounds per size.
import { Buffer } from 'node:buffer';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAgent, fetchOnce, runLoad, type LoadTarget } from './gateway-load.ts';
import { createKey, envNumber, forkBenchServer, startGateway, stopAll, type BenchProcess } from './gateway-processes.ts';
import { guardPrompt } from './guard-prompts.ts';

const ALIAS = 'service-bench';
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const sibling = (name: string): URL => new URL(`./${name}${EXT}`, import.meta.url);
const CLI_MAIN = new URL(`../src/cli/main${EXT}`, import.meta.url);

const SCALE = envNumber('BENCH_SCALE', 1, 0.01, 100);
const ROUNDS = Math.round(envNumber('BENCH_ROUNDS', 4, 1, 20));

/** The gateways compared: the guard's settings in each one's config. */
const VARIANTS = [
  { name: 'off', guard: undefined },
  { name: 'request', guard: { detectors: { secrets: 'mask', personal: 'mask' } } },
  { name: 'request+answers', guard: { detectors: { secrets: 'mask', personal: 'mask' }, answers: { scan: true, restore: true } } },
] as const;
type VariantName = (typeof VARIANTS)[number]['name'];

/** Prompt size and requests per variant (all rounds together) at BENCH_SCALE=1. */
const SIZES = [
  { label: '1 kB', bytes: 1024, requests: 4000 },
  { label: '32 kB', bytes: 32 * 1024, requests: 800 },
  { label: '1 MB', bytes: 1024 * 1024, requests: 40 },
] as const;

function body(bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ model: ALIAS, messages: [{ role: 'user', content: guardPrompt(bytes) }], max_tokens: 64 }));
}

interface Gateway {
  name: VariantName;
  process: BenchProcess;
  load: LoadTarget;
}

async function startVariant(variant: (typeof VARIANTS)[number], dir: string, upstreamOrigin: string): Promise<Gateway> {
  const own = path.join(dir, variant.name);
  mkdirSync(own);
  const configPath = path.join(own, 'portcullis.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    dataDir: path.join(own, 'data'),
    providers: { bench: { type: 'openai', baseUrl: `${upstreamOrigin}/v1` } },
    aliases: { [ALIAS]: { provider: 'bench', model: 'bench-model' } },
    auto: { default: ALIAS },
    ...(variant.guard === undefined ? {} : { guard: variant.guard }),
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const key = createKey(CLI_MAIN, configPath);
  const sink = await forkBenchServer(`${variant.name} log-sink`, sibling('gateway-log-sink'), [], 'pipe');
  const stdin = sink.child.stdin;
  if (stdin === null) throw new Error('the log sink has no stdin pipe');
  const server = await startGateway({ mainModule: CLI_MAIN, configPath, stdout: stdin, nodeFlags: [], name: `guard-${variant.name}` });
  return { name: variant.name, process: server, load: { port: server.port, headers: { authorization: `Bearer ${key}` } } };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-guard-'));
  try {
    const upstream = await forkBenchServer('upstream', sibling('gateway-upstream'), []);
    const origin = `http://127.0.0.1:${upstream.port}`;
    const gateways: Gateway[] = [];
    for (const variant of VARIANTS) gateways.push(await startVariant(variant, dir, origin));
    process.stderr.write(`bench: guard in the gateway, ${ROUNDS} rounds, scale ${SCALE}, on ${os.cpus().length} CPUs\n`);
    console.log('| prompt | guard off µs/req | request guard µs/req | added | + answers µs/req | added |');
    console.log('|---|---|---|---|---|---|');
    for (const size of SIZES) {
      const payload = body(size.bytes);
      for (const g of gateways) {
        const check = await fetchOnce(g.load, payload);
        if (check.status !== 200) throw new Error(`${g.name}: status ${check.status}: ${check.text.slice(0, 300)}`);
      }
      const perRound = Math.max(2, Math.ceil((size.requests * SCALE) / ROUNDS));
      const cpu = new Map<VariantName, number>(gateways.map((g) => [g.name, 0]));
      const done = new Map<VariantName, number>(gateways.map((g) => [g.name, 0]));
      for (let round = 0; round < ROUNDS + 1; round++) {
        // Round 0 warms each gateway up and is not counted; later rounds rotate the order.
        for (let i = 0; i < gateways.length; i++) {
          const g = gateways[(i + round) % gateways.length] as Gateway;
          const agent = createAgent(1);
          const before = await g.process.cpuMicros();
          const run = await runLoad({ target: g.load, body: payload, stream: false, concurrency: 1, requests: perRound, agent });
          const after = await g.process.cpuMicros();
          agent.destroy();
          if (run.errors > 0) throw new Error(`${g.name}: ${run.errors} errors (${run.firstError})`);
          if (round === 0) continue;
          cpu.set(g.name, (cpu.get(g.name) as number) + (after - before));
          done.set(g.name, (done.get(g.name) as number) + perRound);
        }
      }
      const per = (name: VariantName): number => (cpu.get(name) as number) / (done.get(name) as number);
      const off = per('off');
      const pct = (v: number): string => `${v >= off ? '+' : ''}${(((v - off) / off) * 100).toFixed(1)} %`;
      console.log(`| ${size.label} | ${off.toFixed(0)} | ${per('request').toFixed(0)} | ${pct(per('request'))} | ${per('request+answers').toFixed(0)} | ${pct(per('request+answers'))} |`);
    }
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
