// Pure check of a parsed config value against the schema in config.ts.
// Unknown keys are errors (a typo must not silently fall back to a default).
import path from 'node:path';
import {
  AUTO_ALIAS,
  CAPABILITIES,
  ConfigError,
  DEFAULT_LIMITS,
  type AliasConfig,
  type AutoCondition,
  type AutoRule,
  type Capability,
  type GatewayConfig,
  type MaxTokensParam,
  type ProviderConfig,
  type ServerLimits,
  type TargetConfig,
  type UpstreamPolicy,
} from './config.ts';
import { Checker, join, type Obj } from './config-checker.ts';
import { parseOperations } from './operations-config.ts';

const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Headers the gateway sets itself; a config must not override them.
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host', 'x-request-id', 'accept', 'transfer-encoding', 'connection']);

/**
 * Checks `value` (a parsed config file) and returns the full config with
 * defaults filled in. `baseDir` resolves a relative `dataDir`.
 */
export function parseConfig(value: unknown, source: string | null, baseDir: string): GatewayConfig {
  const c = new Checker(source);
  const root = c.object(value, '', ['$schema', 'listen', 'admin', 'shutdown', 'log', 'state', 'dataDir', 'limits', 'providers', 'aliases', 'auto']);

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
    aliases[name] = parseAlias(c, a, at, name, providers);
  }
  if (Object.keys(aliases).length === 0) c.fail('aliases', 'must define at least one alias');

  const auto = parseAuto(c, root['auto'], aliases);
  const operations = parseOperations(c, root, listen);
  return { source, listen, ...operations, dataDir, limits, providers, aliases, auto };
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
  if (type !== 'openai' && type !== 'anthropic') c.fail(join(at, 'type'), 'must be "openai", "anthropic" or "demo"');
  const common = ['type', 'baseUrl', 'apiKeyEnv', 'apiKeyFile', 'headers', 'connectTimeoutMs', 'firstByteTimeoutMs', 'idleTimeoutMs', 'timeoutMs', 'retry', 'circuitBreaker'];
  const o = c.object(value, at, type === 'openai' ? [...common, 'maxTokensParam'] : [...common, 'version']);
  const base = {
    baseUrl: parseBaseUrl(c, o['baseUrl'] ?? (type === 'anthropic' ? ANTHROPIC_BASE_URL : undefined), join(at, 'baseUrl')),
    ...parseCredentials(c, o, at),
    headers: parseHeaders(c, o['headers'], join(at, 'headers')),
    policy: parsePolicy(c, o, at),
  };
  if (type === 'anthropic') {
    const version = o['version'] === undefined ? '2023-06-01' : c.string(o['version'], join(at, 'version'));
    if (!/^\d{4}-\d{2}-\d{2}$/.test(version)) c.fail(join(at, 'version'), 'must be an anthropic-version date such as "2023-06-01"');
    return { type: 'anthropic', ...base, version };
  }
  let maxTokensParam: MaxTokensParam = 'max_tokens';
  if (o['maxTokensParam'] !== undefined) {
    if (o['maxTokensParam'] !== 'max_tokens' && o['maxTokensParam'] !== 'max_completion_tokens') {
      c.fail(join(at, 'maxTokensParam'), 'must be "max_tokens" or "max_completion_tokens"');
    }
    maxTokensParam = o['maxTokensParam'];
  }
  return { type: 'openai', ...base, maxTokensParam };
}

const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

function parseBaseUrl(c: Checker, value: unknown, at: string): string {
  const baseUrl = c.string(value, at);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    c.fail(at, 'must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') c.fail(at, 'must be an absolute http:// or https:// URL');
  if (url.username !== '' || url.password !== '') c.fail(at, 'must not contain credentials; use apiKeyEnv or apiKeyFile');
  if (url.search !== '' || url.hash !== '') c.fail(at, 'must not contain a query or fragment');
  return baseUrl.replace(/\/+$/, '');
}

function parseCredentials(c: Checker, o: Obj, at: string): { apiKeyEnv: string | null; apiKeyFile: string | null } {
  let apiKeyEnv: string | null = null;
  let apiKeyFile: string | null = null;
  if (o['apiKeyEnv'] !== undefined) {
    apiKeyEnv = c.string(o['apiKeyEnv'], join(at, 'apiKeyEnv'));
    if (!ENV_NAME.test(apiKeyEnv)) c.fail(join(at, 'apiKeyEnv'), 'must be the NAME of an environment variable (the key itself never goes in the config)');
  }
  if (o['apiKeyFile'] !== undefined) {
    apiKeyFile = c.string(o['apiKeyFile'], join(at, 'apiKeyFile'));
    if (apiKeyEnv !== null) c.fail(join(at, 'apiKeyFile'), 'set apiKeyEnv or apiKeyFile, not both');
  }
  return { apiKeyEnv, apiKeyFile };
}

