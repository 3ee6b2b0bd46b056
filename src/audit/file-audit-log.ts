// The audit chain in the data directory (docs/audit.md):
//   audit.jsonl                 the current file, one canonical record per line, mode 0600
//   audit.<firstSeq:12>.jsonl   rotated files, each the full file renamed when it reached rotateBytes
//   audit.head                  the head (audit-head.ts), replaced atomically before and after each append
//   audit.jsonl.lock            the file lock every appender takes (the gateway and each CLI run)
//
// An append, under the lock: find the last record (repairing a torn last line,
// see repairTail) and judge it against the head (judgeTail), rotate when the
// record would take the file past rotateBytes, announce the record in the head
// (`next`), write the line with O_APPEND, fsync, then move the head onto it. A
// crash between the fsync and the head leaves the announced record past the
// head, which verify accepts and the next append adopts; any other record past
// the head is a break, and appends refuse to build on it.
import { mkdir, open, readdir, rename, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_LOCK_OPTIONS, withFileLock } from '../files/file-lock.ts';
import { PRIVATE_FILE_MODE, syncDirectory, writeFileAtomic } from '../files/atomic-file.ts';
import { createChainVerifier, type AuditVerification, type ChainHead } from './audit-chain.ts';
import { EMPTY_HEAD, headFileWrite, headJson, judgeTail, MAX_OPEN, parseHeadJson, type HeadState } from './audit-head.ts';
import { forEachLine, forEachLineBackward, lastNewlineBefore, OverlongLineError, readRange } from './audit-file-lines.ts';
import { AuditLogError, auditLogOf, createPageCollector, type AuditLog, type AuditPage, type AuditFilter, type VerifyOptions } from './audit-log.ts';
import {
  chainRecord,
  GENESIS_HASH,
  MAX_RECORD_LINE_BYTES,
  parseRecordLine,
  recordHash,
  recordLine,
  AuditRecordParseError,
  type AuditRecord,
  type AuditRecordBody,
} from './audit-record.ts';

export const AUDIT_FILE = 'audit.jsonl';
export const AUDIT_HEAD_FILE = 'audit.head';
export const DEFAULT_ROTATE_BYTES = 64 * 1024 * 1024;
export const MIN_ROTATE_BYTES = 64 * 1024;
const ROTATED = /^audit\.(\d{12})\.jsonl$/;
const MAX_HEAD_FILE_BYTES = 64 * 1024;

export interface FileAuditLogOptions {
  dataDir: string;
  /** Rotate audit.jsonl before it would grow past this (audit.rotateBytes). */
  rotateBytes?: number;
  /** Repairs and a head ahead of the records: logged by the owner (warn). */
  onProblem?: (message: string) => void;
}

/** Errors of a lock that cannot be taken because the reader may not write there: it reads without. */
const READ_ONLY_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT']);
function cannotTakeLock(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && READ_ONLY_CODES.has(code)) return true;
  }
  return false;
}

/** The file opened, or null when it is not there (a rotated file removed by retention, no audit.jsonl yet). */
async function openIfThere(file: string, flags: 'r' | 'r+'): Promise<FileHandle | null> {
  try {
    return await open(file, flags);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw cause;
  }
}

export function rotatedName(firstSeq: number): string {
  return `audit.${String(firstSeq).padStart(12, '0')}.jsonl`;
}

