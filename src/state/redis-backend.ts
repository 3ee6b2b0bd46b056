// The shared backend: keys, limits, budgets and usage in one Redis, so several
// gateway instances behind a load balancer act as one. See docs/scaling.md.
//
// When Redis cannot be reached (state.onUnavailable):
//   'refuse' - admit() rejects with StateUnavailableError (503 state_unavailable, with
//              Retry-After): no request runs that cannot be counted.
//   'local'  - admit() and settle() use an in-process memory limiter until Redis
//              answers again. Its buckets start full and its budgets at 0 (this
//              instance cannot know what Redis counted), and each instance counts
//              alone, so N instances allow up to N times a limit during an outage,
//              and a spent budget is admitted again. Permits admitted locally are
//              settled locally; new admissions go back to Redis as soon as it answers.
// In both modes:
//   - authenticate() keeps answering from the key store's mirror (the keys last seen);
//     key changes (create/update/rotate/revoke) fail with KeyStoreIoError;
//   - settle() of a Redis permit resolves without effect (nothing a caller could do:
//     the permit's lease returns its slot, its reservation stays charged);
//   - renew() of a Redis permit rejects with StateUnavailableError: whether Redis still
//     holds it is unknown, so the caller keeps renewing on its schedule (a permit not
//     renewed within its lease frees its slot); renew() of a local permit goes to the
//     local limiter, which holds it;
//   - budgetUsed() rejects with StateUnavailableError; usage flushes reject, so the
//     ledger keeps its counters for the next flush;
//   - one warn line when the outage starts, one info line when Redis answers again,
//     and countUnavailable(operation) for every limiter call that met the outage.
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { ConfigError, type RedisStateConfig } from '../config/config.ts';
import { loadClientTls } from '../config/tls-files.ts';
import type { KeyStore } from './key-store-port.ts';
import { hasAnyLimit } from '../limits/key-limits.ts';
import type { AdmitDecision, AdmitInput, Limiter, Permit, SettleInput } from '../limits/limiter.ts';
import { createMemoryLimiter } from '../limits/memory-limiter.ts';
import { createRedisLimiter } from '../limits/redis-limiter.ts';
import type { Logger, LogFields } from '../log/logger.ts';
import { createRedisResponseStore } from './redis-response-store.ts';
import { ClientState, createRedisClient, type RedisClient, type RedisClientOptions, type RedisTlsOptions } from '../redis/client.ts';
import { RedisReplyError, RedisUnavailableError, RedisUrlError } from '../redis/errors.ts';
import type { ReconnectPolicy } from '../redis/reconnect-backoff.ts';
import { parseRedisUrl, type RedisAddress } from '../redis/redis-url.ts';
import type { Scheduler } from '../time/scheduler.ts';
import { StateUnavailableError } from './errors.ts';
import { openRedisKeyStore } from './redis-key-store.ts';
import { createRedisAdminTokenStore } from './redis-admin-token-store.ts';
import { createRedisUsageStore } from './redis-usage-store.ts';
import { createRedisAuditLog } from '../audit/redis-audit-log.ts';
import { BackendHealth, type StateBackend } from './state-backend.ts';

export { StateUnavailableError } from './errors.ts';

export type UnavailableMode = 'refuse' | 'local';

/** Limiter calls that can meet an outage, as passed to countUnavailable. */
export type StateOperation = 'admit' | 'settle' | 'renew' | 'budgetUsed';

export interface RedisBackendOptions {
  /** state.onUnavailable: what admit() does while Redis is unreachable. */
  onUnavailable: UnavailableMode;
  logger: Logger;
  /** Where passwordEnv is read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Times of key records and last use. */
  clock?: () => Date;
  /** The config file the settings came from: named in errors, and a relative passwordFile is resolved against its directory. */
  configSource?: string | null;
  /** Called for every limiter call that met an unreachable Redis (a /metrics counter). */
  countUnavailable?: (operation: StateOperation) => void;
  /** Key store mirror refresh interval (default 1000 ms). */
  reloadIntervalMs?: number;
  /** What the key store's mirror refresh, lookup timeouts and lookup rate are timed by; default the system's. */
  keyStoreScheduler?: Scheduler;
  /** Permit lease (default DEFAULT_LEASE_MS, 60 s). */
  leaseMs?: number;
  /** Reconnect backoff (tests shorten it). */
  reconnect?: Partial<ReconnectPolicy>;
}

