// The audit chain with appenders in separate processes (./append-worker.ts):
// the lock makes one chain of their records, and verify, run while they
// append and rotate, never calls an intact chain broken. The workers start
// appending at the same moment, so every record is appended under contention.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { parseRecordLine } from '../../src/audit/audit-record.ts';
import { createFileAuditLog, MIN_ROTATE_BYTES } from '../../src/audit/file-audit-log.ts';
import { within } from '../support/eventually.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';

// Every append syncs the file and the head to disk: on a disk shared with a
// loaded machine that was most of this file's 45 s. The appends go to a
// memory file system where there is one; the lock and the chain work the same.
const root = memoryTempDir('audit-procs');

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'append-worker.js');
/** A record with this much padding is about 9.3 KiB: a file of MIN_ROTATE_BYTES holds 6. */
const PAD_BYTES = 9000;
/** The verify runs that must overlap the appends, and the rotations among them. */
const VERIFIES = 10;
const ROTATIONS = 3;

function fresh() {
  const dataDir = freshPath(root, 'd');
  const log = createFileAuditLog({ dataDir });
  const lines = (): string[] => readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8').split('\n').slice(0, -1);
  return { dataDir, log, lines };
}

interface Appender {
  name: string;
  /** Records to append; without it, until stop(). */
  count?: number;
  rotateBytes?: number;
  padBytes?: number;
}

interface Appenders {
  /** Starts every appender at once. */
  go(): void;
  /** Tells the appenders without a count to finish the record they are on and exit. */
  stop(): void;
  /** Whether any has exited. */
  anyExited(): boolean;
  /** How many records each appended, by name, once all have exited 0 (a failed one rejects with its stderr). */
  exited: Promise<Record<string, number>>;
}

/** One worker per appender, each loaded and waiting for go(). */
async function startAppenders(dataDir: string, appenders: readonly Appender[]): Promise<Appenders> {
  const started = appenders.map(({ name, count, rotateBytes, padBytes }) => {
    const args = [WORKER, '--data-dir', dataDir, '--name', name];
    if (count !== undefined) args.push('--count', String(count));
    if (rotateBytes !== undefined) args.push('--rotate-bytes', String(rotateBytes));
    if (padBytes !== undefined) args.push('--pad-bytes', String(padBytes));
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`${name} exited ${code} before it was ready: ${stderr}`)));
    });
    const exited = new Promise<[string, number]>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => {
        const appended = /^ready\nappended (\d+)\n$/.exec(stdout)?.[1];
        if (code === 0 && appended !== undefined) resolve([name, Number(appended)]);
        else reject(new Error(`${name} exited ${code}: ${stdout}${stderr}`));
      });
    });
    return { child, ready, exited };
  });
  await within(Promise.all(started.map((s) => s.ready)), 'the appenders to load', 30_000);
  return {
    go: () => {
      for (const { child } of started) child.stdin.write('go\n');
    },
    stop: () => {
      for (const { child } of started) child.stdin.end();
    },
    anyExited: () => started.some(({ child }) => child.exitCode !== null || child.signalCode !== null),
    exited: Promise.all(started.map((s) => s.exited)).then((counts) => Object.fromEntries(counts)),
  };
}

describe('two processes appending through the lock', () => {
  test('200 records each make one chain of 400, no gaps', async () => {
    const { log, lines, dataDir } = fresh();
    const appenders = await startAppenders(dataDir, [
      { name: 'proc-a', count: 200 },
      { name: 'proc-b', count: 200 },
    ]);
    appenders.go();
    appenders.stop();
    assert.deepEqual(await within(appenders.exited, 'the appenders to finish', 60_000), { 'proc-a': 200, 'proc-b': 200 });
    const result = await log.verify();
    assert.equal(result.ok, true, result.message);
    assert.equal(result.ok && `${result.count} ${result.firstSeq} ${result.lastSeq}`, '400 1 400');
    const byActor = new Map<string, number>();
    for (const line of lines()) {
      const id = parseRecordLine(line).actor.id;
      byActor.set(id, (byActor.get(id) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(byActor), { 'proc-a': 200, 'proc-b': 200 });
  });
});

describe('verify while other processes append', () => {
  // Review R2: verify read the files while appends (and rotations) went on, so
  // it could see a line half written, or audit.jsonl renamed between listing
  // the rotated files and opening it, and call an intact chain broken.
  test('never a false alarm: every verify during appends and rotations says intact', async () => {
    const { log, dataDir } = fresh();
    // Records of ~9.3 KiB in files of 64 KiB: a rotation every 6 appends. The
    // appenders go on until the verifies below have run, however long the
    // lock keeps them waiting: every verify overlaps the appends.
    const appenders = await startAppenders(dataDir, [
      { name: 'proc-0', rotateBytes: MIN_ROTATE_BYTES, padBytes: PAD_BYTES },
      { name: 'proc-1', rotateBytes: MIN_ROTATE_BYTES, padBytes: PAD_BYTES },
    ]);
    const rotations = (): number => readdirSync(dataDir).filter((n) => /^audit\.\d{12}\.jsonl$/.test(n)).length;
    appenders.go();
    const alarms: string[] = [];
    let verifies = 0;
    await within(
      (async () => {
        while ((verifies < VERIFIES || rotations() < ROTATIONS) && !appenders.anyExited()) {
          const result = await log.verify();
          verifies += 1;
          if (!result.ok) alarms.push(result.message);
        }
      })(),
      `${VERIFIES} verifies and ${ROTATIONS} rotations`,
      60_000,
    );
    appenders.stop();
    const appended = await within(appenders.exited, 'the appenders to finish', 60_000);
    const total = (appended['proc-0'] ?? 0) + (appended['proc-1'] ?? 0);
    const final = await log.verify();
    assert.equal(final.ok && `${final.count} ${final.lastSeq}`, `${total} ${total}`, final.message);
    // Each full file holds 6 records.
    assert.equal(rotations(), Math.ceil(total / 6) - 1);
    assert.ok(rotations() >= ROTATIONS);
    assert.ok(verifies >= VERIFIES, `only ${verifies} verify runs overlapped the appends`);
    assert.deepEqual(alarms, []);
  });
});
