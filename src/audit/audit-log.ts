// The AuditLog port (the chain's store: a file in the data directory, or one
// shared Redis list) and the filter that `portcullis audit list` and
// GET /api/audit share. The filter is pure: parsed and checked here, applied
// record by record by each store as it reads newest first.
import { AUDIT_ACTIONS, type AuditAction } from './audit-event.ts';
import type { AuditVerification, ChainHead } from './audit-chain.ts';
import { assertNoSecrets, type AuditRecord, type AuditRecordBody } from './audit-record.ts';

export interface AuditFilter {
  /** target === this key id. */
  key?: string;
  /** actor.id or actor.name === this, or this is `<actor.kind>:<id or name>`. */
  actor?: string;
  action?: AuditAction;
  /** ISO times: since inclusive, until exclusive. */
  since?: string;
  until?: string;
  /** 1..1000, default 100. */
  limit?: number;
  /** Only records with seq below this (the previous page's nextBefore). */
  before?: number;
}

export interface AuditPage {
  /** Newest first. */
  records: AuditRecord[];
  /** Pass as `before` for the next (older) page; null when there is none. */
  nextBefore: number | null;
}

export interface VerifyOptions {
  fromGenesis?: boolean;
  expectHead?: string | null;
}

export interface AppendOptions {
  /**
   * A write-ahead record: written before the change it describes, it stays open (listed by
   * openSeqs) until settle(seq), so that after a crash its change can be checked.
   */
  open?: boolean;
}

export interface AuditLog {
  /** Gives the record seq, prev and hash, atomically with every other writer; resolves once it is durable. */
  append(record: AuditRecordBody, options?: AppendOptions): Promise<AuditRecord>;
  /** The write-ahead record `seq` is closed: its change was made, or its outcome recorded. */
  settle(seq: number): Promise<void>;
  /** Seqs of write-ahead records not settled (a crash came between the record and its change). */
  openSeqs(): Promise<readonly number[]>;
  /**
   * The chain's tail judged against the stored head, at start: a record a crash left past
   * the head is adopted; anything else past the head, or a last record that is not the
   * head's, throws AuditLogError (nothing may be appended on it). Returns the head.
   */
  checkTail(): Promise<ChainHead>;
  list(filter: AuditFilter): Promise<AuditPage>;
  /** The last record's seq and hash ({0, 64 zeros} for an empty chain). */
  head(): Promise<ChainHead>;
  verify(options?: VerifyOptions): Promise<AuditVerification>;
  /** Where the chain is, for messages: a directory path or a redis:// URL. */
  readonly location: string;
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
/** Records one list() call reads at most: a page may hold fewer than `limit` when the filter matches rarely; nextBefore continues. */
export const MAX_SCANNED_PER_LIST = 100_000;
const MAX_FILTER_TEXT = 256;
/** The filters' names, as query parameters (GET /api/audit) and options (`audit list --NAME`). */
export const AUDIT_FILTER_NAMES = ['key', 'actor', 'action', 'since', 'until', 'limit', 'before'] as const;
export type AuditFilterName = (typeof AUDIT_FILTER_NAMES)[number];

/** The log cannot be read or written (I/O, Redis, a record that is not valid); the message names where and what to do. */
export class AuditLogError extends Error {
  override name = 'AuditLogError';
}

/** What a store does itself; auditLogOf makes it an AuditLog. */
export type AuditLogOperations = Omit<AuditLog, 'location'>;

/**
 * The AuditLog of a store's operations: this process's appends one at a time (each
 * starts once the one before settled), an event holding a secret refused before any
 * I/O (AuditSecretError), and any other failure that is not an AuditLogError already
 * made one, worded by `problem(what, error)` ('append to', 'read' or 'verify').
 */
export function auditLogOf(location: string, problem: (what: string, error: unknown) => string, operations: AuditLogOperations): AuditLog {
  let queue: Promise<unknown> = Promise.resolve();
  const guard = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AuditLogError) throw error;
      throw new AuditLogError(problem(what, error), { cause: error });
    }
  };
  return {
    location,
    append(body, appendOptions) {
      const run = queue.then(() => {
        assertNoSecrets(body);
        return guard('append to', () => operations.append(body, appendOptions));
      });
      queue = run.catch(() => undefined);
      return run;
    },
    settle(seq) {
      const run = queue.then(() => guard('append to', () => operations.settle(seq)));
      queue = run.catch(() => undefined);
      return run;
    },
    openSeqs: () => guard('read', () => operations.openSeqs()),
    checkTail: () => guard('append to', () => operations.checkTail()),
    list: (filter) => guard('read', () => operations.list(filter)),
    head: () => guard('read', () => operations.head()),
    verify: (verifyOptions) => guard('verify', () => operations.verify(verifyOptions)),
  };
}

/** A filter value that cannot be used; `param` is its name (key, actor, action, since, until, limit, before). */
export class AuditFilterError extends Error {
  override name = 'AuditFilterError';
  readonly param: string;
  constructor(param: string, message: string) {
    super(message);
    this.param = param;
  }
}

