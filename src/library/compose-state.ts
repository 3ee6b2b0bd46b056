// The state of an embedded gateway: the ports a host supplies (keys, usage,
// limiter) and, for the rest, what the config's backend opens. With the data
// directory's backend only what is not supplied is opened (a supplied key store
// means no keys.json is read or watched); Redis is one connection for all, so it
// is opened whole and the supplied ports take the place of its own. close() closes
// what was opened here; a host's ports are the host's to close.
//
// A host's key store is held to what the request path trusts: the record that
// authenticate() returns is checked like an Authenticator's policy on every
// request (a host may change a record in place), and a bad one fails the request
// with a generic 500 and an error log naming the field.
import type { KeyStore as HostKeyStore } from '../api/keys.ts';
import type { Limiter as HostLimiter, UsageStore as HostUsageStore } from '../api/limits.ts';
import type { AuditSink } from '../api/ports.ts';
import { createAuditTrail, drainAuditSink, type AuditTrail, type AuditTrailOptions } from '../audit/audit-trail.ts';
import type { GatewayConfig } from '../config/config.ts';
import { createFileAuditLog } from '../audit/file-audit-log.ts';
import { ApiError } from '../errors/api-error.ts';
import { checkHostPolicy } from '../gateway/host-policy.ts';
import type { Logger } from '../log/logger.ts';
import { openFileAdminTokenStore } from '../state/file-admin-token-store.ts';
import { checkDataDirWritable, openFileLimiter } from '../state/file-backend.ts';
import { openKeyStore, type KeyStoreOptions } from '../state/file-key-store.ts';
import { createFileUsageStore } from '../state/file-usage-store.ts';
import type { KeyRecord, KeyStore } from '../state/key-store-port.ts';
import { openLocalResponseStore } from '../state/local-response-store.ts';
import { holdDataDir } from '../state/data-dir-hold.ts';
import { openStateBackend } from '../state/open-backend.ts';
import type { StateOperation } from '../state/redis-backend.ts';
import { BackendHealth, type StateBackend } from '../state/state-backend.ts';
import { join } from 'node:path';

/** The host's ports for state; each one given replaces the backend's own. */
export interface LibraryStatePorts {
  keys?: HostKeyStore | undefined;
  usage?: HostUsageStore | undefined;
  limiter?: HostLimiter | undefined;
}

export interface LibraryStateDeps {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** Key store background failures (a broken keys.json on reload). */
  onKeyStoreError?: KeyStoreOptions['onError'];
  countUnavailable?: (operation: StateOperation) => void;
  countBudgetJournalWriteFailure?: () => void;
}

/** Rejects like openStateBackend for the parts it opens. */
export async function openLibraryState(config: GatewayConfig, ports: LibraryStatePorts, deps: LibraryStateDeps): Promise<StateBackend> {
  if (ports.limiter !== undefined) checkLeaseMs(ports.limiter);
  const keys = ports.keys === undefined ? undefined : checkedKeyStore(ports.keys, deps.logger);
  if (config.state.backend === 'redis' && config.state.redis !== null) {
    const backend = await openStateBackend(config, { logger: deps.logger, env: deps.env, ...countersOf(deps) });
    return { ...withoutClose(backend), keys: keys ?? backend.keys, usage: ports.usage ?? backend.usage, limiter: ports.limiter ?? backend.limiter, close: () => backend.close() };
  }
  const { dataDir } = config;
  // One gateway per data directory (../state/data-dir-hold.ts): Redis needs no hold, its counts are shared.
  const hold = holdDataDir(dataDir);
  const opened: { close(): Promise<void> }[] = [];
  const own = <T extends { close(): Promise<void> }>(port: T): T => (opened.push(port), port);
  const closeOpened = async (): Promise<void> => {
    for (const port of opened.reverse()) await port.close();
  };
  let parts: Pick<StateBackend, 'keys' | 'usage' | 'limiter' | 'tokens' | 'audit'>;
  try {
    const keyStore = keys ?? own(openKeyStore(dataDir, deps.onKeyStoreError === undefined ? {} : { onError: deps.onKeyStoreError }));
    const limiter =
      ports.limiter ?? own(openFileLimiter(dataDir, { logger: deps.logger, ...(deps.countBudgetJournalWriteFailure === undefined ? {} : { countJournalWriteFailure: deps.countBudgetJournalWriteFailure }) }));
    parts = {
      keys: keyStore,
      usage: ports.usage ?? createFileUsageStore(dataDir),
      limiter,
      tokens: openFileAdminTokenStore(dataDir),
      audit: createFileAuditLog({ dataDir, rotateBytes: config.audit.rotateBytes, onProblem: (message) => deps.logger.warn(message) }),
    };
  } catch (error) {
    // A start that fails leaves nothing running (the key store's watch on the data directory).
    try {
      await closeOpened();
    } catch (closeError) {
      deps.logger.warn('a state port opened for a failed start could not be closed', { error: closeError instanceof Error ? closeError.message : String(closeError) });
    }
    hold.release();
    throw error;
  }
  let closing: Promise<void> | null = null;
  return {
    kind: 'memory',
    ...parts,
    openResponseStore: (limits, scheduler, onProblem) => openLocalResponseStore({ dir: join(dataDir, 'responses'), limits, scheduler, onProblem }),
    health: () => BackendHealth.Ok,
    checkWritable: () => checkDataDirWritable(dataDir),
    close() {
      // The limiter first, as the file backend closes them: its last budget counts are written before the keys close.
      // The hold last: the next gateway on this directory reads the counts written above.
      closing ??= closeOpened().finally(() => hold.release());
      return closing;
    },
  };
}

