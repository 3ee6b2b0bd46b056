// Pure check of a parsed config value against the schema in config.ts.
// Unknown keys are errors (a typo must not silently fall back to a default).
import path from 'node:path';
import {
  AUTO_ALIAS,
  ConfigError,
  DEFAULT_LIMITS,
  type AliasConfig,
  type GatewayConfig,
  type ProviderConfig,
  type ServerLimits,
} from './config.ts';

type Obj = Record<string, unknown>;

const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Headers the gateway sets itself; a config must not override them.
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host', 'x-request-id', 'accept', 'transfer-encoding', 'connection']);

class Checker {
  readonly source: string | null;
  constructor(source: string | null) {
    this.source = source;
  }

  fail(at: string, problem: string): never {
    throw new ConfigError(this.source, at, problem);
  }

  object(value: unknown, at: string, allowed: readonly string[]): Obj {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(at, 'must be an object');
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.fail(join(at, key), `unknown setting (allowed here: ${allowed.join(', ')})`);
    }
    return value as Obj;
  }

  map(value: unknown, at: string): Obj {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(at, 'must be an object');
    return value as Obj;
  }

  string(value: unknown, at: string): string {
    if (typeof value !== 'string' || value.length === 0) this.fail(at, 'must be a non-empty string');
    return value;
  }

  integer(value: unknown, at: string, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(at, `must be an integer from ${min} to ${max}`);
    }
    return value;
  }
}

function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

/**
 * Checks `value` (a parsed config file) and returns the full config with
 * defaults filled in. `baseDir` resolves a relative `dataDir`.
 */
export function parseConfig(value: unknown, source: string | null, baseDir: string): GatewayConfig {
  const c = new Checker(source);
  const root = c.object(value, '', ['$schema', 'listen', 'dataDir', 'limits', 'providers', 'aliases', 'auto']);

  const listen = { host: '127.0.0.1', port: 8080 };
  if (root['listen'] !== undefined) {
    const l = c.object(root['listen'], 'listen', ['host', 'port']);
    if (l['host'] !== undefined) listen.host = c.string(l['host'], 'listen.host');
    if (l['port'] !== undefined) listen.port = c.integer(l['port'], 'listen.port', 0, 65535);
  }

  const dataDir = path.resolve(baseDir, root['dataDir'] === undefined ? './data' : c.string(root['dataDir'], 'dataDir'));
  const limits = parseLimits(c, root['limits']);

  if (root['providers'] === undefined) c.fail('providers', 'is required');
  const providersIn = c.map(root['providers'], 'providers');
  const providers: Record<string, ProviderConfig> = {};
  for (const [name, p] of Object.entries(providersIn)) {
    if (!PROVIDER_NAME.test(name)) c.fail(join('providers', name), 'provider names use letters, digits, ".", "_" and "-" (at most 64)');
    providers[name] = parseProvider(c, p, join('providers', name));
  }

  if (root['aliases'] === undefined) c.fail('aliases', 'is required');
  const aliasesIn = c.map(root['aliases'], 'aliases');
  const aliases: Record<string, AliasConfig> = {};
  for (const [name, a] of Object.entries(aliasesIn)) {
    const at = join('aliases', name);
    if (name === AUTO_ALIAS) c.fail(at, `'${AUTO_ALIAS}' is reserved for automatic routing; configure it under "auto"`);
    if (!ALIAS_NAME.test(name)) c.fail(at, 'alias names use letters, digits, ".", "_", ":" and "-" (at most 64)');
    const o = c.object(a, at, ['provider', 'model', 'maxOutputTokens']);
    const provider = c.string(o['provider'], join(at, 'provider'));
    if (!Object.hasOwn(providers, provider)) c.fail(join(at, 'provider'), `names provider '${provider}', which is not defined under "providers"`);
    const model = o['model'] === undefined ? name : c.string(o['model'], join(at, 'model'));
    const maxOutputTokens = o['maxOutputTokens'] === undefined ? null : c.integer(o['maxOutputTokens'], join(at, 'maxOutputTokens'), 1, 10_000_000);
    aliases[name] = { provider, model, maxOutputTokens };
  }
  if (Object.keys(aliases).length === 0) c.fail('aliases', 'must define at least one alias');

  let autoDefault: string;
  if (root['auto'] === undefined) {
    autoDefault = Object.keys(aliases)[0] as string;
  } else {
    const a = c.object(root['auto'], 'auto', ['default']);
    autoDefault = c.string(a['default'], 'auto.default');
    if (!Object.hasOwn(aliases, autoDefault)) c.fail('auto.default', `names alias '${autoDefault}', which is not defined under "aliases"`);
  }

  return { source, listen, dataDir, limits, providers, aliases, auto: { default: autoDefault } };
}

