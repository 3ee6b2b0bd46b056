// One record of the audit chain (docs/audit.md): its shape, its canonical
// JSON, its SHA-256 link to the record before, the strict parser of one stored
// line, and the guard that keeps secrets out. Pure: no I/O.
//
// hash = SHA-256 hex of the canonical JSON of the record without `hash`
// (keys sorted by UTF-16 code units, no whitespace, JSON values only). The
// stored line IS the canonical JSON of the whole record, so the parser can
// demand the exact bytes back: any hand edit that reformats a line is seen.
import { createHash } from 'node:crypto';
import { holdsSecret, REDACTED, redactSecretText } from '../log/secret-kinds.ts';
import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS, type AuditActor, type AuditEvent } from './audit-event.ts';

/** A door's event as the chain stores it: with its time, its place in the chain and the link to the record before. */
export interface AuditRecord extends AuditEvent {
  seq: number;
  time: string;
  prev: string;
  hash: string;
}

/** What a log's append takes: the record before the chain gives it seq, prev and hash. */
export type AuditRecordBody = Omit<AuditRecord, 'seq' | 'prev' | 'hash'>;

/** The prev of seq 1. */
export const GENESIS_HASH = '0'.repeat(64);
/** Longest stored line (without its newline): longer ones are refused on append and on read. */
export const MAX_RECORD_LINE_BYTES = 64 * 1024;

const RECORD_FIELDS = new Set(['seq', 'time', 'actor', 'source', 'action', 'target', 'before', 'after', 'detail', 'prev', 'hash']);
const ACTOR_FIELDS = new Set(['kind', 'id', 'uid', 'issuer', 'name']);
const HEX64 = /^[0-9a-f]{64}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A value that has no canonical JSON form (NaN, undefined, a function, a cycle...). */
export class AuditCanonicalError extends Error {
  override name = 'AuditCanonicalError';
  readonly path: string;
  constructor(path: string, what: string) {
    super(`${path || 'the record'} ${what}: an audit record holds only JSON values`);
    this.path = path;
  }
}

/** Canonical JSON: object keys sorted, no whitespace; refuses what JSON cannot hold. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, '', out, new Set());
  return out.join('');
}

function write(value: unknown, path: string, out: string[], open: Set<object>): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new AuditCanonicalError(path, `is ${String(value)}`);
      out.push(JSON.stringify(value));
      return;
    case 'object':
      break;
    default:
      throw new AuditCanonicalError(path, `is ${typeof value}`);
  }
  if (open.has(value)) throw new AuditCanonicalError(path, 'refers to itself');
  open.add(value);
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item: unknown, i) => {
      if (i > 0) out.push(',');
      write(item, `${path}[${i}]`, out, open);
    });
    out.push(']');
  } else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw new AuditCanonicalError(path, 'is not a plain object');
    const keys = Object.keys(value).sort();
    out.push('{');
    keys.forEach((key, i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(key), ':');
      write((value as Record<string, unknown>)[key], path === '' ? key : `${path}.${key}`, out, open);
    });
    out.push('}');
  }
  open.delete(value);
}

/** SHA-256 hex of the record's canonical JSON without `hash`. */
export function recordHash(record: Omit<AuditRecord, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...rest } = record;
  return createHash('sha256').update(canonicalJson(rest), 'utf8').digest('hex');
}

/** The next record of a chain whose last record is (seq, hash) — (0, GENESIS_HASH) for an empty one. */
export function chainRecord(body: AuditRecordBody, last: { seq: number; hash: string }): AuditRecord {
  const unhashed: Omit<AuditRecord, 'hash'> = {
    seq: last.seq + 1,
    time: body.time,
    actor: actorOf(body.actor),
    source: body.source,
    action: body.action,
    target: body.target,
    before: body.before,
    after: body.after,
    ...(body.detail === undefined ? {} : { detail: body.detail }),
    prev: last.hash,
  };
  return { ...unhashed, hash: recordHash(unhashed) };
}