export interface RedisBackend extends StateBackend {
  readonly kind: 'redis';
  /** redis://host:port/db or rediss://..., for messages (never the password). */
  readonly location: string;
}

const MAX_PASSWORD_FILE_BYTES = 16 * 1024;
/** TTL of the /readyz write probe key. */
const WRITE_CHECK_TTL_MS = 10_000;

const Availability = {
  /** Up since the last connect. */
  Up: 'up',
  /** Lost; the warn line was written, the info line is due when it comes back. */
  Down: 'down',
} as const;
type Availability = (typeof Availability)[keyof typeof Availability];

/**
 * Connects, loads the keys and returns the backend. Rejects when the password cannot
 * be read (ConfigError), or when Redis does not answer within connectTimeoutMs or
 * holds a broken key record: a gateway that cannot see any key must not start.
 */
export async function openRedisBackend(config: RedisStateConfig, options: RedisBackendOptions): Promise<RedisBackend> {
  const { logger, onUnavailable } = options;
  const env = options.env ?? process.env;
  const source = options.configSource ?? null;
  const { location, clientOptions } = redisConnection(config, env, source, { url: 'state.redis.url', tls: 'state.redis.tls' });
  const count = options.countUnavailable ?? (() => {});

  let availability: Availability = Availability.Up;
  let downSinceMs = 0;
  /** The client's last complaint, for the outage line (the client itself logs at debug). */
  let lastProblem: string | null = null;
  const clientLogger: Logger = {
    debug: (msg, fields) => logger.debug(msg, fields),
    info: (msg, fields) => logger.debug(msg, fields),
    warn: (msg, fields) => {
      lastProblem = typeof fields?.['error'] === 'string' ? fields['error'] : msg;
      logger.debug(msg, fields);
    },
    error: (msg, fields) => logger.error(msg, fields),
  };

  let connectedOnce = false;
  /** Set once the first load succeeded; the recovery handler reloads it. */
  let keys: KeyStore | undefined = undefined;
  const client: RedisClient = createRedisClient({
    ...clientOptions,
    logger: clientLogger,
    ...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
    onStateChange(state) {
      if (state === ClientState.Ready) {
        if (availability === Availability.Down) {
          logger.info('state backend recovered: Redis answers again', { redis: location, down_ms: Date.now() - downSinceMs });
          // A Redis restored from an older snapshot may carry a version number the mirror
          // has already seen with other records: read the keys whole once.
          keys?.reload().catch((error: unknown) => logger.error('key store reload after the outage failed', { redis: location, error: String(error) }));
        }
        availability = Availability.Up;
        connectedOnce = true;
      } else if (state === ClientState.Reconnecting && availability === Availability.Up && connectedOnce) {
        availability = Availability.Down;
        downSinceMs = Date.now();
        const effect = onUnavailable === 'refuse' ? 'requests of keys with limits are refused (503)' : 'limits are counted per instance';
        const fields: LogFields = { redis: location, on_unavailable: onUnavailable, error: lastProblem };
        logger.warn(`state backend unavailable: Redis cannot be reached; ${effect} until it answers`, fields);
      }
    },
  });

  const keyStore = await openKeys(client, config, options, location).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  keys = keyStore;
  const usage = createRedisUsageStore(client, {
    keyPrefix: config.keyPrefix,
    onError: (error) => logger.error('usage flush partly failed', { redis: location, error: error.message }),
  });
  const limiter = createFailoverLimiter({
    redis: createRedisLimiter(client, { keyPrefix: config.keyPrefix, ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }) }),
    local: onUnavailable === 'local' ? createMemoryLimiter(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }) : null,
    ready: () => client.state === ClientState.Ready,
    count,
  });
  const writeCheckKey = `${config.keyPrefix}health:write-check:${randomUUID()}`;
  let closing: Promise<void> | null = null;

  return {
    kind: 'redis',
    location,
    keys: keyStore,
    usage,
    limiter,
    tokens: createRedisAdminTokenStore(client, { keyPrefix: config.keyPrefix, location }),
    audit: createRedisAuditLog(client, { keyPrefix: config.keyPrefix, location }),
    openResponseStore: (limits, scheduler, onProblem) => Promise.resolve(createRedisResponseStore(client, { keyPrefix: config.keyPrefix, limits, scheduler, onProblem })),
    health: () => (client.state === ClientState.Ready ? BackendHealth.Ok : options.onUnavailable === 'local' ? BackendHealth.Degraded : BackendHealth.Unavailable),
    async checkWritable() {
      try {
        await client.command(['SET', writeCheckKey, '1', 'PX', WRITE_CHECK_TTL_MS]);
        return { ok: true };
      } catch (error) {
        return { ok: false, problem: `Redis at ${location} is not writable (${error instanceof Error ? error.message : String(error)})` };
      }
    },
    close() {
      closing ??= (async () => {
        await limiter.close();
        await keyStore.close();
        await client.close();
      })();
      return closing;
    },
  };
}

