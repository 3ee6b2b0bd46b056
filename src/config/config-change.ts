// What a reload changed (docs/audit.md, `config.reload`): a digest of each
// config and the settings that differ between two of them. Pure.
//
// Both work on the parsed config (defaults filled in, names as in the file),
// so a reformatted file, keys reordered or a default written out changes
// nothing. The config holds no secret value by its own rules (keys, client
// secrets and the Redis password come from environment variables or files;
// an upstream URL with credentials and a state.redis.url with a password are
// refused by the parser, so a URL is digested as written) except header values: an upstream's
// `headers` and `telemetry.otlp.headers` may carry a token. Their values are
// left out of the digest (their names stay in), so the digest cannot be used
// to test guesses of them; a change to one is still named among the changes.
import { createHash } from 'node:crypto';
import type { GatewayConfig } from './config.ts';

/** Paths named at most in one record; the count says how many there were in all. */
export const MAX_CHANGED_PATHS = 100;
/** What stands for a header value in the digested form. */
const LEFT_OUT = '[not digested]';

export interface ConfigChange {
  /** SHA-256 (hex) of the new config's canonical JSON, header values left out. */
  digest: string;
  /** The same of the config it replaces. */
  previousDigest: string;
  /** How many settings differ (0: the reload changed nothing). */
  changes: number;
  /** The first MAX_CHANGED_PATHS of them, in the config's order, e.g. `limits.maxConnections`, `aliases.service-chat.targets[0].model`. */
  changed: string[];
}

/** What a reload from `previous` to `next` changes. */
export function configChange(previous: GatewayConfig, next: GatewayConfig, max = MAX_CHANGED_PATHS): ConfigChange {
  const paths = changedSettings(previous, next);
  return { digest: configDigest(next), previousDigest: configDigest(previous), changes: paths.length, changed: paths.slice(0, max) };
}

/** SHA-256 (hex) of the config's canonical JSON (object keys sorted), without its source and header values. */
export function configDigest(config: GatewayConfig): string {
  return createHash('sha256').update(canonical(digestedForm(config))).digest('hex');
}

/**
 * Every setting whose value differs, as its path: an object's member that
 * appears or goes is named itself (`aliases.new-alias`), not its contents;
 * lists of the same length are compared item by item (`targets[1].weight`),
 * a list that grows or shrinks is named whole (`aliases.service-chat.targets`).
 * Where the config came from (`source`) is not a setting.
 */
export function changedSettings(previous: GatewayConfig, next: GatewayConfig): string[] {
  const out: string[] = [];
  const { source: _a, ...before } = previous;
  const { source: _b, ...after } = next;
  diff(before, after, '', out);
  return out;
}

function diff(a: unknown, b: unknown, at: string, out: string[]): void {
  if (isRecord(a) && isRecord(b)) {
    const path = (key: string): string => (at === '' ? key : `${at}.${key}`);
    // Own members only: an alias named "constructor" is not Object's.
    const own = (o: Record<string, unknown>, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);
    for (const key of Object.keys(b)) {
      if (b[key] !== undefined) diff(own(a, key), b[key], path(key), out);
    }
    for (const key of Object.keys(a)) {
      if (a[key] !== undefined && own(b, key) === undefined) out.push(path(key));
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item: unknown, i) => diff(item, b[i], `${at}[${i}]`, out));
    return;
  }
  if (canonical(a) !== canonical(b)) out.push(at);
}

/** The config as digested: no source, header values replaced by a marker. */
function digestedForm(config: GatewayConfig): unknown {
  const { source: _source, ...rest } = config;
  const providers: Record<string, unknown> = {};
  for (const [name, provider] of Object.entries(config.providers)) {
    providers[name] = 'headers' in provider ? { ...provider, headers: namesOnly(provider.headers) } : provider;
  }
  const otlp = config.telemetry.otlp;
  const telemetry = otlp === null ? config.telemetry : { ...config.telemetry, otlp: { ...otlp, headers: namesOnly(otlp.headers) } };
  return { ...rest, providers, telemetry };
}

function namesOnly(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, LEFT_OUT]));
}

/** Canonical JSON: object keys sorted, undefined members left out. */
function canonical(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item: unknown) => canonical(item)).join(',')}]`;
  const members = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
  return `{${members.join(',')}}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
