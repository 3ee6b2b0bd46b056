// The operational sections of the config: the admin listener, shutdown drain,
// logging and the state backend. Same rules as the rest of the parser: unknown
// settings and bad values are errors naming their path.
import type { AdminConfig, GatewayConfig, ListenConfig, LogLevelSetting, RedisStateConfig, StateConfig } from './config.ts';
import { parseClientTls, parseListenerTls } from './tls-config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { parseOidc } from './oidc-config.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HOST_NAME = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})$/;
const LOG_LEVELS: readonly LogLevelSetting[] = ['debug', 'info', 'warn', 'error'];
const HOUR_MS = 3_600_000;

const DEFAULT_ADMIN: AdminConfig = {
  enabled: true,
  host: '127.0.0.1',
  port: 8081,
  tls: null,
  secureCookies: false,
  sessionTtlMs: 8 * HOUR_MS,
  sessionIdleMs: HOUR_MS / 2,
  allowedHosts: [],
  oidc: null,
};
const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;
const DEFAULT_REDIS_KEY_PREFIX = 'portcullis:';

type Operations = Pick<GatewayConfig, 'admin' | 'shutdown' | 'log' | 'state'>;

export function parseOperations(c: Checker, root: Obj, listen: Pick<ListenConfig, 'host' | 'port'>): Operations {
  const admin = parseAdmin(c, root['admin']);
  if (admin.enabled && admin.port !== 0 && admin.port === listen.port && admin.host === listen.host) {
    c.report('admin.port', { code: 'conflict', message: `must differ from listen.port (${listen.port}): the admin listener is a separate socket` });
  }
  const shutdown = { drainTimeoutMs: DEFAULT_DRAIN_TIMEOUT_MS };
  const s = root['shutdown'] === undefined ? undefined : c.object(root['shutdown'], 'shutdown', ['drainTimeoutMs']);
  if (s !== undefined) shutdown.drainTimeoutMs = c.int(s, 'drainTimeoutMs', 'shutdown', DEFAULT_DRAIN_TIMEOUT_MS, 0, 600_000);
  const log: { level: LogLevelSetting } = { level: 'info' };
  const l = root['log'] === undefined ? undefined : c.object(root['log'], 'log', ['level']);
  if (l !== undefined) log.level = c.optional(l, 'level', 'log', log.level, (v, at) => c.oneOf(v, at, LOG_LEVELS));
  return { admin, shutdown, log, state: parseState(c, root['state']) };
}

function parseAdmin(c: Checker, value: unknown): AdminConfig {
  const admin: AdminConfig = { ...DEFAULT_ADMIN, allowedHosts: [] };
  if (value === undefined) return admin;
  const o = c.object(value, 'admin', ['enabled', 'host', 'port', 'tls', 'secureCookies', 'sessionTtlMs', 'sessionIdleMs', 'allowedHosts', 'oidc']);
  if (o === undefined) return admin;
  const bool = (v: unknown, at: string): boolean | undefined => c.boolean(v, at);
  admin.enabled = c.optional(o, 'enabled', 'admin', admin.enabled, bool);
  admin.host = c.optional(o, 'host', 'admin', admin.host, (v, at) => c.string(v, at));
  admin.port = c.int(o, 'port', 'admin', admin.port, 0, 65535);
  if (o['tls'] !== undefined) admin.tls = parseListenerTls(c, o['tls'], 'admin.tls') ?? null;
  admin.secureCookies = c.optional(o, 'secureCookies', 'admin', o['tls'] !== undefined, bool);
  admin.sessionTtlMs = c.int(o, 'sessionTtlMs', 'admin', admin.sessionTtlMs, 60_000, 7 * 24 * HOUR_MS);
  admin.sessionIdleMs = c.int(o, 'sessionIdleMs', 'admin', admin.sessionIdleMs, 60_000, 7 * 24 * HOUR_MS);
  if (admin.sessionIdleMs > admin.sessionTtlMs) c.report('admin.sessionIdleMs', { code: 'conflict', message: 'must not exceed admin.sessionTtlMs' });
  if (o['allowedHosts'] !== undefined) admin.allowedHosts = parseAllowedHosts(c, o['allowedHosts']);
  // Single sign-on; its redirect URL must name a host this listener answers for.
  if (o['oidc'] !== undefined) admin.oidc = parseOidc(c, o['oidc'], adminHostNames(admin));
  return admin;
}

/**
 * The host names the admin listener answers for: the loopback names, admin.host
 * (unless a wildcard; an IPv6 address in brackets, as a Host header names it)
 * and admin.allowedHosts. serve gives these to the admin server's host check.
 */
export function adminHostNames(admin: AdminConfig): string[] {
  const own = admin.host === '0.0.0.0' || admin.host === '::' || admin.host === '' ? [] : [admin.host.includes(':') ? `[${admin.host}]` : admin.host];
  return [...new Set(['localhost', '127.0.0.1', '[::1]', ...own, ...admin.allowedHosts].map((h) => h.toLowerCase()))];
}