export function createFileAuditLog(options: FileAuditLogOptions): AuditLog {
  const dir = options.dataDir;
  const current = path.join(dir, AUDIT_FILE);
  const headPath = path.join(dir, AUDIT_HEAD_FILE);
  const lockPath = `${current}.lock`;
  const rotateBytes = Math.max(options.rotateBytes ?? DEFAULT_ROTATE_BYTES, MIN_ROTATE_BYTES);
  const problem = options.onProblem ?? (() => {});

  /** The tail judged against the head; throws AuditLogError when appends must not build on it. */
  async function tailLocked(): Promise<{ base: ChainHead; open: readonly number[] }> {
    const judged = judgeTail(await readHead(), await lastRecordOfFiles(true), AUDIT_HEAD_FILE);
    if (!judged.ok) throw new AuditLogError(`the audit log in ${dir} is not extended: ${judged.problem}`);
    if (judged.problem !== null) problem(`audit log: ${judged.problem}`);
    return judged;
  }

  async function appendLocked(body: AuditRecordBody, opens: boolean): Promise<AuditRecord> {
    const { base, open: stillOpen } = await tailLocked();
    if (opens && stillOpen.length >= MAX_OPEN) {
      throw new AuditLogError(`${AUDIT_HEAD_FILE} lists ${stillOpen.length} write-ahead records whose changes were never settled, the most it holds; restart portcullis serve, which resolves them against the stores`);
    }
    const record = chainRecord(body, base);
    const line = recordLine(record) + '\n';
    const size = (await stat(current).catch(() => null))?.size ?? 0;
    if (size > 0 && size + Buffer.byteLength(line, 'utf8') > rotateBytes) await rotate();
    const after = opens ? [...stillOpen, record.seq] : stillOpen;
    await writeHead({ ...base, next: record.hash, open: after });
    const handle = await open(current, 'a', PRIVATE_FILE_MODE);
    try {
      await handle.chmod(PRIVATE_FILE_MODE);
      await handle.write(line, null, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await writeHead({ seq: record.seq, hash: record.hash, next: null, open: after });
    return record;
  }

  /** The write-ahead record `seq` no longer open: its change is made, or its outcome recorded. */
  async function settleLocked(seq: number): Promise<void> {
    const head = await readHead();
    if (head === null || !head.open.includes(seq)) return;
    await writeHead({ ...head, open: head.open.filter((s) => s !== seq) });
  }

  function writeHead(head: HeadState): Promise<void> {
    return writeFileAtomic(headPath, headJson(head) + '\n');
  }

  /** The full audit.jsonl becomes audit.<its first seq>.jsonl; the next append starts a new one. */
  async function rotate(): Promise<void> {
    const handle = await open(current, 'r');
    let firstSeq: number | null = null;
    try {
      await forEachLine(handle, (text) => {
        firstSeq = parseRecordLine(text).seq;
        return false;
      });
    } finally {
      await handle.close();
    }
    if (firstSeq === null) throw new AuditLogError(`cannot rotate ${current}: it holds no complete record`);
    const target = path.join(dir, rotatedName(firstSeq));
    if ((await stat(target).catch(() => null)) !== null) throw new AuditLogError(`cannot rotate ${current}: ${target} exists already`);
    await rename(current, target);
    await syncDirectory(dir);
  }

  /** The last record in the files: audit.jsonl's, else the newest rotated file's; {0, zeros} for none. */
  async function lastRecordOfFiles(repair: boolean): Promise<ChainHead> {
    const inCurrent = await lastRecordIn(current, repair);
    if (inCurrent !== null) return inCurrent;
    const rotated = await rotatedFiles();
    for (let i = rotated.length - 1; i >= 0; i--) {
      const found = await lastRecordIn(path.join(dir, (rotated[i] as { name: string }).name), false);
      if (found !== null) return found;
    }
    return { seq: 0, hash: GENESIS_HASH };
  }

  async function lastRecordIn(file: string, repair: boolean): Promise<ChainHead | null> {
    const handle = await openIfThere(file, repair ? 'r+' : 'r');
    if (handle === null) return null;
    try {
      let size = (await handle.stat()).size;
      if (size === 0) return null;
      const lastNewline = await lastNewlineBefore(handle, size);
      if (lastNewline === null) throw new AuditLogError(`${file} ends with more than ${MAX_RECORD_LINE_BYTES} bytes without a newline: not written by portcullis; repair it by hand (docs/audit.md)`);
      const previous = await completeLineBefore(handle, file, lastNewline);
      if (lastNewline !== size - 1) {
        if (!repair) return previous;
        size = await repairTail(handle, file, lastNewline + 1, size, previous);
        if (size > lastNewline + 1) return lastRecordIn(file, false);
      }
      return previous;
    } finally {
      await handle.close();
    }
  }

  /** The record on the line that ends at `newlineAt` (null when the file has no complete line). */
  async function completeLineBefore(handle: FileHandle, file: string, newlineAt: number): Promise<ChainHead | null> {
    if (newlineAt === -1) return null;
    const start = await lastNewlineBefore(handle, newlineAt);
    if (start === null) throw new AuditLogError(`${file}: its last line is longer than ${MAX_RECORD_LINE_BYTES} bytes; run portcullis audit verify`);
    const text = (await readRange(handle, start + 1, newlineAt)).toString('utf8');
    try {
      const record = parseRecordLine(text);
      return { seq: record.seq, hash: record.hash };
    } catch (error) {
      if (error instanceof AuditRecordParseError) throw new AuditLogError(`${file}: its last record is not valid (${error.message}); run portcullis audit verify`);
      throw error;
    }
  }

  /**
   * The last line has no newline: a write cut short. When it is a whole record
   * that follows the chain (only the newline was lost), the newline is added.
   * Anything else was never acknowledged to its writer (the fsync had not
   * returned): it is moved to audit.torn-<time>.jsonl and cut off. Returns the new size.
   */
  async function repairTail(handle: FileHandle, file: string, from: number, size: number, previous: ChainHead | null): Promise<number> {
    const bytes = size - from <= MAX_RECORD_LINE_BYTES ? await readRange(handle, from, size) : null;
    if (bytes !== null && isNextRecord(bytes.toString('utf8'), previous)) {
      await handle.write('\n', size, 'utf8');
      await handle.sync();
      problem(`audit log: ${file} ended with a whole record without its newline (a crash); the newline was added`);
      return size + 1;
    }
    let saved = 'not kept (longer than a record)';
    if (bytes !== null) {
      const aside = path.join(dir, `audit.torn-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
      await writeFile(aside, bytes, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
      saved = `kept in ${aside}`;
    }
    await handle.truncate(from);
    await handle.sync();
    problem(`audit log: ${file} ended with ${size - from} bytes of an incomplete record (a write cut short by a crash, never acknowledged); they were removed (${saved})`);
    return from;
  }

  function isNextRecord(text: string, previous: ChainHead | null): boolean {
    try {
      const record = parseRecordLine(text);
      const last = previous ?? { seq: 0, hash: GENESIS_HASH };
      return record.seq === last.seq + 1 && record.prev === last.hash && recordHash(record) === record.hash;
    } catch {
      return false;
    }
  }

  async function readHead(): Promise<HeadState | null> {
    let text: string;
    try {
      const handle = await open(headPath, 'r');
      try {
        text = (await readRange(handle, 0, Math.min((await handle.stat()).size, MAX_HEAD_FILE_BYTES))).toString('utf8');
      } finally {
        await handle.close();
      }
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw cause;
    }
    const head = parseHeadJson(text);
    if (head === null) throw new AuditLogError(`${headPath} is not {"seq":N,"hash":"<64 hex>","v":2} (with "next" and "open" when set): it was edited; run portcullis audit verify`);
    return head;
  }

  async function rotatedFiles(): Promise<Array<{ name: string; firstSeq: number }>> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw cause;
    }
    return names
      .map((name) => ({ name, match: ROTATED.exec(name) }))
      .filter((entry) => entry.match !== null)
      .map((entry) => ({ name: entry.name, firstSeq: Number((entry.match as RegExpExecArray)[1]) }))
      .sort((a, b) => a.firstSeq - b.firstSeq);
  }

  /**
   * What the files hold at one instant: taken under the appenders' lock, so no
   * line is half written and no rotation falls between listing the rotated files
   * and opening audit.jsonl (whose handle then follows it through a later
   * rename). Readers read the current file only up to `size`. A reader that may
   * not write the data directory (an auditor's read-only access, or a data
   * directory not made yet) takes it without the lock; the reads go in the
   * reverse of an append's writes, so that appends and rotations between them
   * only add records the snapshot leaves out, never take away one its head
   * counts: the head first (replaced after its record is on disk), then
   * audit.jsonl, then the rotated files, less the one audit.jsonl became if a
   * rotation came between (it is read once, through the handle). The caller
   * closes `current.handle`.
   */
  async function snapshot(): Promise<{ head: HeadState | null | AuditLogError; headAfter: HeadState | null; rotated: Array<{ name: string; firstSeq: number }>; current: { handle: FileHandle; size: number } | null }> {
    const headNow = () =>
      readHead().catch((error: unknown) => {
        if (error instanceof AuditLogError) return error;
        throw error;
      });
    const take = async () => {
      const head = await headNow();
      const handle = await openIfThere(current, 'r');
      if (handle === null) return { head, headAfter: null, rotated: await rotatedFiles(), current: null };
      try {
        const { size, ino } = await handle.stat();
        const rotated = await rotatedFiles();
        const newest = rotated.at(-1);
        if (newest !== undefined && (await stat(path.join(dir, newest.name)).catch(() => null))?.ino === ino) rotated.pop();
        // Without the lock, appends may land between the first head read and the size: the head
        // read after it covers them (a record within the size was announced before it was written).
        const after = await headNow();
        return { head, headAfter: after instanceof AuditLogError ? null : after, rotated, current: { handle, size } };
      } catch (error) {
        await handle.close();
        throw error;
      }
    };
    try {
      return await withFileLock(lockPath, DEFAULT_LOCK_OPTIONS, take);
    } catch (error) {
      if (cannotTakeLock(error)) return take();
      throw error;
    }
  }

  async function verify(verifyOptions: VerifyOptions = {}): Promise<AuditVerification> {
    const { head, headAfter, rotated, current } = await snapshot();
    try {
      if (head instanceof AuditLogError) return { ok: false, reason: 'malformed', file: AUDIT_HEAD_FILE, line: 1, seq: null, message: head.message };
      // No head and records: a break (an appender writes the head before its first record),
      // unless the head read after the records' size found one: the first appends came between.
      const missing = head === null && headAfter === null;
      const verifier = createChainVerifier({ storedHead: head ?? EMPTY_HEAD, ...(headAfter !== null ? { headAfterRecords: headAfter } : {}), ...(missing ? { missingHead: { name: AUDIT_HEAD_FILE, write: headFileWrite(AUDIT_HEAD_FILE) } } : {}), ...verifyOptions });
      const files: Array<{ name: string; nameSeq: number | null }> = [...rotated.map((f) => ({ name: f.name, nameSeq: f.firstSeq as number | null })), { name: AUDIT_FILE, nameSeq: null }];
      for (const { name, nameSeq } of files) {
        let handle: FileHandle | null;
        let end = Infinity;
        if (nameSeq === null) {
          if (current === null) continue;
          ({ handle, size: end } = current);
        } else {
          handle = await openIfThere(path.join(dir, name), 'r');
          if (handle === null) continue;
        }
        verifier.beginFile(name, nameSeq);
        try {
          await forEachLine(handle, (text, line, terminated) => verifier.line(text, line, terminated) === null, end);
        } catch (error) {
          if (!(error instanceof OverlongLineError)) throw error;
          return verifier.fail({ ok: false, reason: 'malformed', file: name, line: error.line, seq: null, message: `${name} line ${error.line ?? '?'}: ${error.message}` });
        } finally {
          if (nameSeq !== null) await handle.close();
        }
      }
      return verifier.result();
    } finally {
      await current?.handle.close();
    }
  }

  async function list(filter: AuditFilter): Promise<AuditPage> {
    const collector = createPageCollector(filter);
    const { rotated, current } = await snapshot();
    try {
      const files = [{ name: AUDIT_FILE, firstSeq: null as number | null }, ...rotated.reverse()];
      for (const { name, firstSeq } of files) {
        if (filter.before !== undefined && firstSeq !== null && firstSeq >= filter.before) continue;
        let handle: FileHandle | null;
        let size: number;
        if (firstSeq === null) {
          if (current === null) continue;
          ({ handle, size } = current);
        } else {
          handle = await openIfThere(path.join(dir, name), 'r');
          if (handle === null) continue;
          size = (await handle.stat()).size;
        }
        let going = true;
        try {
          await forEachLineBackward(handle, size, (text) => {
            let record: AuditRecord;
            try {
              record = parseRecordLine(text);
            } catch (error) {
              if (error instanceof AuditRecordParseError) throw new AuditLogError(`${name} holds a line that is not a valid record (${error.message}); run portcullis audit verify`);
              throw error;
            }
            going = collector.offer(record);
            return going;
          });
        } catch (error) {
          if (error instanceof OverlongLineError) throw new AuditLogError(`${name}: ${error.message}; run portcullis audit verify`);
          throw error;
        } finally {
          if (firstSeq !== null) await handle.close();
        }
        if (!going) return collector.page(false);
      }
      return collector.page(true);
    } finally {
      await current?.handle.close();
    }
  }

  return auditLogOf(dir, (what, error) => auditAccessProblem(what, dir, error), {
    async append(body, appendOptions) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return withFileLock(lockPath, DEFAULT_LOCK_OPTIONS, () => appendLocked(body, appendOptions?.open === true));
    },
    settle: (seq) => withFileLock(lockPath, DEFAULT_LOCK_OPTIONS, () => settleLocked(seq)),
    async openSeqs() {
      return (await readHead())?.open ?? [];
    },
    async checkTail() {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return withFileLock(lockPath, DEFAULT_LOCK_OPTIONS, async () => {
        const { base, open: stillOpen } = await tailLocked();
        const head = await readHead();
        // Adopt a record a crash left past the head (and forget one announced but never written) now, not at the next append.
        if (head === null ? base.seq > 0 : head.seq !== base.seq || head.next !== null || head.open.length !== stillOpen.length || head.legacy === true) {
          await writeHead({ ...base, next: null, open: stillOpen });
        }
        return base;
      });
    },
    list,
    head: () => lastRecordOfFiles(false),
    verify,
  });
}

/**
 * Why the log in `dir` could not be read or written. A reader refused by the files' mode
 * (0600, the gateway's user's alone: an operator running `audit verify` as themselves) is
 * told which user to be.
 */
export function auditAccessProblem(what: string, dir: string, error: unknown): string {
  const text = `cannot ${what} the audit log in ${dir}: ${error instanceof Error ? error.message : String(error)}`;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (what === 'append to' || (code !== 'EACCES' && code !== 'EPERM')) return text;
  return `${text} (the audit files are the gateway's user's alone: run this as that user, e.g. sudo -u portcullis portcullis audit ${what === 'verify' ? 'verify' : 'list'})`;
}