function openKeys(client: RedisClient, config: RedisStateConfig, options: RedisBackendOptions, location: string): Promise<KeyStore> {
  const { logger } = options;
  return openRedisKeyStore(client, {
    keyPrefix: config.keyPrefix,
    location,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.reloadIntervalMs === undefined ? {} : { reloadIntervalMs: options.reloadIntervalMs }),
    ...(options.keyStoreScheduler === undefined ? {} : { scheduler: options.keyStoreScheduler }),
    onError(error) {
      // An outage is logged once by the backend; anything else (a broken record) is news.
      if (error instanceof RedisUnavailableError) logger.debug('key store refresh failed: Redis unreachable', { error: error.message });
      else logger.error('key store refresh failed; serving the keys last read', { redis: location, error: error.message });
    },
  });
}

interface FailoverParts {
  redis: Limiter;
  /** The per-instance stand-in for 'local'; null for 'refuse'. */
  local: Limiter | null;
  ready: () => boolean;
  count: (operation: StateOperation) => void;
}

/**
 * Redis cannot do the limiter's work: unreachable, or it answered with an error of
 * its own (READONLY after a failover, OOM under noeviction, BUSY, LOADING, NOPERM).
 * Either way the request meets the outage policy, never a generic 500. A script
 * refused with such an error wrote nothing.
 */
function isOutage(error: unknown): boolean {
  return error instanceof RedisUnavailableError || error instanceof RedisReplyError;
}

/** The Redis limiter, with the outage policy of the header comment around it. */
function createFailoverLimiter({ redis, local, ready, count }: FailoverParts): Limiter {
  const localPermits = new WeakSet<Permit>();

  async function admitWithoutRedis(input: AdmitInput, cause: unknown): Promise<AdmitDecision> {
    count('admit');
    if (local === null) throw new StateUnavailableError('admit', cause);
    const decision = await local.admit(input);
    if (decision.allowed) localPermits.add(decision.permit);
    return decision;
  }

  return {
    // Both limiters are built with the same lease (openRedisBackend).
    leaseMs: redis.leaseMs,

    async admit(input: AdmitInput): Promise<AdmitDecision> {
      // A key without limits never needs Redis (the Redis limiter sends nothing for it).
      if (!hasAnyLimit(input.limits)) return redis.admit(input);
      // Not ready: fail fast rather than wait for a command the client would refuse anyway.
      if (!ready()) return admitWithoutRedis(input, undefined);
      try {
        return await redis.admit(input);
      } catch (error) {
        // Lost mid-call: the script may have run, so 'local' may count this request twice; it errs on the safe side.
        if (isOutage(error)) return admitWithoutRedis(input, error);
        throw error;
      }
    },

    async settle(input: SettleInput): Promise<void> {
      // Kept in localPermits after settling (a WeakSet: no leak), so a late renew asks the local limiter, which answers false.
      if (localPermits.has(input.permit)) return (local as Limiter).settle(input);
      if (!ready()) {
        count('settle');
        return;
      }
      try {
        await redis.settle(input);
      } catch (error) {
        if (!isOutage(error)) throw error;
        count('settle');
      }
    },

    async renew(permit: Permit, nowMs: number): Promise<boolean> {
      if (localPermits.has(permit)) return (local as Limiter).renew(permit, nowMs);
      if (!ready()) {
        count('renew');
        throw new StateUnavailableError('renew');
      }
      try {
        return await redis.renew(permit, nowMs);
      } catch (error) {
        if (!isOutage(error)) throw error;
        count('renew');
        throw new StateUnavailableError('renew', error);
      }
    },

    async budgetUsed(keyId, limits, nowMs) {
      if (!ready()) {
        count('budgetUsed');
        throw new StateUnavailableError('budgetUsed');
      }
      try {
        return await redis.budgetUsed(keyId, limits, nowMs);
      } catch (error) {
        if (!isOutage(error)) throw error;
        count('budgetUsed');
        throw new StateUnavailableError('budgetUsed', error);
      }
    },

    async close() {
      await redis.close();
      await local?.close();
    },
  };
}

