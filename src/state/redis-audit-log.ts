// The audit chain shared by every instance on one Redis (docs/audit.md, "With Redis"):
//   <prefix>{audit}:log    a list of the canonical record lines, oldest first
//   <prefix>{audit}:head   "<seq> <hash>" of the last record
// Redis's Lua has no SHA-256, so an append is optimistic: read the head, build
// and hash the record in Node, then one script pushes it and moves the head
// only if the head is still the one read; otherwise it answers the head it
// found and the append tries again on top of it (bounded). Appends of one
// instance queue in-process, so only instances contend.
import { setTimeout as sleep } from 'node:timers/promises';
import { createChainVerifier, type AuditVerification, type ChainHead } from '../audit/audit-chain.ts';
import { AuditLogError, auditLogOf, createPageCollector, type AuditFilter, type AuditLog, type AuditPage, type VerifyOptions } from '../audit/audit-log.ts';
import { chainRecord, GENESIS_HASH, parseRecordLine, recordLine, AuditRecordParseError, type AuditRecord, type AuditRecordBody } from '../audit/audit-record.ts';
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

export function redisAuditKeys(keyPrefix: string): { log: string; head: string } {
  const base = `${keyPrefix}{audit}`;
  return { log: `${base}:log`, head: `${base}:head` };
}

/**
 * KEYS: log, head. ARGV: 1 the head value read ('' = none), 2 the new head value, 3 the record line.
 * Returns {1} when appended, {0, head found} when another instance appended first.
 */
export const APPEND_SCRIPT = defineScript(`
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then return {0, head} end
redis.call('RPUSH', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
return {1}
`);

export function createRedisAuditLog(client: RedisClient, options: RedisAuditLogOptions): AuditLog {
  const keys = redisAuditKeys(options.keyPrefix);
  const where = `redis list ${keys.log}`;
  const maxTries = options.maxTries ?? DEFAULT_TRIES;

  /** The head value as stored ('' for none) and what it means; without a head key, the list's last record. */
  async function readHead(): Promise<{ stored: string; head: ChainHead }> {
    const stored = await client.command(['GET', keys.head]);
    if (typeof stored === 'string') return { stored, head: parseHeadValue(stored) };
    const last = await client.command(['LINDEX', keys.log, -1]);
    if (typeof last !== 'string') return { stored: '', head: { seq: 0, hash: GENESIS_HASH } };
    const record = parseLine(last, 'its last record');
    return { stored: '', head: { seq: record.seq, hash: record.hash } };
  }

  async function appendOnce(body: AuditRecordBody): Promise<AuditRecord> {
    let { stored, head } = await readHead();
    for (let attempt = 1; ; attempt++) {
      const record = chainRecord(body, head);
      const value = headValue(record);
      const reply = await client.evalScript(APPEND_SCRIPT, [keys.log, keys.head], [stored, value, recordLine(record)]);
      if (Array.isArray(reply) && reply[0] === 1) return record;
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
    const verifier = createChainVerifier({ storedHead, ...verifyOptions });
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
    list,
    head: async () => (await readHead()).head,
    verify,
  });
}

function headValue(head: ChainHead): string {
  return `${head.seq} ${head.hash}`;
}
