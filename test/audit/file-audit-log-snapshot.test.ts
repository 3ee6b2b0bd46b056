// verify and list without the appenders' lock (a reader that may not write
// the data directory, or one that is not made yet) while another writer
// appends and rotates between its reads: never a false alarm. The lock is
// refused and the other writer's append is slipped in between two reads by
// wrapping node:fs/promises, exactly where the race falls.
import assert from 'node:assert/strict';
import fsPromises, { type FileHandle } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';
import { keyCreate } from './audit-fixtures.ts';

const root = memoryTempDir('audit-snapshot');
const realWriteFile = fsPromises.writeFile;
const realOpen = fsPromises.open;

/** ~9.3 KiB records: a 64 KiB file holds 6, so the 7th append rotates. */
const big = (n: number) => keyCreate(n, { detail: { note: 'n'.repeat(9000) } });

let lockRefused = false;
/** Runs once, right after the reader has taken audit.jsonl's size. */
let afterSize: (() => Promise<void>) | null = null;
/** Runs once, right before the reader opens audit.jsonl (after its first read of the head). */
let beforeOpen: (() => Promise<void>) | null = null;

/** The other writer takes the lock the reader was refused. */
async function asOtherWriter(work: () => Promise<void>): Promise<void> {
  lockRefused = false;
  try {
    await work();
  } finally {
    lockRefused = true;
  }
}

function wrapFs(current: string): void {
  const writable = fsPromises as unknown as Record<string, unknown>;
  writable['writeFile'] = (file: unknown, ...rest: unknown[]) => {
    if (lockRefused && String(file).endsWith('.claim')) {
      return Promise.reject(Object.assign(new Error(`EACCES: permission denied, open '${String(file)}'`), { code: 'EACCES' }));
    }
    return Reflect.apply(realWriteFile, fsPromises, [file, ...rest]) as Promise<void>;
  };
  writable['open'] = async (file: unknown, ...rest: unknown[]) => {
    if (String(file) === current && beforeOpen !== null) {
      const before = beforeOpen;
      beforeOpen = null;
      await asOtherWriter(before);
    }
    const handle = (await Reflect.apply(realOpen, fsPromises, [file, ...rest])) as FileHandle;
    if (String(file) !== current || afterSize === null) return handle;
    const realStat = handle.stat.bind(handle);
    const between = afterSize;
    afterSize = null;
    (handle as { stat: unknown }).stat = async (...args: unknown[]) => {
      const stats = await Reflect.apply(realStat, handle, args);
      await asOtherWriter(between);
      return stats;
    };
    return handle;
  };
  syncBuiltinESMExports();
}

afterEach(() => {
  const writable = fsPromises as unknown as Record<string, unknown>;
  writable['writeFile'] = realWriteFile;
  writable['open'] = realOpen;
  syncBuiltinESMExports();
  lockRefused = false;
  afterSize = null;
  beforeOpen = null;
});

function logs() {
  const dataDir = freshPath(root, 'd');
  const options = { dataDir, rotateBytes: 64 * 1024 };
  return { reader: createFileAuditLog(options), writer: createFileAuditLog(options), current: path.join(dataDir, 'audit.jsonl') };
}

test('an append between reading audit.jsonl and the head: the snapshot ends before it, intact', async () => {
  const { reader, writer, current } = logs();
  for (let n = 1; n <= 2; n++) await writer.append(big(n));
  wrapFs(current);
  lockRefused = true;
  afterSize = async () => void (await writer.append(big(3)));
  const result = await reader.verify();
  assert.equal(result.ok, true, result.message);
  assert.equal(result.ok && `${result.count} ${result.firstSeq} ${result.lastSeq}`, '2 1 2');
  assert.equal(afterSize, null, 'the append was slipped in');
  const after = await reader.verify();
  assert.equal(after.ok && after.count, 3);
});

test('a rotation between opening audit.jsonl and listing the rotated files: the renamed file is read once, intact', async () => {
  const { reader, writer, current } = logs();
  for (let n = 1; n <= 6; n++) await writer.append(big(n));
  wrapFs(current);
  lockRefused = true;
  // The 7th record does not fit: audit.jsonl (records 1 to 6) becomes audit.000000000001.jsonl.
  afterSize = async () => void (await writer.append(big(7)));
  const result = await reader.verify();
  assert.equal(result.ok, true, result.message);
  assert.equal(result.ok && `${result.count} ${result.firstSeq} ${result.lastSeq}`, '6 1 6');
  lockRefused = true;
  afterSize = async () => void (await writer.append(big(8)));
  const page = await reader.list({});
  assert.deepEqual(page.records.map((r) => r.seq), [7, 6, 5, 4, 3, 2, 1]);
});

test('the first appends between reading the head (none yet) and opening audit.jsonl: intact, not a missing head', async () => {
  const { reader, writer, current } = logs();
  wrapFs(current);
  lockRefused = true;
  beforeOpen = async () => {
    for (let n = 1; n <= 2; n++) await writer.append(big(n));
  };
  const result = await reader.verify();
  assert.equal(beforeOpen, null, 'the appends were slipped in');
  assert.equal(result.ok, true, result.message);
  assert.equal(result.ok && `${result.count} ${result.firstSeq} ${result.lastSeq}`, '2 1 2');
});

test('records with no head at either read: the missing head is reported', async () => {
  const { reader, writer, current } = logs();
  for (let n = 1; n <= 2; n++) await writer.append(big(n));
  await fsPromises.rm(path.join(path.dirname(current), 'audit.head'));
  const result = await reader.verify();
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.reason, 'missing_head');
});
