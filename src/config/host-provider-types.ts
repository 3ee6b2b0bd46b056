// Provider types a host adds (../api/providers.ts): the registered adapters,
// checked once per parse (a malformed one is the host's programming error, an
// Error, never a config problem), and one provider entry of such a type: the
// settings the gateway owns for every HTTP upstream, checked here like a
// built-in type's, and the adapter's own, checked by its parse, whose
// problems join the others with the same paths and wording style.
import type { ProviderAdapter } from '../api/providers.ts';
import { HOST_PROVIDER, type HostProviderConfig } from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { parseKeyHeader, parseUpstreamOptions, UPSTREAM_SETTINGS } from './upstream-options.ts';

/** The registered adapters by type name. */
export type HostProviderTypes = ReadonlyMap<string, ProviderAdapter>;

const PROVIDERS_AT = 'providers.';
const TYPE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What a provider of a host type takes besides "type" and the adapter's own settings. */
export const HOST_COMMON_SETTINGS: readonly string[] = [...UPSTREAM_SETTINGS, 'apiKeyHeader'];

/**
 * The adapters `list` registers, by type. Throws an Error naming the adapter
 * (by its position and type) and what to change when `list` is not an array
 * of adapters, an adapter lacks a part, two share a type, or one takes a
 * built-in type's name or a setting the gateway owns.
 */
export function hostProviderTypes(list: unknown, builtIn: readonly string[]): HostProviderTypes {
  if (list === undefined) return new Map();
  if (!Array.isArray(list)) throw new TypeError('providerTypes must be an array of provider adapters ({ type, settings, parse, create }).');
  const types = new Map<string, ProviderAdapter>();
  list.forEach((adapter: unknown, i: number) => {
    const where = `providerTypes[${i}]`;
    if (typeof adapter !== 'object' || adapter === null) throw new TypeError(`${where} must be a provider adapter object ({ type, settings, parse, create }).`);
    const a = adapter as Record<string, unknown>;
    const type = a['type'];
    if (typeof type !== 'string' || !TYPE_NAME.test(type)) {
      throw new TypeError(`${where}.type must be a type name of letters, digits, ".", "_" and "-" (at most 64), as a config's "type" names it.`);
    }
    const named = `${where} (type "${type}")`;
    if (builtIn.includes(type)) throw new Error(`${named} takes the name of a built-in provider type (${builtIn.join(', ')}), which cannot be replaced: give it another type name.`);
    if (types.has(type)) throw new Error(`${named} registers a type already registered by an earlier adapter: each type once.`);
    for (const part of ['parse', 'create'] as const) {
      if (typeof a[part] !== 'function') throw new TypeError(`${named}.${part} must be a function.`);
    }
    const settings = a['settings'];
    if (!Array.isArray(settings) || !settings.every((s) => typeof s === 'string' && s !== '')) {
      throw new TypeError(`${named}.settings must be an array of the adapter's own setting names (strings; [] for none).`);
    }
    const owned = settings.find((s: string) => s === 'type' || HOST_COMMON_SETTINGS.includes(s));
    if (owned !== undefined) throw new Error(`${named}.settings names "${owned}", which the gateway checks for every provider: leave it out of settings (its value reaches the gateway, not the adapter).`);
    const base = a['defaultBaseUrl'];
    if (base !== undefined && typeof base !== 'string') throw new TypeError(`${named}.defaultBaseUrl must be a URL string when set.`);
    types.set(type, adapter as ProviderAdapter);
  });
  return types;
}

/** A provider entry whose "type" is `adapter.type`; `at` is "providers.<name>". */
export function parseHostProvider(c: Checker, o: Obj, at: string, adapter: ProviderAdapter): HostProviderConfig | undefined {
  const name = at.startsWith(PROVIDERS_AT) ? at.slice(PROVIDERS_AT.length) : at;
  c.object(o, at, ['type', ...HOST_COMMON_SETTINGS, ...adapter.settings]);
  const keyAdvice = 'set apiKeyEnv or apiKeyFile, and apiKeyHeader for a header other than Authorization';
  // The adapter's endpoint is the baseUrl itself: nothing is appended, so no resource to guard against.
  const upstream = parseUpstreamOptions(c, o, at, adapter.defaultBaseUrl, { resource: '', keyAdvice });
  const apiKeyHeader = parseKeyHeader(c, o, at, upstream.headers);
  const before = c.issues.length;
  const settings = parseOwnSettings(c, o, at, adapter);
  if (c.issues.length > before) return undefined;
  return { type: HOST_PROVIDER, hostType: adapter.type, name, adapter, settings, ...upstream, apiKeyHeader };
}

function parseOwnSettings(c: Checker, o: Obj, at: string, adapter: ProviderAdapter): unknown {
  const own: Obj = {};
  for (const name of adapter.settings) if (o[name] !== undefined) own[name] = o[name];
  let open = true;
  const report = (setting: unknown, message: unknown): void => {
    if (!open) throw new Error(`provider type "${adapter.type}": report() was called after parse returned; report every problem before returning.`);
    const path = typeof setting === 'string' && setting !== '' ? settingPath(at, setting) : at;
    const text = typeof message === 'string' && message !== '' ? message : 'is not valid (the provider type gave no reason)';
    c.report(path, { code: 'invalid_value', message: text });
  };
  try {
    return adapter.parse(Object.freeze(own), report);
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    c.report(at, { code: 'invalid_value', message: `could not be checked: provider type "${adapter.type}"'s parse threw (${name}) instead of reporting; fix the adapter or these settings` });
    return undefined;
  } finally {
    open = false;
  }
}

/** `at` joined with a setting path the adapter gave: "region", "zone.name" or "tags[2]". */
function settingPath(at: string, setting: string): string {
  return setting.startsWith('[') ? `${at}${setting}` : join(at, setting);
}
