// What one audit record costs to append to the file chain
// (src/audit/file-audit-log.ts: the lock, the line with fsync, audit.head
// replaced atomically), beside the floor any durable append pays: the same
// line written with O_APPEND and fsync'd, nothing else. Both run here, one
// after the other in rounds, in one temporary directory on the same disk, so
// the ratio says what the chain adds; the absolute times say what the disk is.
//
//   npm run build && node dist/bench/audit-append.js
//
// Env: BENCH_APPENDS (default 200 per round), BENCH_ROUNDS (default 3), BENCH_DIR (default the OS temp dir).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFileAuditLog } from '../src/audit/file-audit-log.ts';
import type { AuditRecordBody } from '../src/audit/audit-record.ts';

const APPENDS = Number(process.env['BENCH_APPENDS'] ?? 200);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

function event(n: number): AuditRecordBody {
  const id = `key_${String(n).padStart(16, '0')}`;
  return {
    time: new Date().toISOString(),
    actor: { kind: 'password', id: 'admin' },
    source: '127.0.0.1',
    action: 'key.update',
    target: id,
    before: { id, name: `app-${n}`, prefix: 'pcl_abcd1234', status: 'active', expiresAt: null, allowedAliases: null, limits: { requestsPerMinute: 60 } },
    after: { id, name: `app-${n}`, prefix: 'pcl_abcd1234', status: 'active', expiresAt: null, allowedAliases: null, limits: { requestsPerMinute: 120 } },
  };
}

function quantiles(times: number[]): { p50: number; p90: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

async function timeEach(count: number, append: (n: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < count; n++) {
    const started = process.hrtime.bigint();
    await append(n);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times;
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(process.env['BENCH_DIR'] ?? os.tmpdir(), 'portcullis-bench-audit-'));
  const chainTimes: number[] = [];
  const floorTimes: number[] = [];
  try {
    mkdirSync(path.join(root, 'chain'), { mode: 0o700 });
    const log = createFileAuditLog({ dataDir: path.join(root, 'chain') });
    const floor = await open(path.join(root, 'floor.jsonl'), 'a', 0o600);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        chainTimes.push(...(await timeEach(APPENDS, (n) => log.append(event(n)))));
        floorTimes.push(
          ...(await timeEach(APPENDS, async (n) => {
            await floor.write(`${JSON.stringify(event(n))}\n`);
            await floor.sync();
          })),
        );
      }
      const verified = await log.verify();
      if (!verified.ok) throw new Error(`the chain the bench wrote does not verify: ${verified.message}`);
    } finally {
      await floor.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const chain = quantiles(chainTimes);
  const floor = quantiles(floorTimes);
  const ms = (v: number): string => v.toFixed(2).padStart(8);
  const ratio = (a: number, b: number): string => (a / b).toFixed(2).padStart(6);
  console.log(`audit append, ${ROUNDS} rounds x ${APPENDS} appends each, ${process.version}`);
  console.log('                         p50 ms   p90 ms   p99 ms');
  console.log(`chain (audit.jsonl)   ${ms(chain.p50)} ${ms(chain.p90)} ${ms(chain.p99)}`);
  console.log(`floor (append+fsync)  ${ms(floor.p50)} ${ms(floor.p90)} ${ms(floor.p99)}`);
  console.log(`chain / floor         ${ratio(chain.p50, floor.p50)}   ${ratio(chain.p90, floor.p90)}   ${ratio(chain.p99, floor.p99)}`);
}

await main();
