// Pure check of a parsed config value against the schema in config.ts.
// Unknown keys are errors (a typo must not silently fall back to a default).
// Every problem is collected (see config-checker.ts), and parseConfig throws
// one ConfigError listing them all, so a file is fixed in one pass.
import { parseMetrics } from './metrics-config.ts';
import path from 'node:path';
import { parseProvider, PROVIDER_TYPE_NAMES } from './provider-types.ts';
import { hostProviderTypes, type HostProviderTypes } from './host-provider-types.ts';
import type { ProviderAdapter } from '../api/providers.ts';
import { ConfigError, DEFAULT_LIMITS, MAX_CHARGE_MULTIPLE, type GatewayConfig, type ListenConfig, type ProviderConfig, type ServerLimits } from './config.ts';
import { parseListenerTls } from './tls-config.ts';
import { parseTrustedProxies } from './trusted-proxies-config.ts';
import { Checker, join, type Obj } from './config-checker.ts';
import { parseAliases, parseAuto } from './routing-config.ts';
import { parseRequestFields, type RequestFieldName } from './request-fields-config.ts';
import { parseOperations } from './operations-config.ts';
import { parseCurrency } from './price-config.ts';
import { parseTelemetry } from './telemetry-config.ts';
import { parseAudit } from './audit-config.ts';
import { parseResponses } from './response-store-config.ts';
import { parseEmbeddings } from './embeddings-config.ts';
import { parseGuard } from './guard-config.ts';
import { parseSecurity } from './security-config.ts';


const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ROOT_SETTINGS = ['$schema', 'listen', 'admin', 'shutdown', 'log', 'state', 'dataDir', 'limits', 'providers', 'aliases', 'auto', 'currency', 'telemetry', 'audit', 'metrics', 'requestFields', 'responses', 'embeddings', 'guard', 'security'];

export interface ParseConfigOptions {
  /** Provider types the host adds (../api/providers.ts); a provider whose
   * "type" names one is checked, and later built, by that adapter. */
  readonly providerTypes?: readonly ProviderAdapter[] | undefined;
}

/**
 * Checks `value` (a parsed config file) and returns the full config with
 * defaults filled in. `baseDir` resolves a relative `dataDir`. Throws one
 * ConfigError holding every problem found, or an Error (before looking at
 * `value`) when `options.providerTypes` is malformed.
 */
export function parseConfig(value: unknown, source: string | null, baseDir: string, options: ParseConfigOptions = {}): GatewayConfig {
  const hostTypes = hostProviderTypes(options.providerTypes, PROVIDER_TYPE_NAMES);
  const c = new Checker(source);
  const root = c.object(value, '', ROOT_SETTINGS);
  if (root === undefined) throw new ConfigError(source, c.issues);

  const listen: ListenConfig = { host: '127.0.0.1', port: 8080, tls: null, trustedProxies: [] };
  const l = root['listen'] === undefined ? undefined : c.object(root['listen'], 'listen', ['host', 'port', 'tls', 'trustedProxies']);
  if (l !== undefined) {
    listen.host = c.optional(l, 'host', 'listen', listen.host, (v, at) => c.string(v, at));
    listen.port = c.int(l, 'port', 'listen', listen.port, 0, 65535);
    if (l['tls'] !== undefined) listen.tls = parseListenerTls(c, l['tls'], 'listen.tls') ?? null;
    listen.trustedProxies = parseTrustedProxies(c, l['trustedProxies'], 'listen.trustedProxies');
  }

  const dataDir = path.resolve(baseDir, c.optional(root, 'dataDir', '', './data', (v, at) => c.string(v, at)));
  const limits = parseServerLimits(c, root['limits']);
  const providersIn = root['providers'] === undefined ? c.report('providers', { code: 'required' }) : c.map(root['providers'], 'providers');
  const providers = parseProviders(c, providersIn ?? {}, hostTypes);
  // A provider with problems still counts as defined, so an alias naming it
  // gets no second, misleading problem; with "providers" itself broken, no
  // reference can be judged.
  const types = new Map(Object.entries(providers).map(([name, p]) => [name, p.type]));
  const aliases = parseAliases(c, root['aliases'], { defined: providersIn === undefined ? null : new Set(Object.keys(providersIn)), types });
  const auto = parseAuto(c, root['auto'], aliases);
  const requestFields = parseRequestFields(c, root, '', [] as readonly RequestFieldName[]);
  const operations = parseOperations(c, root, listen);
  const currency = parseCurrency(c, root);
  const telemetry = parseTelemetry(c, root['telemetry']);
  const audit = parseAudit(c, root['audit']);
  const responses = parseResponses(c, root['responses']);
  const embeddings = parseEmbeddings(c, root['embeddings'], limits);
  const guard = parseGuard(c, root['guard']);
  const security = parseSecurity(c, root['security']);
  const metrics = parseMetrics(c, root['metrics'], baseDir, [
    { setting: 'listen', host: listen.host, port: listen.port },
    ...(operations.admin.enabled ? [{ setting: 'admin', host: operations.admin.host, port: operations.admin.port }] : []),
  ]);
  if (c.issues.length > 0) throw new ConfigError(source, c.issues);
  return { source, listen, ...operations, dataDir, limits, providers, aliases: aliases ?? {}, auto, requestFields, currency, telemetry, audit, responses, metrics, embeddings, guard, security };
}