/**
 * Where state.redis points (`redis[s]://host:port/db`, for messages) and the client options that
 * connect there: address, password, TLS and timeouts, as the gateway connects.
 */
export function redisConnection(config: RedisStateConfig, env: NodeJS.ProcessEnv, source: string | null, settingNames: { url: string; tls: string }): { location: string; clientOptions: RedisClientOptions } {
  const address = redisAddress(config, env, source);
  const tls = address.tls ? redisTls(config, env, source) : false;
  return {
    location: `${address.tls ? 'rediss' : 'redis'}://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}/${address.db}`,
    clientOptions: {
      host: address.host,
      port: address.port,
      ...(address.username === undefined ? {} : { username: address.username }),
      ...(address.password === undefined ? {} : { password: address.password }),
      db: address.db,
      tls,
      settingNames,
      connectTimeoutMs: config.connectTimeoutMs,
      commandTimeoutMs: config.commandTimeoutMs,
    },
  };
}

/**
 * The address from state.redis: the URL, plus the password from passwordEnv or
 * passwordFile (read once, as config-loader.ts reads provider keys). A missing
 * password source is a ConfigError naming the setting.
 */
export function redisAddress(config: RedisStateConfig, env: NodeJS.ProcessEnv, source: string | null): RedisAddress {
  const password = redisPassword(config, env, source);
  try {
    let url = config.url;
    if (password !== undefined) {
      // The URL carries no password (the config refuses one); parseRedisUrl wants one beside a username.
      const parsed = new URL(url);
      parsed.password = encodeURIComponent(password);
      url = parsed.href;
    }
    const address = parseRedisUrl(url);
    return password === undefined ? address : { ...address, password };
  } catch (error) {
    if (error instanceof RedisUrlError || error instanceof TypeError) {
      throw new ConfigError(source, 'state.redis.url', error instanceof RedisUrlError ? error.message : 'is not a valid URL');
    }
    throw error;
  }
}

/**
 * The TLS material of a rediss:// URL: state.redis.tls read and checked (files
 * present, valid PEM, certificate and key matching, in date), or Node's
 * defaults (its CA roots, no client certificate) when the section is absent.
 * A bad file is a ConfigError naming its setting.
 */
export function redisTls(config: RedisStateConfig, env: NodeJS.ProcessEnv, source: string | null): RedisTlsOptions | true {
  if (config.tls === null) return true;
  return loadClientTls(source, 'state.redis.tls', config.tls, env);
}

function redisPassword(config: RedisStateConfig, env: NodeJS.ProcessEnv, source: string | null): string | undefined {
  if (config.passwordEnv !== null) {
    const value = env[config.passwordEnv];
    if (value === undefined || value === '') {
      throw new ConfigError(source, 'state.redis.passwordEnv', `environment variable ${config.passwordEnv} is not set or empty`);
    }
    return value;
  }
  if (config.passwordFile === null) return undefined;
  const at = 'state.redis.passwordFile';
  // `${NAME}` is replaced by that environment variable: "${CREDENTIALS_DIRECTORY}/redis-password".
  const expanded = config.passwordFile.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = env[name];
    if (value === undefined || value === '') throw new ConfigError(source, at, `environment variable ${name} (used in the path) is not set`);
    return value;
  });
  const file = path.resolve(source === null ? process.cwd() : path.dirname(source), expanded);
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_PASSWORD_FILE_BYTES) throw new ConfigError(source, at, `${file} is larger than ${MAX_PASSWORD_FILE_BYTES} bytes`);
    text = bytes.toString('utf8').trim();
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'cannot be read (permission denied)' : `cannot be read (${code ?? 'error'})`;
    throw new ConfigError(source, at, `${file} ${why}`);
  }
  if (text === '') throw new ConfigError(source, at, `${file} is empty`);
  if (/[\r\n\0]/.test(text)) throw new ConfigError(source, at, `${file} must hold the password on one line`);
  return text;
}
