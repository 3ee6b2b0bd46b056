// The settings every HTTP upstream shares (openai and anthropic alike): where
// it is, how its key is found, extra headers, deadlines, retries and breaker.
// Checked into the collector like the rest of the config; the provider table
// (./provider-types.ts) adds what each type has of its own.
import type { TlsClientConfig, UpstreamPolicy, UpstreamTransportName } from './config.ts';
import { parseClientTls } from './tls-config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { parseBaseUrl, type BaseUrlRules } from './base-url.ts';
import { DEFAULT_POLICY } from './provider-defaults.ts';

export const UPSTREAM_SETTINGS = [
  'baseUrl',
  'apiKeyEnv',
  'apiKeyFile',
  'headers',
  'connectTimeoutMs',
  'firstByteTimeoutMs',
  'idleTimeoutMs',
  'timeoutMs',
  'retry',
  'circuitBreaker',
  'transport',
  'tls',
  'proxy',
] as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Headers the gateway sets itself; a config must not override them.
const DEFAULT_KEY_HEADER = 'authorization';
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host', 'x-request-id', 'accept', 'transfer-encoding', 'connection']);

interface UpstreamOptions {
  baseUrl: string;
  apiKeyEnv: string | null;
  apiKeyFile: string | null;
  headers: Record<string, string>;
  policy: UpstreamPolicy;
  transport: UpstreamTransportName | null;
  tls: TlsClientConfig | null;
  proxy: string | null;
}

const TRANSPORTS: readonly UpstreamTransportName[] = ['fetch', 'node'];

/** `defaultBaseUrl` undefined: the setting is required. `rules`: what the
 * type's adapter appends to baseUrl, and where a key belongs instead of its query. */
export function parseUpstreamOptions(c: Checker, o: Obj, at: string, defaultBaseUrl: string | undefined, rules: BaseUrlRules): UpstreamOptions {
  const options: UpstreamOptions = {
    baseUrl: parseBaseUrl(c, o['baseUrl'] ?? defaultBaseUrl, join(at, 'baseUrl'), rules),
    ...parseCredentials(c, o, at),
    headers: parseHeaders(c, o['headers'], join(at, 'headers')),
    policy: parsePolicy(c, o, at),
    ...parseConnection(c, o, at),
  };
  // TLS settings for a plain-http upstream would be silently unused.
  if (options.tls !== null && typeof options.baseUrl === 'string' && options.baseUrl.toLowerCase().startsWith('http:')) {
    c.report(join(at, 'tls'), { code: 'conflict', message: 'applies only to an https:// baseUrl: remove tls, or use https' });
  }
  return options;
}

/**
 * transport, tls and proxy. The built-in fetch takes no per-call TLS settings
 * and no proxy on any supported Node line (its undici Agent is not exposed),
 * so those need "transport": "node"; asking fetch for them is refused, never ignored.
 */
function parseConnection(c: Checker, o: Obj, at: string): Pick<UpstreamOptions, 'transport' | 'tls' | 'proxy'> {
  const transport = c.optional(o, 'transport', at, null as UpstreamTransportName | null, (v, vat) => c.oneOf(v, vat, TRANSPORTS));
  const tls = o['tls'] === undefined ? null : (parseClientTls(c, o['tls'], join(at, 'tls')) ?? null);
  const proxy = c.optional(o, 'proxy', at, null, (v, vat) => parseProxy(c, v, vat));
  // A wrong transport is its own problem: whether tls or proxy fit it cannot be judged.
  const transportKnown = o['transport'] === undefined || TRANSPORTS.includes(o['transport'] as UpstreamTransportName);
  if (transport !== 'node' && transportKnown) {
    const needsNode = [o['tls'] !== undefined ? 'tls' : null, proxy !== null && proxy !== 'none' ? 'proxy' : null];
    for (const setting of needsNode) {
      if (setting === null) continue;
      c.report(join(at, setting), { code: 'conflict', message: 'needs "transport": "node": the built-in fetch cannot take per-upstream TLS settings or a proxy on any supported Node.js line' });
    }
  }
  return { transport, tls, proxy };
}

/** "none", or the proxy's http://host:port URL (no path; credentials come from the environment's proxy variables only). */
function parseProxy(c: Checker, value: unknown, at: string): string | undefined {
  const text = c.string(value, at);
  if (text === undefined || text === 'none') return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return c.report(at, { code: 'invalid_value', message: 'must be "none" or a proxy URL such as "http://proxy.internal:3128"' });
  }
  if (url.protocol !== 'http:') return c.report(at, { code: 'invalid_value', message: 'must be an http:// proxy URL (the proxy is reached over plain HTTP; HTTPS upstreams go through a CONNECT tunnel inside it)' });
  if (url.username !== '' || url.password !== '') return c.report(at, { code: 'invalid_value', message: 'must not hold credentials: the config file is no place for a secret; give a proxy that needs a password through HTTPS_PROXY (or http_proxy) in the environment and leave "proxy" unset' });
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') return c.report(at, { code: 'invalid_value', message: 'must be just scheme, host and port, e.g. "http://proxy.internal:3128"' });
  return text;
}