function parseLimits(c: Checker, value: unknown): ServerLimits {
  const limits = { ...DEFAULT_LIMITS };
  if (value === undefined) return limits;
  const keys = Object.keys(DEFAULT_LIMITS) as (keyof ServerLimits)[];
  const o = c.object(value, 'limits', keys);
  const bounds: Record<keyof ServerLimits, [number, number]> = {
    maxBodyBytes: [1024, 64 * 1024 * 1024],
    maxHeaderBytes: [1024, 64 * 1024],
    headersTimeoutMs: [1000, 120_000],
    requestTimeoutMs: [1000, 600_000],
    keepAliveTimeoutMs: [0, 600_000],
    maxJsonDepth: [8, 1000],
    maxStringBytes: [1024, 64 * 1024 * 1024],
    maxMembers: [300, 1_000_000],
  };
  for (const key of keys) {
    if (o[key] !== undefined) limits[key] = c.integer(o[key], `limits.${key}`, bounds[key][0], bounds[key][1]);
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) c.fail('limits.headersTimeoutMs', 'must not exceed limits.requestTimeoutMs');
  return limits;
}

function parseProvider(c: Checker, value: unknown, at: string): ProviderConfig {
  const type = c.map(value, at)['type'];
  if (type === 'demo') {
    const o = c.object(value, at, ['type', 'delayMs']);
    return { type: 'demo', delayMs: o['delayMs'] === undefined ? 0 : c.integer(o['delayMs'], join(at, 'delayMs'), 0, 10_000) };
  }
  if (type !== 'openai') c.fail(join(at, 'type'), `must be "openai" or "demo"`);
  const o = c.object(value, at, ['type', 'baseUrl', 'apiKeyEnv', 'headers', 'maxTokensParam', 'timeoutMs', 'firstByteTimeoutMs']);
  const baseUrl = c.string(o['baseUrl'], join(at, 'baseUrl'));
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    c.fail(join(at, 'baseUrl'), 'must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') c.fail(join(at, 'baseUrl'), 'must be an absolute http:// or https:// URL');
  if (url.username !== '' || url.password !== '') c.fail(join(at, 'baseUrl'), 'must not contain credentials; use apiKeyEnv');
  if (url.search !== '' || url.hash !== '') c.fail(join(at, 'baseUrl'), 'must not contain a query or fragment');

  let apiKeyEnv: string | null = null;
  if (o['apiKeyEnv'] !== undefined) {
    apiKeyEnv = c.string(o['apiKeyEnv'], join(at, 'apiKeyEnv'));
    if (!ENV_NAME.test(apiKeyEnv)) c.fail(join(at, 'apiKeyEnv'), 'must be the NAME of an environment variable (the key itself never goes in the config)');
  }

  const headers: Record<string, string> = {};
  if (o['headers'] !== undefined) {
    for (const [name, v] of Object.entries(c.map(o['headers'], join(at, 'headers')))) {
      const hat = join(join(at, 'headers'), name);
      if (!HEADER_NAME.test(name)) c.fail(hat, 'is not a valid HTTP header name');
      if (RESERVED_HEADERS.has(name.toLowerCase())) c.fail(hat, 'is set by the gateway itself and cannot be configured');
      const text = c.string(v, hat);
      if (/[\r\n\0]/.test(text)) c.fail(hat, 'must not contain CR, LF or NUL');
      headers[name.toLowerCase()] = text;
    }
  }

  let maxTokensParam: 'max_tokens' | 'max_completion_tokens' = 'max_tokens';
  if (o['maxTokensParam'] !== undefined) {
    if (o['maxTokensParam'] !== 'max_tokens' && o['maxTokensParam'] !== 'max_completion_tokens') {
      c.fail(join(at, 'maxTokensParam'), 'must be "max_tokens" or "max_completion_tokens"');
    }
    maxTokensParam = o['maxTokensParam'];
  }
  const timeoutMs = o['timeoutMs'] === undefined ? 600_000 : c.integer(o['timeoutMs'], join(at, 'timeoutMs'), 100, 3_600_000);
  const firstByteTimeoutMs =
    o['firstByteTimeoutMs'] === undefined ? 60_000 : c.integer(o['firstByteTimeoutMs'], join(at, 'firstByteTimeoutMs'), 100, 3_600_000);

  return { type: 'openai', baseUrl: baseUrl.replace(/\/+$/, ''), apiKeyEnv, headers, maxTokensParam, timeoutMs, firstByteTimeoutMs };
}
