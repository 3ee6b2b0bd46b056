// The audit chain shared by every instance on one Redis (docs/audit.md, "With Redis"):
//   <prefix>{audit}:log    a list of the canonical record lines, oldest first
//   <prefix>{audit}:head   "<seq> <hash>" of the last record
//   <prefix>{audit}:open   the set of write-ahead records' seqs not settled yet
// The script moves the head with every push, so no record is ever past the
// head: one that is (pushed by hand, or the head key deleted) is a break, and
// the script refuses to build on it.
// Redis's Lua has no SHA-256, so an append is optimistic: read the head, build
// and hash the record in Node, then one script pushes it and moves the head
// only if the head is still the one read; otherwise it answers the head it
// found and the append tries again on top of it (bounded). Appends of one
// instance queue in-process, so only instances contend.
import { setTimeout as sleep } from 'node:timers/promises';
import { createChainVerifier, type AuditVerification, type ChainHead } from './audit-chain.ts';
import { EMPTY_HEAD, judgeTail } from './audit-head.ts';
import { AuditLogError, auditLogOf, createPageCollector, type AuditFilter, type AuditLog, type AuditPage, type VerifyOptions } from './audit-log.ts';
import { chainRecord, GENESIS_HASH, parseRecordLine, recordLine, AuditRecordParseError, type AuditRecord, type AuditRecordBody } from './audit-record.ts';
import type { RedisClient } from '../redis/client.ts';
import type { RedisReply } from '../redis/resp.ts';
import { defineScript } from '../redis/script.ts';

export interface RedisAuditLogOptions {
  keyPrefix: string;
  /** redis://host:port/db, for messages. */
  location: string;
  /** Tries of one append before it fails (default 20). */
  maxTries?: number;
}

/** Records read per LRANGE: at most 100 lines of 64 KiB in one reply. */
const PAGE = 100;
const DEFAULT_TRIES = 20;

export function redisAuditKeys(keyPrefix: string): { log: string; head: string; open: string } {
  const base = `${keyPrefix}{audit}`;
  return { log: `${base}:log`, head: `${base}:head`, open: `${base}:open` };
}

/**
 * KEYS: log, head, open. ARGV: 1 the head value read ('' = none), 2 the new head value, 3 the
 * record line, 4 its seq when it is a write-ahead record ('' otherwise).
 * Returns {1} when appended, {0, head found} when another instance appended first, {2} when
 * the last record is past the head or not the head's (not built on). A canonical line's
 * top-level fields end `"hash":H,"prev":P,"seq":N,`: values that hold such text are escaped.
 */
export const APPEND_SCRIPT = defineScript(`
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then return {0, head} end
local last = redis.call('LINDEX', KEYS[1], -1)
if last then
  local hash, seq = string.match(last, '"hash":"(%x+)","prev":"%x+","seq":(%d+),')
  local headSeq = tonumber(string.match(head, '^(%d+) ') or '0')
  if seq == nil or tonumber(seq) > headSeq or (tonumber(seq) == headSeq and string.sub(head, -64) ~= hash) then return {2} end
end
redis.call('RPUSH', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
if ARGV[4] ~= '' then redis.call('SADD', KEYS[3], ARGV[4]) end
return {1}
`);