/** The actor without absent optional members (an `undefined` uid is "not given", not a value). */
function actorOf(actor: AuditActor): AuditActor {
  const out: AuditActor = { kind: actor.kind, id: actor.id };
  if (actor.uid !== undefined) out.uid = actor.uid;
  if (actor.issuer !== undefined) out.issuer = actor.issuer;
  if (actor.name !== undefined) out.name = actor.name;
  return out;
}

/** The stored line of a record (no newline), refused when longer than MAX_RECORD_LINE_BYTES. */
export function recordLine(record: AuditRecord): string {
  const line = canonicalJson(record);
  const bytes = Buffer.byteLength(line, 'utf8');
  if (bytes > MAX_RECORD_LINE_BYTES) throw new AuditRecordTooLargeError(bytes);
  return line;
}

export class AuditRecordTooLargeError extends Error {
  override name = 'AuditRecordTooLargeError';
  constructor(bytes: number) {
    super(`the audit record is ${bytes} bytes as JSON, more than the ${MAX_RECORD_LINE_BYTES} a record may hold`);
  }
}

/** A stored line that is not a record; `field` names what is wrong ('' for the line as a whole). */
export class AuditRecordParseError extends Error {
  override name = 'AuditRecordParseError';
  readonly field: string;
  constructor(field: string, problem: string) {
    super(field === '' ? problem : `field ${field} ${problem}`);
    this.field = field;
  }
}

/**
 * Parses one stored line (without its newline) strictly: every field present
 * with its type, nothing else, in canonical form. Does not check the hash (the
 * chain's verifier does, to tell an edit from a malformed line).
 */
