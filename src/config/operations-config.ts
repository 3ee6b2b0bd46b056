// The operational sections of the config: the admin listener, shutdown drain,
// logging and the state backend. Same rules as the rest of the parser: unknown
// settings and bad values are errors naming their path.
import type { AdminConfig, GatewayConfig, LogLevelSetting, RedisStateConfig, StateConfig } from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HOST_NAME = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})$/;
const LOG_LEVELS: readonly LogLevelSetting[] = ['debug', 'info', 'warn', 'error'];
const HOUR_MS = 3_600_000;

export const DEFAULT_ADMIN: AdminConfig = {
  enabled: true,
  host: '127.0.0.1',
  port: 8081,
  tls: null,
  secureCookies: false,
  sessionTtlMs: 8 * HOUR_MS,
  sessionIdleMs: HOUR_MS / 2,
  allowedHosts: [],
};
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;
export const DEFAULT_REDIS_KEY_PREFIX = 'portcullis:';

type Operations = Pick<GatewayConfig, 'admin' | 'shutdown' | 'log' | 'state'>;

export function parseOperations(c: Checker, root: Obj, listen: { host: string; port: number }): Operations {
  const admin = parseAdmin(c, root['admin']);
  if (admin.enabled && admin.port !== 0 && admin.port === listen.port && admin.host === listen.host) {
    c.fail('admin.port', `must differ from listen.port (${listen.port}): the admin listener is a separate socket`);
  }
  const shutdown = { drainTimeoutMs: DEFAULT_DRAIN_TIMEOUT_MS };
  if (root['shutdown'] !== undefined) {
    const s = c.object(root['shutdown'], 'shutdown', ['drainTimeoutMs']);
    if (s['drainTimeoutMs'] !== undefined) shutdown.drainTimeoutMs = c.integer(s['drainTimeoutMs'], 'shutdown.drainTimeoutMs', 0, 600_000);
  }
  const log: { level: LogLevelSetting } = { level: 'info' };
  if (root['log'] !== undefined) {
    const l = c.object(root['log'], 'log', ['level']);
    if (l['level'] !== undefined) {
      if (!LOG_LEVELS.includes(l['level'] as LogLevelSetting)) c.fail('log.level', `must be one of ${LOG_LEVELS.map((x) => `"${x}"`).join(', ')}`);
      log.level = l['level'] as LogLevelSetting;
    }
  }
  return { admin, shutdown, log, state: parseState(c, root['state']) };
}

function parseAdmin(c: Checker, value: unknown): AdminConfig {
  const admin: AdminConfig = { ...DEFAULT_ADMIN, allowedHosts: [] };
  if (value === undefined) return admin;
  const o = c.object(value, 'admin', ['enabled', 'host', 'port', 'tls', 'secureCookies', 'sessionTtlMs', 'sessionIdleMs', 'allowedHosts']);
  if (o['enabled'] !== undefined) admin.enabled = boolean(c, o['enabled'], 'admin.enabled');
  if (o['host'] !== undefined) admin.host = c.string(o['host'], 'admin.host');
  if (o['port'] !== undefined) admin.port = c.integer(o['port'], 'admin.port', 0, 65535);
  if (o['tls'] !== undefined) {
    const t = c.object(o['tls'], 'admin.tls', ['certFile', 'keyFile']);
    admin.tls = { certFile: c.string(t['certFile'], 'admin.tls.certFile'), keyFile: c.string(t['keyFile'], 'admin.tls.keyFile') };
  }
  admin.secureCookies = o['secureCookies'] === undefined ? admin.tls !== null : boolean(c, o['secureCookies'], 'admin.secureCookies');
  if (o['sessionTtlMs'] !== undefined) admin.sessionTtlMs = c.integer(o['sessionTtlMs'], 'admin.sessionTtlMs', 60_000, 7 * 24 * HOUR_MS);
  if (o['sessionIdleMs'] !== undefined) admin.sessionIdleMs = c.integer(o['sessionIdleMs'], 'admin.sessionIdleMs', 60_000, 7 * 24 * HOUR_MS);
  if (admin.sessionIdleMs > admin.sessionTtlMs) c.fail('admin.sessionIdleMs', 'must not exceed admin.sessionTtlMs');
  if (o['allowedHosts'] !== undefined) {
    const hosts = o['allowedHosts'];
    if (!Array.isArray(hosts) || hosts.length > 32) c.fail('admin.allowedHosts', 'must be an array of at most 32 host names');
    hosts.forEach((h: unknown, i: number) => {
      if (typeof h !== 'string' || !HOST_NAME.test(h)) c.fail(`admin.allowedHosts[${i}]`, 'must be a host name or IP address without a port, like "gateway.internal"');
      admin.allowedHosts.push(h.toLowerCase());
    });
  }
  return admin;
}