function parseAllowedHosts(c: Checker, hosts: unknown): string[] {
  if (!Array.isArray(hosts) || hosts.length > 32) {
    return c.report('admin.allowedHosts', { code: 'not_array', message: 'must be an array of at most 32 host names' }) ?? [];
  }
  const allowed: string[] = [];
  hosts.forEach((h: unknown, i: number) => {
    if (typeof h === 'string' && HOST_NAME.test(h)) allowed.push(h.toLowerCase());
    else c.report(`admin.allowedHosts[${i}]`, { code: 'invalid_value', message: 'must be a host name or IP address without a port, like "gateway.internal"' });
  });
  return allowed;
}

function parseState(c: Checker, value: unknown): StateConfig {
  const state: StateConfig = { backend: 'memory', redis: null, onUnavailable: 'refuse' };
  if (value === undefined) return state;
  const o = c.object(value, 'state', ['backend', 'redis', 'onUnavailable']);
  if (o === undefined) return state;
  // undefined: a wrong backend, already reported; whether "redis" belongs cannot be judged.
  const backend = o['backend'] === undefined ? 'memory' : c.oneOf(o['backend'], 'state.backend', ['memory', 'redis'] as const);
  state.onUnavailable = c.optional(o, 'onUnavailable', 'state', state.onUnavailable, (v, at) => c.oneOf(v, at, ['refuse', 'local'] as const));
  if (backend === 'redis') {
    if (o['redis'] === undefined) c.report('state.redis', { code: 'required', hint: 'with "backend": "redis" (at least {"url": "redis://127.0.0.1:6379"})' });
    else state.redis = parseRedis(c, o['redis']);
    state.backend = 'redis';
  } else if (backend === 'memory' && o['redis'] !== undefined) {
    c.report('state.redis', { code: 'invalid_value', message: 'is only used with "backend": "redis"' });
  }
  return state;
}

function parseRedis(c: Checker, value: unknown): RedisStateConfig | null {
  const at = 'state.redis';
  const o = c.object(value, at, ['url', 'passwordEnv', 'passwordFile', 'keyPrefix', 'connectTimeoutMs', 'commandTimeoutMs', 'tls']);
  if (o === undefined) return null;
  const url = checkRedisUrl(c, o['url'], join(at, 'url'));
  const passwordEnv = c.optional(o, 'passwordEnv', at, null, (v, vat) => {
    const name = c.string(v, vat);
    if (name === undefined || ENV_NAME.test(name)) return name;
    return c.report(vat, { code: 'invalid_value', message: 'must be the NAME of an environment variable' });
  });
  const passwordFile = c.optional(o, 'passwordFile', at, null, (v, vat) => c.string(v, vat));
  if (o['passwordEnv'] !== undefined && o['passwordFile'] !== undefined) {
    c.report(join(at, 'passwordFile'), { code: 'conflict', message: 'set passwordEnv or passwordFile, not both' });
  }
  const keyPrefix = c.optional(o, 'keyPrefix', at, DEFAULT_REDIS_KEY_PREFIX, (v, vat) => {
    const prefix = c.string(v, vat);
    if (prefix === undefined || /^[A-Za-z0-9:_.-]{1,64}$/.test(prefix)) return prefix;
    return c.report(vat, { code: 'invalid_value', message: 'use letters, digits, ":", "_", "." and "-" (at most 64)' });
  });
  let tls: RedisStateConfig['tls'] = null;
  if (o['tls'] !== undefined) {
    tls = parseClientTls(c, o['tls'], join(at, 'tls')) ?? null;
    if (redisScheme(url) === 'redis:') c.report(join(at, 'tls'), { code: 'conflict', message: 'is only used with a rediss:// url (Redis over TLS); change the url\'s scheme to rediss://' });
  }
  return {
    url,
    passwordEnv,
    passwordFile,
    keyPrefix,
    connectTimeoutMs: c.int(o, 'connectTimeoutMs', at, 2000, 50, 60_000),
    commandTimeoutMs: c.int(o, 'commandTimeoutMs', at, 1000, 50, 60_000),
    tls,
  };
}

/** The URL's scheme as URL reads it (lower case: "REDIS://" is redis:), or null. */
function redisScheme(url: string): string | null {
  try {
    return new URL(url).protocol;
  } catch {
    return null;
  }
}

function checkRedisUrl(c: Checker, value: unknown, at: string): string {
  const url = c.string(value, at);
  if (url === undefined) return '';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return c.report(at, { code: 'invalid_value', message: 'must be a redis://host:port[/db] or rediss://host:port[/db] URL' }) ?? url;
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    c.report(at, { code: 'invalid_value', message: 'must use the redis:// scheme, or rediss:// for Redis over TLS' });
  } else if (parsed.password !== '') {
    c.report(at, { code: 'invalid_value', message: 'must not hold the password; use passwordEnv or passwordFile' });
  }
  return url;
}