export function createRedisAuditLog(client: RedisClient, options: RedisAuditLogOptions): AuditLog {
  const keys = redisAuditKeys(options.keyPrefix);
  const where = `redis list ${keys.log}`;
  const maxTries = options.maxTries ?? DEFAULT_TRIES;

  /** The head value as stored ('' for none) and what it means ({0, zeros} for none). */
  async function readHead(): Promise<{ stored: string; head: ChainHead }> {
    const stored = await client.command(['GET', keys.head]);
    if (typeof stored === 'string') return { stored, head: parseHeadValue(stored) };
    return { stored: '', head: { seq: 0, hash: GENESIS_HASH } };
  }

  /** The head, when the list's last record is the head's; AuditLogError naming what is wrong otherwise. */
  async function checkTail(): Promise<ChainHead> {
    const { stored, head } = await readHead();
    const lastLine = await client.command(['LINDEX', keys.log, -1]);
    const last = typeof lastLine === 'string' ? parseLine(lastLine, 'its last record') : null;
    const judged = judgeTail(stored === '' ? null : { ...head, next: null, open: [] }, last === null ? { seq: 0, hash: GENESIS_HASH } : { seq: last.seq, hash: last.hash }, `the head key ${keys.head}`, setHeadKey);
    if (!judged.ok) throw new AuditLogError(`the audit log at ${options.location} is not extended: ${judged.problem}`);
    return head;
  }

  async function appendOnce(body: AuditRecordBody, appendOptions?: { open?: boolean }): Promise<AuditRecord> {
    let { stored, head } = await readHead();
    for (let attempt = 1; ; attempt++) {
      const record = chainRecord(body, head);
      const value = headValue(record);
      const reply = await client.evalScript(APPEND_SCRIPT, [keys.log, keys.head, keys.open], [stored, value, recordLine(record), appendOptions?.open === true ? String(record.seq) : '']);
      if (Array.isArray(reply) && reply[0] === 1) return record;
      if (Array.isArray(reply) && reply[0] === 2) {
        await checkTail();
        throw new AuditLogError(`the audit log at ${options.location} is not extended: its last record is not the head's; run portcullis audit verify`);
      }
      if (!Array.isArray(reply) || reply[0] !== 0 || typeof reply[1] !== 'string') throw new AuditLogError(`unexpected reply to the audit append script from ${options.location}`);
      if (attempt >= maxTries) {
        throw new AuditLogError(`the audit record could not be appended to ${where} at ${options.location}: other instances appended first ${maxTries} times in a row`);
      }
      // Someone else appended. Build at once on the head the script saw: the other
      // instance is still reading the head for its next record, so this try usually
      // lands first. After a few losses, back off with jitter and read the head again.
      if (attempt < 3 && reply[1] !== '') {
        stored = reply[1];
        head = parseHeadValue(stored);
      } else {
        await sleep(Math.random() * Math.min(2 * attempt, 20));
        ({ stored, head } = await readHead());
      }
    }
  }

  function parseHeadValue(value: string): ChainHead {
    const match = /^(\d{1,15}) ([0-9a-f]{64})$/.exec(value);
    if (match === null) throw new AuditLogError(`the head key ${keys.head} at ${options.location} is not "<seq> <hash>": it was edited; run portcullis audit verify`);
    return { seq: Number(match[1]), hash: match[2] as string };
  }

  function parseLine(line: string, what: string): AuditRecord {
    try {
      return parseRecordLine(line);
    } catch (error) {
      if (error instanceof AuditRecordParseError) throw new AuditLogError(`${where} at ${options.location}: ${what} is not a valid record (${error.message}); run portcullis audit verify`);
      throw error;
    }
  }

  async function range(start: number, stop: number): Promise<string[]> {
    const reply: RedisReply = await client.command(['LRANGE', keys.log, start, stop]);
    if (!Array.isArray(reply) || reply.some((item) => typeof item !== 'string')) throw new AuditLogError(`unexpected reply to LRANGE from ${options.location}`);
    return reply as string[];
  }

  /** How to set the head key back, for a lost head key's message. */
  function setHeadKey(last: ChainHead): string {
    return `set it: SET ${keys.head} "${headValue(last)}"`;
  }

  async function length(): Promise<number> {
    const reply = await client.command(['LLEN', keys.log]);
    if (typeof reply !== 'number') throw new AuditLogError(`unexpected reply to LLEN from ${options.location}`);
    return reply;
  }

  async function verify(verifyOptions: VerifyOptions = {}): Promise<AuditVerification> {
    const storedValue = await client.command(['GET', keys.head]);
    let storedHead: ChainHead | null = null;
    if (typeof storedValue === 'string') {
      try {
        storedHead = parseHeadValue(storedValue);
      } catch (error) {
        return { ok: false, reason: 'malformed', file: keys.head, line: null, seq: null, message: (error as Error).message };
      }
    }
    // No head key and records: a break (the script sets it with the first).
    const verifier = createChainVerifier({ storedHead: storedHead ?? EMPTY_HEAD, ...(storedHead === null ? { missingHead: { name: `the head key ${keys.head}`, write: setHeadKey } } : {}), ...verifyOptions });
    verifier.beginFile(where, null);
    const total = await length();
    for (let start = 0; start < total; start += PAGE) {
      const lines = await range(start, Math.min(start + PAGE, total) - 1);
      for (let i = 0; i < lines.length; i++) {
        if (verifier.line(lines[i] as string, start + i + 1, true) !== null) return verifier.result();
      }
    }
    return verifier.result();
  }

  async function list(filter: AuditFilter): Promise<AuditPage> {
    const collector = createPageCollector(filter);
    const total = await length();
    if (total === 0) return collector.page(true);
    let index = total - 1;
    if (filter.before !== undefined) {
      // seq grows by at least one per index, so no record below `before` sits past this index.
      const first = parseLine((await range(0, 0))[0] ?? '', 'its first record');
      index = Math.min(index, filter.before - first.seq - 1);
    }
    while (index >= 0) {
      const start = Math.max(0, index - PAGE + 1);
      const lines = await range(start, index);
      for (let i = lines.length - 1; i >= 0; i--) {
        if (!collector.offer(parseLine(lines[i] as string, `record ${start + i + 1}`))) return collector.page(false);
      }
      index = start - 1;
    }
    return collector.page(true);
  }

  return auditLogOf(options.location, (what, error) => `cannot ${what} the audit log at ${options.location}: ${error instanceof Error ? error.message : String(error)}`, {
    append: appendOnce,
    async settle(seq) {
      await client.command(['SREM', keys.open, String(seq)]);
    },
    async openSeqs() {
      const reply = await client.command(['SMEMBERS', keys.open]);
      if (!Array.isArray(reply)) throw new AuditLogError(`unexpected reply to SMEMBERS from ${options.location}`);
      return reply.map(Number).filter((seq) => Number.isSafeInteger(seq) && seq > 0).sort((a, b) => a - b);
    },
    checkTail,
    list,
    head: async () => (await readHead()).head,
    verify,
  });
}

function headValue(head: ChainHead): string {
  return `${head.seq} ${head.hash}`;
}