/** The shortest lease a host's limiter may have: the gateway renews every leaseMs / 3, so this bounds renewals to about three a second per request. */
export const MIN_HOST_LEASE_MS = 1000;

/** Throws a TypeError naming `limiter.leaseMs` when a host's limiter's lease would make the permit keeper renew in a tight loop. */
export function checkLeaseMs(limiter: HostLimiter): void {
  const leaseMs: unknown = limiter.leaseMs;
  if (typeof leaseMs === 'number' && Number.isSafeInteger(leaseMs) && leaseMs >= MIN_HOST_LEASE_MS) return;
  const given = typeof leaseMs === 'number' ? String(leaseMs) : leaseMs === null ? 'null' : typeof leaseMs;
  throw new TypeError(`the host's limiter.leaseMs must be a whole number of milliseconds, at least ${MIN_HOST_LEASE_MS} (the gateway renews permits every leaseMs / 3); it is ${given}`);
}

/**
 * The audit trail of an embedded gateway: the backend's chain, and a copy of each
 * record to the host's sink when one is given (see ../audit/audit-trail.ts).
 */
export function createLibraryAuditTrail(
  backend: StateBackend,
  sink: AuditSink | undefined,
  logger: Logger,
  options: Pick<AuditTrailOptions, 'onAppendFailure' | 'onSinkFailure' | 'scheduler' | 'sinkTimeoutMs' | 'sinkMaxQueued'> = {},
): AuditTrail {
  return createAuditTrail({ logger, log: backend.audit, sink, ...options });
}

/** For the gateway's close(): the host sink's last records, at most `deadlineMs` (see ../audit/audit-trail.ts). */
export { drainAuditSink };

/**
 * The host's key store as the gateway uses it: every call passed through, and the
 * record authenticate() answers checked before a request runs on it.
 */
export function checkedKeyStore(store: HostKeyStore, logger: Logger): KeyStore {
  return {
    get location() {
      return typeof store.location === 'string' ? store.location : 'the host key store';
    },
    create: (name, settings, ahead) => store.create(name, settings, ahead),
    list: () => store.list(),
    get: (id) => store.get(id),
    update: (id, patch, ahead) => store.update(id, patch, ahead),
    rotate: (id, ahead) => store.rotate(id, ahead),
    revoke: (id, ahead) => store.revoke(id, ahead),
    reload: () => store.reload(),
    prepareReload: () => store.prepareReload(),
    authenticate(rawKey) {
      const record: unknown = store.authenticate(rawKey);
      if (record === null) return null;
      // A record's settings are all required (null where none): one left out is the host's bug, not "unlimited".
      const missing = typeof record === 'object' ? RECORD_SETTINGS.find((field) => (record as Partial<KeyRecord>)[field] === undefined) : undefined;
      if (missing !== undefined) {
        logger.error('the key store returned a key record without a setting; the request failed with a 500', { field: missing });
        throw new ApiError('internal_error');
      }
      const { id, expiresAt, allowedAliases, limits, guard } = (typeof record === 'object' ? record : {}) as Partial<KeyRecord>;
      // Throws the client's generic 500 and logs the field when the record cannot be served;
      // the request runs on the checked policy, normalised as a stored key's.
      const policy = checkHostPolicy(typeof record === 'object' ? { id, expiresAt, allowedAliases, limits, guard } : record, logger);
      return { ...(record as KeyRecord), ...policy };
    },
    touch: (id) => store.touch(id),
    flushLastUsed: () => store.flushLastUsed(),
    close: () => store.close(),
  };
}

const RECORD_SETTINGS = ['expiresAt', 'allowedAliases', 'limits', 'guard'] as const;

function withoutClose(backend: StateBackend): Omit<StateBackend, 'close'> {
  const { close: _close, ...rest } = backend;
  return rest;
}

function countersOf(deps: LibraryStateDeps): Pick<Parameters<typeof openStateBackend>[1], 'onKeyStoreError' | 'countUnavailable' | 'countBudgetJournalWriteFailure'> {
  return {
    ...(deps.onKeyStoreError === undefined ? {} : { onKeyStoreError: deps.onKeyStoreError }),
    ...(deps.countUnavailable === undefined ? {} : { countUnavailable: deps.countUnavailable }),
    ...(deps.countBudgetJournalWriteFailure === undefined ? {} : { countBudgetJournalWriteFailure: deps.countBudgetJournalWriteFailure }),
  };
}