export function parseRecordLine(line: string): AuditRecord {
  if (Buffer.byteLength(line, 'utf8') > MAX_RECORD_LINE_BYTES) throw new AuditRecordParseError('', `is longer than ${MAX_RECORD_LINE_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new AuditRecordParseError('', 'is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AuditRecordParseError('', 'is not a JSON object');
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!RECORD_FIELDS.has(key)) throw new AuditRecordParseError(key, 'is not a field of an audit record');
  const seq = o['seq'];
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw new AuditRecordParseError('seq', 'must be a whole number from 1');
  const time = o['time'];
  if (typeof time !== 'string' || !ISO_TIME.test(time) || Number.isNaN(Date.parse(time)) || new Date(time).toISOString() !== time) {
    throw new AuditRecordParseError('time', 'must be an ISO 8601 UTC time with milliseconds');
  }
  parseActor(o['actor']);
  if (typeof o['source'] !== 'string') throw new AuditRecordParseError('source', 'must be a string');
  if (typeof o['action'] !== 'string' || !(AUDIT_ACTIONS as readonly string[]).includes(o['action'])) {
    throw new AuditRecordParseError('action', 'must be one of the audit actions');
  }
  if (o['target'] !== null && typeof o['target'] !== 'string') throw new AuditRecordParseError('target', 'must be a string or null');
  for (const field of ['before', 'after'] as const) {
    if (!Object.hasOwn(o, field)) throw new AuditRecordParseError(field, 'is missing');
    if (o[field] !== null && !isPlainObject(o[field])) throw new AuditRecordParseError(field, 'must be an object or null');
  }
  if (o['detail'] !== undefined && !isPlainObject(o['detail'])) throw new AuditRecordParseError('detail', 'must be an object');
  for (const field of ['prev', 'hash'] as const) {
    if (typeof o[field] !== 'string' || !HEX64.test(o[field])) throw new AuditRecordParseError(field, 'must be 64 lowercase hex digits');
  }
  if (canonicalJson(o) !== line) throw new AuditRecordParseError('', 'is not in canonical form (keys sorted, no spaces): it was not written by portcullis as it is');
  return o as unknown as AuditRecord;
}

function parseActor(value: unknown): void {
  if (!isPlainObject(value)) throw new AuditRecordParseError('actor', 'must be an object');
  for (const key of Object.keys(value)) if (!ACTOR_FIELDS.has(key)) throw new AuditRecordParseError(`actor.${key}`, 'is not a field of an actor');
  if (typeof value['kind'] !== 'string' || !(AUDIT_ACTOR_KINDS as readonly string[]).includes(value['kind'])) throw new AuditRecordParseError('actor.kind', 'must be one of ' + AUDIT_ACTOR_KINDS.join(', '));
  if (typeof value['id'] !== 'string') throw new AuditRecordParseError('actor.id', 'must be a string');
  const uid = value['uid'];
  if (uid !== undefined && uid !== null && (typeof uid !== 'number' || !Number.isSafeInteger(uid))) throw new AuditRecordParseError('actor.uid', 'must be a whole number or null');
  for (const field of ['issuer', 'name'] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'string') throw new AuditRecordParseError(`actor.${field}`, 'must be a string');
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// --- No secret in a record -------------------------------------------------

/** Field names that only a secret would have, compared without case. */
const SECRET_FIELDS = new Set(['key', 'token', 'password', 'secret', 'hash', 'idtoken', 'code']);
/** camelCase names ending in one of these (apiKey, clientSecret, accessToken, keyHash) are refused too. */
const SECRET_SUFFIX = /[a-z0-9](Key|Token|Password|Secret|Hash)$/;

export class AuditSecretError extends Error {
  override name = 'AuditSecretError';
  /** Where: `after.key`, `detail.note`. Never the value. */
  readonly path: string;
  constructor(path: string, why: string) {
    super(`the audit event was refused: ${path} ${why}; a record never holds a secret`);
    this.path = path;
  }
}

/** Throws AuditSecretError when any field of the event could carry a secret. */
export function assertNoSecrets(event: AuditEvent | AuditRecordBody): void {
  const { actor, source, target, before, after, detail } = event;
  scan(actor, 'actor');
  scan(source, 'source');
  scan(target, 'target');
  scan(before, 'before');
  scan(after, 'after');
  if (detail !== undefined) scan(detail, 'detail');
}

/** What a redacted value becomes in the record. */
export { REDACTED };

/**
 * The event with every secret-like value taken out: a field with a secret-like
 * name is left out, each gateway key or token in a string becomes REDACTED
 * (src/log/secret-kinds.ts, the pattern every sink uses); with the paths of
 * both. A key NAMED like a key (someone pasted one as its name) is still
 * recorded: who created which key id, when, from where; never the secret.
 * The result passes assertNoSecrets.
 */
export function redactSecrets(event: AuditEvent): { event: AuditEvent; redacted: string[] } {
  const redacted: string[] = [];
  const clean = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') {
      const cleaned = redactSecretText(value);
      if (cleaned !== value) redacted.push(path);
      return cleaned;
    }
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item: unknown, i) => clean(item, `${path}[${i}]`));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const at = `${path}.${key}`;
      if (SECRET_FIELDS.has(key.toLowerCase()) || SECRET_SUFFIX.test(key)) {
        // The field is left out: its name alone would keep the record from passing assertNoSecrets.
        redacted.push(at);
      } else {
        out[key] = clean(item, at);
      }
    }
    return out;
  };
  const { actor, source, action, target, before, after, detail } = event;
  const result = {
    actor: clean(actor, 'actor'),
    source: clean(source, 'source'),
    action,
    target: clean(target, 'target'),
    before: clean(before, 'before'),
    after: clean(after, 'after'),
    ...(detail === undefined ? {} : { detail: clean(detail, 'detail') }),
  } as AuditEvent;
  return { event: redacted.length === 0 ? event : result, redacted };
}

function scan(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (holdsSecret(value)) throw new AuditSecretError(path, 'looks like a gateway key or token');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => scan(item, `${path}[${i}]`));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (SECRET_FIELDS.has(key.toLowerCase()) || SECRET_SUFFIX.test(key)) throw new AuditSecretError(at, 'is a field only a secret would have');
    scan(item, at);
  }
}