function parseServerLimits(c: Checker, value: unknown): ServerLimits {
  const limits = { ...DEFAULT_LIMITS };
  if (value === undefined) return limits;
  const keys = Object.keys(DEFAULT_LIMITS) as (keyof ServerLimits)[];
  const o = c.object(value, 'limits', keys);
  if (o === undefined) return limits;
  const bounds: Record<Exclude<keyof ServerLimits, 'maxConnections' | 'maxConnectionsPerAddress'>, [number, number]> = {
    maxBodyBytes: [1024, 64 * 1024 * 1024],
    maxHeaderBytes: [1024, 64 * 1024],
    headersTimeoutMs: [1000, 120_000],
    requestTimeoutMs: [1000, 600_000],
    keepAliveTimeoutMs: [0, 600_000],
    writeStallTimeoutMs: [1000, 600_000],
    maxJsonDepth: [8, 1000],
    maxStringBytes: [1024, 64 * 1024 * 1024],
    maxMembers: [300, 1_000_000],
    maxChargeMultiple: [1, MAX_CHARGE_MULTIPLE],
  };
  for (const key of keys) {
    if (key !== 'maxConnections' && key !== 'maxConnectionsPerAddress') limits[key] = c.int(o, key, 'limits', limits[key], bounds[key][0], bounds[key][1]);
  }
  // Unset (null): derived from the descriptor limit when serving.
  if (o['maxConnections'] !== undefined) limits.maxConnections = c.int(o, 'maxConnections', 'limits', 0, 1, 1_000_000);
  // Unset (null): derived from maxConnections, whatever that resolves to (defaultPerAddress).
  if (o['maxConnectionsPerAddress'] !== undefined) limits.maxConnectionsPerAddress = c.int(o, 'maxConnectionsPerAddress', 'limits', 0, 1, 1_000_000);
  if (limits.maxConnections !== null && limits.maxConnectionsPerAddress !== null && limits.maxConnectionsPerAddress > limits.maxConnections) {
    c.report('limits.maxConnectionsPerAddress', { code: 'conflict', message: `must not exceed limits.maxConnections (${limits.maxConnections})` });
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    c.report('limits.headersTimeoutMs', { code: 'conflict', message: 'must not exceed limits.requestTimeoutMs' });
  }
  return limits;
}

/** Every entry of "providers", each checked by the provider table. */
function parseProviders(c: Checker, providersIn: Obj, hostTypes: HostProviderTypes): Record<string, ProviderConfig> {
  const providers: Record<string, ProviderConfig> = {};
  for (const [name, p] of Object.entries(providersIn)) {
    const at = join('providers', name);
    if (!PROVIDER_NAME.test(name)) c.report(at, { code: 'invalid_name', message: 'provider names use letters, digits, ".", "_" and "-" (at most 64)' });
    const provider = parseProvider(c, p, at, hostTypes);
    if (provider !== undefined) providers[name] = provider;
  }
  return providers;
}