function parseState(c: Checker, value: unknown): StateConfig {
  if (value === undefined) return { backend: 'memory', redis: null, onUnavailable: 'refuse' };
  const o = c.object(value, 'state', ['backend', 'redis', 'onUnavailable']);
  const backend = o['backend'] ?? 'memory';
  if (backend !== 'memory' && backend !== 'redis') c.fail('state.backend', 'must be "memory" or "redis"');
  let onUnavailable: StateConfig['onUnavailable'] = 'refuse';
  if (o['onUnavailable'] !== undefined) {
    if (o['onUnavailable'] !== 'refuse' && o['onUnavailable'] !== 'local') c.fail('state.onUnavailable', 'must be "refuse" or "local"');
    onUnavailable = o['onUnavailable'];
  }
  if (backend === 'memory') {
    if (o['redis'] !== undefined) c.fail('state.redis', 'is only used with "backend": "redis"');
    return { backend, redis: null, onUnavailable };
  }
  if (o['redis'] === undefined) c.fail('state.redis', 'is required with "backend": "redis" (at least {"url": "redis://127.0.0.1:6379"})');
  return { backend, redis: parseRedis(c, o['redis']), onUnavailable };
}

function parseRedis(c: Checker, value: unknown): RedisStateConfig {
  const at = 'state.redis';
  const o = c.object(value, at, ['url', 'passwordEnv', 'passwordFile', 'keyPrefix', 'connectTimeoutMs', 'commandTimeoutMs']);
  const url = c.string(o['url'], join(at, 'url'));
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    c.fail(join(at, 'url'), 'must be a redis://host:port[/db] URL');
  }
  if (parsed.protocol !== 'redis:') c.fail(join(at, 'url'), 'must use the redis:// scheme (TLS, rediss://, is not supported; use a local stunnel or a private network)');
  if (parsed.password !== '') c.fail(join(at, 'url'), 'must not hold the password; use passwordEnv or passwordFile');
  const passwordEnv = o['passwordEnv'] === undefined ? null : c.string(o['passwordEnv'], join(at, 'passwordEnv'));
  if (passwordEnv !== null && !ENV_NAME.test(passwordEnv)) c.fail(join(at, 'passwordEnv'), 'must be the NAME of an environment variable');
  const passwordFile = o['passwordFile'] === undefined ? null : c.string(o['passwordFile'], join(at, 'passwordFile'));
  if (passwordEnv !== null && passwordFile !== null) c.fail(join(at, 'passwordFile'), 'set passwordEnv or passwordFile, not both');
  const keyPrefix = o['keyPrefix'] === undefined ? DEFAULT_REDIS_KEY_PREFIX : c.string(o['keyPrefix'], join(at, 'keyPrefix'));
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(keyPrefix)) c.fail(join(at, 'keyPrefix'), 'use letters, digits, ":", "_", "." and "-" (at most 64)');
  const ms = (key: string, fallback: number): number => (o[key] === undefined ? fallback : c.integer(o[key], join(at, key), 50, 60_000));
  return {
    url,
    passwordEnv,
    passwordFile,
    keyPrefix,
    connectTimeoutMs: ms('connectTimeoutMs', 2000),
    commandTimeoutMs: ms('commandTimeoutMs', 1000),
  };
}

function boolean(c: Checker, value: unknown, at: string): boolean {
  if (typeof value !== 'boolean') c.fail(at, 'must be true or false');
  return value;
}