function parseHeaders(c: Checker, value: unknown, at: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const [name, v] of Object.entries(c.map(value, at))) {
    const hat = join(at, name);
    if (!HEADER_NAME.test(name)) c.fail(hat, 'is not a valid HTTP header name');
    if (RESERVED_HEADERS.has(name.toLowerCase())) c.fail(hat, 'is set by the gateway itself and cannot be configured');
    const text = c.string(v, hat);
    if (/[\r\n\0]/.test(text)) c.fail(hat, 'must not contain CR, LF or NUL');
    headers[name.toLowerCase()] = text;
  }
  return headers;
}

export const DEFAULT_POLICY: UpstreamPolicy = {
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  timeoutMs: 600_000,
  retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 30_000 },
  circuitBreaker: { failureThreshold: 5, openMs: 30_000 },
};

function parsePolicy(c: Checker, o: Obj, at: string): UpstreamPolicy {
  const d = DEFAULT_POLICY;
  const ms = (key: string, fallback: number, max = 3_600_000): number =>
    o[key] === undefined ? fallback : c.integer(o[key], join(at, key), 100, max);
  const policy: UpstreamPolicy = {
    connectTimeoutMs: ms('connectTimeoutMs', d.connectTimeoutMs, 300_000),
    firstByteTimeoutMs: ms('firstByteTimeoutMs', d.firstByteTimeoutMs, 300_000),
    idleTimeoutMs: ms('idleTimeoutMs', d.idleTimeoutMs, 300_000),
    timeoutMs: ms('timeoutMs', d.timeoutMs),
    retry: { ...d.retry },
    circuitBreaker: { ...d.circuitBreaker },
  };
  if (o['retry'] !== undefined) {
    const rat = join(at, 'retry');
    const r = c.object(o['retry'], rat, ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs']);
    if (r['maxAttempts'] !== undefined) policy.retry.maxAttempts = c.integer(r['maxAttempts'], join(rat, 'maxAttempts'), 1, 10);
    if (r['baseDelayMs'] !== undefined) policy.retry.baseDelayMs = c.integer(r['baseDelayMs'], join(rat, 'baseDelayMs'), 0, 60_000);
    if (r['maxDelayMs'] !== undefined) policy.retry.maxDelayMs = c.integer(r['maxDelayMs'], join(rat, 'maxDelayMs'), 0, 300_000);
    if (r['maxRetryAfterMs'] !== undefined) policy.retry.maxRetryAfterMs = c.integer(r['maxRetryAfterMs'], join(rat, 'maxRetryAfterMs'), 0, 300_000);
    if (policy.retry.maxDelayMs < policy.retry.baseDelayMs) c.fail(join(rat, 'maxDelayMs'), 'must not be below retry.baseDelayMs');
  }
  if (o['circuitBreaker'] !== undefined) {
    const bat = join(at, 'circuitBreaker');
    const b = c.object(o['circuitBreaker'], bat, ['failureThreshold', 'openMs']);
    if (b['failureThreshold'] !== undefined) policy.circuitBreaker.failureThreshold = c.integer(b['failureThreshold'], join(bat, 'failureThreshold'), 1, 1000);
    if (b['openMs'] !== undefined) policy.circuitBreaker.openMs = c.integer(b['openMs'], join(bat, 'openMs'), 100, 3_600_000);
  }
  return policy;
}

function parseAlias(c: Checker, value: unknown, at: string, name: string, providers: Record<string, ProviderConfig>): AliasConfig {
  const o = c.object(value, at, ['provider', 'model', 'targets', 'maxOutputTokens', 'contextWindow', 'capabilities']);
  let targets: TargetConfig[];
  if (o['targets'] !== undefined) {
    if (o['provider'] !== undefined || o['model'] !== undefined) c.fail(at, 'give either "provider" (and "model") or "targets", not both');
    if (!Array.isArray(o['targets']) || o['targets'].length === 0) c.fail(join(at, 'targets'), 'must be a non-empty array');
    if (o['targets'].length > 16) c.fail(join(at, 'targets'), 'must have at most 16 entries');
    targets = o['targets'].map((t: unknown, i: number) => parseTarget(c, t, `${join(at, 'targets')}[${i}]`, name, providers));
  } else {
    if (o['provider'] === undefined) c.fail(join(at, 'provider'), 'is required (or give "targets")');
    targets = [parseTarget(c, { provider: o['provider'], ...(o['model'] === undefined ? {} : { model: o['model'] }) }, at, name, providers)];
  }
  const maxOutputTokens = o['maxOutputTokens'] === undefined ? null : c.integer(o['maxOutputTokens'], join(at, 'maxOutputTokens'), 1, 10_000_000);
  const contextWindow = o['contextWindow'] === undefined ? null : c.integer(o['contextWindow'], join(at, 'contextWindow'), 256, 100_000_000);
  const capabilities: Capability[] = [];
  if (o['capabilities'] !== undefined) {
    if (!Array.isArray(o['capabilities'])) c.fail(join(at, 'capabilities'), `must be an array of ${CAPABILITIES.map((x) => `"${x}"`).join(', ')}`);
    o['capabilities'].forEach((cap: unknown, i: number) => {
      if (!CAPABILITIES.includes(cap as Capability)) c.fail(`${join(at, 'capabilities')}[${i}]`, `must be one of ${CAPABILITIES.map((x) => `"${x}"`).join(', ')}`);
      if (!capabilities.includes(cap as Capability)) capabilities.push(cap as Capability);
    });
  }
  return { targets, maxOutputTokens, contextWindow, capabilities };
}

function parseTarget(c: Checker, value: unknown, at: string, aliasName: string, providers: Record<string, ProviderConfig>): TargetConfig {
  const o = c.object(value, at, ['provider', 'model', 'weight', 'priority']);
  const provider = c.string(o['provider'], join(at, 'provider'));
  if (!Object.hasOwn(providers, provider)) c.fail(join(at, 'provider'), `names provider '${provider}', which is not defined under "providers"`);
  const model = o['model'] === undefined ? aliasName : c.string(o['model'], join(at, 'model'));
  const weight = o['weight'] === undefined ? 1 : c.integer(o['weight'], join(at, 'weight'), 1, 1000);
  const priority = o['priority'] === undefined ? 0 : c.integer(o['priority'], join(at, 'priority'), 0, 100);
  return { provider, model, weight, priority };
}

const CONDITION_KEYS = ['images', 'tools', 'jsonObject', 'stream', 'minPromptTokens'] as const;

function parseAuto(c: Checker, value: unknown, aliases: Record<string, AliasConfig>): GatewayConfig['auto'] {
  const names = Object.keys(aliases);
  if (value === undefined) return { default: names[0] as string, rules: defaultAutoRules(aliases) };
  const a = c.object(value, 'auto', ['default', 'rules']);
  const def = a['default'] === undefined ? (names[0] as string) : c.string(a['default'], 'auto.default');
  if (!Object.hasOwn(aliases, def)) c.fail('auto.default', `names alias '${def}', which is not defined under "aliases"`);
  if (a['rules'] === undefined) return { default: def, rules: defaultAutoRules(aliases) };
  if (!Array.isArray(a['rules'])) c.fail('auto.rules', 'must be an array');
  if (a['rules'].length > 64) c.fail('auto.rules', 'must have at most 64 entries');
  const rules = a['rules'].map((r: unknown, i: number): AutoRule => {
    const at = `auto.rules[${i}]`;
    const o = c.object(r, at, ['when', 'use', 'reason']);
    const use = c.string(o['use'], join(at, 'use'));
    if (!Object.hasOwn(aliases, use)) c.fail(join(at, 'use'), `names alias '${use}', which is not defined under "aliases"`);
    const w = c.object(o['when'], join(at, 'when'), CONDITION_KEYS);
    const when: AutoCondition = {};
    for (const key of ['images', 'tools', 'jsonObject', 'stream'] as const) {
      if (w[key] === undefined) continue;
      if (typeof w[key] !== 'boolean') c.fail(join(join(at, 'when'), key), 'must be true or false');
      when[key] = w[key];
    }
    if (w['minPromptTokens'] !== undefined) when.minPromptTokens = c.integer(w['minPromptTokens'], join(join(at, 'when'), 'minPromptTokens'), 1, 100_000_000);
    if (Object.keys(when).length === 0) c.fail(join(at, 'when'), 'must hold at least one condition');
    const reason = o['reason'] === undefined ? defaultReason(when) : c.string(o['reason'], join(at, 'reason'));
    if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(reason)) c.fail(join(at, 'reason'), 'use letters, digits, "_", ".", ":" and "-" (at most 64)');
    return { when, use, reason };
  });
  return { default: def, rules };
}

