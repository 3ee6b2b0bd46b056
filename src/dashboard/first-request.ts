// What the shown-once dialog offers besides the key: the API base URL and a
// first request to try (curl, with the key and an alias it may use). Pure (no
// DOM), so it is tested on its own.
import type { AliasCatalogue } from './admin-model.ts';

export interface FirstRequest {
  baseUrl: string;
  /** null when the key may use no configured alias. */
  curl: string | null;
  alias: string | null;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '[::]', '::', '']);

/**
 * The base URL for the API listener's address (`api.url` of GET /api/aliases).
 * A listener on every address is reached by the host name this page was
 * loaded from; a Unix socket has no URL of its own, so curl gets --unix-socket.
 */
function listenerUrl(address: string, pageHost: string): { origin: string; unixSocket: string | null } | null {
  const unix = /^(https?)\+unix:(.+)$/.exec(address);
  if (unix !== null) return { origin: `${unix[1]}://localhost`, unixSocket: unix[2] ?? null };
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (WILDCARD_HOSTS.has(url.hostname)) url.hostname = pageHost.includes(':') && !pageHost.startsWith('[') ? `[${pageHost}]` : pageHost;
  return { origin: url.origin, unixSocket: null };
}

/** The alias for the example: the first the key may use that can serve now, else the first it may use. */
function exampleAlias(allowed: readonly string[] | null, catalogue: AliasCatalogue): string | null {
  const known = catalogue.data.filter((a) => allowed === null || allowed.includes(a.alias));
  return (known.find((a) => a.available) ?? known[0])?.alias ?? null;
}

/** Shell single quotes around text that may itself hold single quotes. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function firstRequest(key: string, allowed: readonly string[] | null, catalogue: AliasCatalogue | null, pageHost: string): FirstRequest | null {
  const address = catalogue?.api?.url ?? null;
  if (catalogue === null || address === null) return null;
  const listener = listenerUrl(address, pageHost);
  if (listener === null) return null;
  const baseUrl = `${listener.origin}/v1`;
  const alias = exampleAlias(allowed, catalogue);
  if (alias === null) return { baseUrl, curl: null, alias: null };
  const body = JSON.stringify({ model: alias, messages: [{ role: 'user', content: 'Hello! Which model are you?' }] });
  const lines = [
    `curl ${listener.unixSocket === null ? '' : `--unix-socket ${shellQuote(listener.unixSocket)} `}${baseUrl}/chat/completions`,
    `  -H ${shellQuote(`Authorization: Bearer ${key}`)}`,
    `  -H 'Content-Type: application/json'`,
    `  -d ${shellQuote(body)}`,
  ];
  return { baseUrl, curl: lines.join(' \\\n'), alias };
}
