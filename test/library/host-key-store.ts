// A key store as a host writes one, from the public types alone: records in a
// Map that several instances share (the host's database), settings checked as the
// KeyStore doc comments say, errors told apart by name and code and worded its own way.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { IssuedKey, KeyGuard, KeyLimits, KeyPatch, KeyRecord, KeySettingsInput, KeyStore, ListedKey, WriteAhead } from '../../src/api/keys.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LIMIT_FIELDS = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests', 'tokenBudget', 'costBudget'] as const;
const NO_LIMITS: KeyLimits = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };
const ACTIONS = ['off', 'log', 'mask', 'block'];

class HostKeyError extends Error {
  readonly code: string;
  readonly keyId: string | null;
  readonly param: string | undefined;
  readonly problem: string | undefined;
  constructor(name: string, code: string, message: string, extra: { keyId?: string | null; param?: string; problem?: string } = {}) {
    super(message);
    this.name = name;
    this.code = code;
    this.keyId = extra.keyId ?? null;
    this.param = extra.param;
    this.problem = extra.problem;
  }
}

const invalid = (param: string, problem: string): HostKeyError => new HostKeyError('InvalidKeySettingError', 'invalid_key_setting', `Key setting ${param} ${problem}.`, { param, problem });
// The id is named only when it is one of ours: a pasted raw key is never echoed.
const notFound = (id: string): HostKeyError =>
  new HostKeyError('KeyNotFoundError', 'key_not_found', /^hk_[0-9a-f]{32}$/.test(id) ? `Unknown key ${id} in the host database.` : 'Unknown key id in the host database.', { keyId: /^hk_[0-9a-f]{32}$/.test(id) ? id : null });
const revoked = (id: string): HostKeyError => new HostKeyError('KeyRevokedError', 'key_revoked', `Key ${id} was revoked in the host database.`, { keyId: id });

const random = (length: number): string => Array.from({ length }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function checkName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || [...name].length > 64 || /[\p{Cc}\p{Cf}]/u.test(name)) throw new HostKeyError('InvalidKeyNameError', 'invalid_key_name', 'Key names in the host database are 1 to 64 printable characters.');
  return name;
}

function checkExpiry(value: unknown): string | null {
  if (value === null) return null;
  const ms = typeof value === 'string' && /(Z|[+-]\d{2}:\d{2})$/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw invalid('expiresAt', 'must be null or an ISO 8601 time with a zone');
  return new Date(ms).toISOString();
}

function checkAliases(value: unknown): readonly string[] | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) throw invalid('allowedAliases', 'must be null or a list of alias names');
  return [...value] as string[];
}

function checkLimitFields(value: unknown, into: Record<string, unknown>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('limits', 'must be an object');
  for (const [field, limit] of Object.entries(value)) {
    if (!(LIMIT_FIELDS as readonly string[]).includes(field)) throw invalid(`limits.${field}`, 'is not a limit');
    if (limit !== null && (field === 'tokenBudget' || field === 'costBudget' ? typeof limit !== 'object' : !(Number.isSafeInteger(limit) && (limit as number) > 0))) throw invalid(`limits.${field}`, 'is not a valid limit');
    into[field] = limit;
  }
}

function checkLimits(value: unknown): KeyLimits {
  const limits: Record<string, unknown> = { ...NO_LIMITS };
  if (value !== null) checkLimitFields(value, limits);
  return limits as unknown as KeyLimits;
}

function checkGuard(value: unknown): KeyGuard | null {
  if (value === null) return null;
  const detectors = (value as { detectors?: unknown }).detectors;
  if (typeof detectors !== 'object' || detectors === null) throw invalid('guard.detectors', 'is required');
  for (const [name, action] of Object.entries(detectors)) {
    if (!ACTIONS.includes(action as string)) throw invalid(`guard.detectors.${name}`, `is not a guard action (${ACTIONS.join('/')})`);
  }
  return { detectors: { ...(detectors as KeyGuard['detectors']) } };
}

/** Where keys live: shared by every instance opened on it. */
export interface HostKeyDatabase {
  records: KeyRecord[];
  lastUsed: Map<string, string>;
}

export function createHostKeyDatabase(): HostKeyDatabase {
  return { records: [], lastUsed: new Map() };
}