function parseCredentials(c: Checker, o: Obj, at: string): { apiKeyEnv: string | null; apiKeyFile: string | null } {
  const apiKeyEnv = c.optional(o, 'apiKeyEnv', at, null, (v, vat) => {
    const name = c.string(v, vat);
    if (name === undefined || ENV_NAME.test(name)) return name;
    return c.report(vat, { code: 'invalid_value', message: 'must be the NAME of an environment variable (the key itself never goes in the config)' });
  });
  const apiKeyFile = c.optional(o, 'apiKeyFile', at, null, (v, vat) => c.string(v, vat));
  if (o['apiKeyEnv'] !== undefined && o['apiKeyFile'] !== undefined) {
    c.report(join(at, 'apiKeyFile'), { code: 'conflict', message: 'set apiKeyEnv or apiKeyFile, not both' });
  }
  return { apiKeyEnv, apiKeyFile };
}

/** The header that carries the upstream key, lower case: `authorization` (the
 * default, sent as `Bearer <key>`) or another name (Azure OpenAI's `api-key`),
 * which gets the key alone. Checked against the parsed `headers`: the key's
 * header is not also one of them. */
export function parseKeyHeader(c: Checker, o: Obj, at: string, headers: Readonly<Record<string, string>>): string {
  const kat = join(at, 'apiKeyHeader');
  const name = c.optional(o, 'apiKeyHeader', at, DEFAULT_KEY_HEADER, (v, vat) => {
    const text = c.string(v, vat);
    if (text === undefined) return undefined;
    if (!HEADER_NAME.test(text)) return c.report(vat, { code: 'invalid_value', message: 'must be an HTTP header name, e.g. "api-key"' });
    const lower = text.toLowerCase();
    if (lower !== DEFAULT_KEY_HEADER && RESERVED_HEADERS.has(lower)) {
      return c.report(vat, { code: 'reserved', message: `names a header the gateway sets itself; the key goes in "${DEFAULT_KEY_HEADER}" (the default) or a header of its own such as "api-key"` });
    }
    return lower;
  });
  if (o['apiKeyHeader'] !== undefined && o['apiKeyEnv'] === undefined && o['apiKeyFile'] === undefined) {
    c.report(kat, { code: 'conflict', message: 'names the header for the upstream key, but no key is configured: set apiKeyEnv or apiKeyFile' });
  }
  if (name !== DEFAULT_KEY_HEADER && headers[name] !== undefined) {
    const header = Object.keys((o['headers'] ?? {}) as Obj).find((h) => h.toLowerCase() === name) ?? name;
    c.report(join(join(at, 'headers'), header), { code: 'conflict', message: 'is the header apiKeyHeader sends the upstream key in; the key comes from apiKeyEnv or apiKeyFile, not from the config file' });
  }
  return name;
}

function parseHeaders(c: Checker, value: unknown, at: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const [name, v] of Object.entries(c.map(value, at) ?? {})) {
    const hat = join(at, name);
    if (!HEADER_NAME.test(name)) c.report(hat, { code: 'invalid_name', message: 'is not a valid HTTP header name' });
    else if (RESERVED_HEADERS.has(name.toLowerCase())) c.report(hat, { code: 'reserved', message: 'is set by the gateway itself and cannot be configured' });
    const text = c.string(v, hat);
    if (text === undefined) continue;
    if (/[\r\n\0]/.test(text)) c.report(hat, { code: 'invalid_value', message: 'must not contain CR, LF or NUL' });
    headers[name.toLowerCase()] = text;
  }
  return headers;
}

function parsePolicy(c: Checker, o: Obj, at: string): UpstreamPolicy {
  const d = DEFAULT_POLICY;
  const policy: UpstreamPolicy = {
    connectTimeoutMs: c.int(o, 'connectTimeoutMs', at, d.connectTimeoutMs, 100, 300_000),
    firstByteTimeoutMs: c.int(o, 'firstByteTimeoutMs', at, d.firstByteTimeoutMs, 100, 300_000),
    idleTimeoutMs: c.int(o, 'idleTimeoutMs', at, d.idleTimeoutMs, 100, 300_000),
    timeoutMs: c.int(o, 'timeoutMs', at, d.timeoutMs, 100, 3_600_000),
    retry: { ...d.retry },
    circuitBreaker: { ...d.circuitBreaker },
  };
  const rat = join(at, 'retry');
  const r = o['retry'] === undefined ? undefined : c.object(o['retry'], rat, ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs']);
  if (r !== undefined) {
    policy.retry.maxAttempts = c.int(r, 'maxAttempts', rat, d.retry.maxAttempts, 1, 10);
    policy.retry.baseDelayMs = c.int(r, 'baseDelayMs', rat, d.retry.baseDelayMs, 0, 60_000);
    policy.retry.maxDelayMs = c.int(r, 'maxDelayMs', rat, d.retry.maxDelayMs, 0, 300_000);
    policy.retry.maxRetryAfterMs = c.int(r, 'maxRetryAfterMs', rat, d.retry.maxRetryAfterMs, 0, 300_000);
    if (policy.retry.maxDelayMs < policy.retry.baseDelayMs) c.report(join(rat, 'maxDelayMs'), { code: 'conflict', message: 'must not be below retry.baseDelayMs' });
  }
  const bat = join(at, 'circuitBreaker');
  const b = o['circuitBreaker'] === undefined ? undefined : c.object(o['circuitBreaker'], bat, ['failureThreshold', 'openMs']);
  if (b !== undefined) {
    policy.circuitBreaker.failureThreshold = c.int(b, 'failureThreshold', bat, d.circuitBreaker.failureThreshold, 1, 1000);
    policy.circuitBreaker.openMs = c.int(b, 'openMs', bat, d.circuitBreaker.openMs, 100, 3_600_000);
  }
  return policy;
}