function defaultReason(when: AutoCondition): string {
  if (when.images === true) return 'image_url';
  if (when.tools === true) return 'tools';
  if (when.jsonObject === true) return 'json_object';
  if (when.minPromptTokens !== undefined) return 'prompt_tokens';
  if (when.stream !== undefined) return when.stream ? 'stream' : 'no_stream';
  return 'rule';
}

/**
 * The rules service-auto uses when the config gives none: images go to the
 * first alias declaring "vision", tools to the first declaring "tools",
 * json_object to the first declaring "json". Aliases without capabilities
 * add no rule, so a one-alias config routes everything to it.
 */
export function defaultAutoRules(aliases: Record<string, AliasConfig>): AutoRule[] {
  const rules: AutoRule[] = [];
  const first = (cap: Capability): string | undefined => Object.keys(aliases).find((n) => aliases[n]?.capabilities.includes(cap));
  const vision = first('vision');
  if (vision !== undefined) rules.push({ when: { images: true }, use: vision, reason: 'image_url' });
  const tools = first('tools');
  if (tools !== undefined) rules.push({ when: { tools: true }, use: tools, reason: 'tools' });
  const json = first('json');
  if (json !== undefined) rules.push({ when: { jsonObject: true }, use: json, reason: 'json_object' });
  return rules;
}