export function openHostKeyStore(db: HostKeyDatabase, clock: () => Date): KeyStore {
  let closed = false;
  const pending = new Map<string, string>();
  const open = (): void => {
    if (closed) throw new HostKeyError('KeyStoreClosedError', 'key_store_closed', 'This host key store was closed.');
  };
  const find = (id: string): KeyRecord => {
    const record = db.records.find((r) => r.id === id);
    if (record === undefined) throw notFound(id);
    return record;
  };
  const listed = (record: KeyRecord): ListedKey => {
    const times = [db.lastUsed.get(record.id), pending.get(record.id)].filter((t): t is string => t !== undefined).sort();
    return { ...record, lastUsedAt: times.at(-1) ?? null };
  };
  const replace = async (before: KeyRecord, after: KeyRecord, ahead: WriteAhead | undefined): Promise<KeyRecord> => {
    await ahead?.({ before, after });
    db.records[db.records.indexOf(before)] = after;
    return after;
  };
  const issue = (): { key: string; prefix: string; hash: string } => {
    const key = `pcl_${random(49)}`;
    return { key, prefix: key.slice(0, 12), hash: sha256(key) };
  };
  const flush = (): void => {
    for (const [id, time] of pending) if ((db.lastUsed.get(id) ?? '') < time) db.lastUsed.set(id, time);
    pending.clear();
  };
  return {
    location: 'host database',
    async create(name: string, settings: KeySettingsInput = {}, ahead?: WriteAhead): Promise<IssuedKey> {
      open();
      const checkedName = checkName(name);
      const expiresAt = settings.expiresAt === undefined ? null : checkExpiry(settings.expiresAt);
      if (expiresAt !== null && Date.parse(expiresAt) <= clock().getTime()) throw invalid('expiresAt', 'is in the past');
      const { key, prefix, hash } = issue();
      const record: KeyRecord = {
        id: `hk_${randomBytes(16).toString('hex')}`,
        name: checkedName,
        prefix,
        hash,
        createdAt: clock().toISOString(),
        revokedAt: null,
        rotatedAt: null,
        allowedAliases: settings.allowedAliases === undefined ? null : checkAliases(settings.allowedAliases),
        expiresAt,
        limits: settings.limits === undefined ? NO_LIMITS : checkLimits(settings.limits),
        guard: settings.guard === undefined ? null : checkGuard(settings.guard),
      };
      await ahead?.({ before: null, after: record });
      db.records.push(record);
      return { key, record };
    },
    async list() {
      open();
      return db.records.map(listed);
    },
    async get(id) {
      open();
      return listed(find(id));
    },
    async update(id: string, patch: KeyPatch, ahead?: WriteAhead) {
      open();
      const before = find(id);
      const changes: Partial<Record<keyof KeyRecord, unknown>> = {};
      if (patch.name !== undefined) changes.name = checkName(patch.name);
      if (patch.allowedAliases !== undefined) changes.allowedAliases = checkAliases(patch.allowedAliases);
      if (patch.expiresAt !== undefined) changes.expiresAt = checkExpiry(patch.expiresAt);
      if (patch.guard !== undefined) changes.guard = checkGuard(patch.guard);
      if (patch.limits !== undefined && patch.limitChanges !== undefined) throw invalid('limits', 'give limits or limitChanges, not both');
      if (patch.limits !== undefined) changes.limits = checkLimits(patch.limits);
      const limitChanges: Record<string, unknown> = {};
      if (patch.limitChanges !== undefined) checkLimitFields(patch.limitChanges, limitChanges);
      if (before.revokedAt !== null) throw revoked(id);
      const limits = patch.limitChanges === undefined ? (changes.limits ?? before.limits) : { ...before.limits, ...limitChanges };
      return replace(before, { ...before, ...changes, limits } as KeyRecord, ahead);
    },
    async rotate(id, ahead) {
      open();
      const before = find(id);
      if (before.revokedAt !== null) throw revoked(id);
      const { key, prefix, hash } = issue();
      return { key, record: await replace(before, { ...before, prefix, hash, rotatedAt: clock().toISOString() }, ahead) };
    },
    async revoke(id, ahead) {
      open();
      const before = find(id);
      if (before.revokedAt !== null) throw new HostKeyError('KeyAlreadyRevokedError', 'key_already_revoked', `Key ${id} has been revoked since ${before.revokedAt}.`, { keyId: id });
      return replace(before, { ...before, revokedAt: clock().toISOString() }, ahead);
    },
    async reload() {
      open();
    },
    async prepareReload() {
      open();
      return { commit: () => {} };
    },
    authenticate(rawKey) {
      if (closed) return null;
      const hash = sha256(rawKey);
      return db.records.find((r) => r.hash === hash && r.revokedAt === null) ?? null;
    },
    touch(id) {
      if (db.records.some((r) => r.id === id)) pending.set(id, clock().toISOString());
    },
    async flushLastUsed() {
      flush();
    },
    async close() {
      if (closed) return;
      flush();
      closed = true;
    },
  };
}