/** Text values of a filter as given on a query string or a command line; checked and typed. */
export function parseAuditFilter(input: Readonly<Partial<Record<AuditFilterName, string | undefined>>>): AuditFilter {
  const filter: AuditFilter = {};
  for (const name of ['key', 'actor'] as const) {
    const value = input[name];
    if (value === undefined) continue;
    if (value === '' || value.length > MAX_FILTER_TEXT) throw new AuditFilterError(name, `${name} must be 1 to ${MAX_FILTER_TEXT} characters.`);
    filter[name] = value;
  }
  const action = input['action'];
  if (action !== undefined) {
    if (!(AUDIT_ACTIONS as readonly string[]).includes(action)) throw new AuditFilterError('action', `action must be one of: ${AUDIT_ACTIONS.join(', ')}.`);
    filter.action = action as AuditAction;
  }
  for (const name of ['since', 'until'] as const) {
    const value = input[name];
    if (value === undefined) continue;
    const ms = isoTime(value);
    if (ms === null) throw new AuditFilterError(name, `${name} must be an ISO 8601 time with a time zone, e.g. 2026-11-26T00:00:00Z.`);
    filter[name] = new Date(ms).toISOString();
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) {
    throw new AuditFilterError('until', 'until must be later than since.');
  }
  const limit = input['limit'];
  if (limit !== undefined) {
    const n = wholeNumber(limit);
    if (n === null || n < 1 || n > MAX_LIST_LIMIT) throw new AuditFilterError('limit', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}.`);
    filter.limit = n;
  }
  const before = input['before'];
  if (before !== undefined) {
    const n = wholeNumber(before);
    if (n === null || n < 1) throw new AuditFilterError('before', 'before must be a whole number from 1 (a seq, the nextBefore of the previous page).');
    filter.before = n;
  }
  return filter;
}

/**
 * The actor's id or name is `wanted`, alone or after its kind as `audit list`'s table
 * shows it (`token:ci`, `cli:root`), so a value copied from the table finds its records.
 */
function actorMatches(actor: AuditRecord['actor'], wanted: string): boolean {
  if (actor.id === wanted || actor.name === wanted) return true;
  const kind = `${actor.kind}:`;
  if (!wanted.startsWith(kind)) return false;
  const rest = wanted.slice(kind.length);
  return actor.id === rest || actor.name === rest;
}

/** Does the record pass the filter (all but limit and before, which the store's scan applies)? */
export function matchesFilter(record: AuditRecord, filter: AuditFilter): boolean {
  if (filter.key !== undefined && record.target !== filter.key) return false;
  if (filter.actor !== undefined && !actorMatches(record.actor, filter.actor)) return false;
  if (filter.action !== undefined && record.action !== filter.action) return false;
  if (filter.since !== undefined && record.time < filter.since) return false;
  if (filter.until !== undefined && record.time >= filter.until) return false;
  return true;
}

/**
 * Collects a page from records offered newest first (seq descending). Returns
 * false once the page is decided: `limit` matches and one more seen (or the scan
 * bound hit); the store stops reading then and calls page().
 */
export function createPageCollector(filter: AuditFilter): { offer(record: AuditRecord): boolean; page(exhausted: boolean): AuditPage } {
  const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
  const records: AuditRecord[] = [];
  let scanned = 0;
  let lowestScanned: number | null = null;
  let more = false;
  return {
    offer(record) {
      if (filter.before !== undefined && record.seq >= filter.before) return true;
      scanned += 1;
      lowestScanned = record.seq;
      if (matchesFilter(record, filter)) {
        if (records.length === limit) {
          more = true;
          return false;
        }
        records.push(record);
      }
      if (scanned >= MAX_SCANNED_PER_LIST) {
        more = true;
        return false;
      }
      return true;
    },
    page(exhausted) {
      if (exhausted && !more) return { records, nextBefore: null };
      // A full page: continue below its last record; the scan bound: below the last record read.
      const nextBefore = records.length === limit ? (records[records.length - 1] as AuditRecord).seq : lowestScanned;
      return { records, nextBefore: nextBefore === null || nextBefore <= 1 ? null : nextBefore };
    },
  };
}

/** The records with these seqs (those still in the log), newest first; reads back from the end until all are found. */
export async function recordsBySeq(log: AuditLog, seqs: readonly number[]): Promise<AuditRecord[]> {
  const wanted = new Set(seqs);
  const found: AuditRecord[] = [];
  if (wanted.size === 0) return found;
  const lowest = Math.min(...wanted);
  let before: number | undefined = Math.max(...wanted) + 1;
  while (before !== undefined && before > lowest) {
    const page = await log.list({ before, limit: MAX_LIST_LIMIT });
    for (const record of page.records) if (wanted.has(record.seq)) found.push(record);
    before = page.nextBefore ?? undefined;
  }
  return found;
}

function isoTime(value: string): number | null {
  if (value.length > 64 || !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

function wholeNumber(text: string): number | null {
  if (!/^\d{1,15}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
