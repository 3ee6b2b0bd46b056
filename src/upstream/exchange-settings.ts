// The settings of every exchange with one upstream (./upstream-exchange.ts),
// checked once, when the provider is built: the endpoint URL, the headers
// (the key among them, or a credential asked per exchange), the timers and the
// scheduler they run on, the size limits and the transport (./transport.ts). A
// setting that cannot work fails at startup, not per call.

import { DEFAULT_FIRST_BYTE_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS } from '../config/provider-defaults.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { createFetchTransport } from './fetch-transport.ts';
import type { UpstreamTransport } from './transport.ts';

/** setTimeout's largest delay; beyond it Node fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** The default transport: one for the process, stateless (undici pools globally). */
const FETCH_TRANSPORT = createFetchTransport();

/** The timing, size and transport options both adapters accept, with the same meaning and defaults. */
export interface ExchangeOptions {
  timeoutMs?: number | undefined;
  firstByteTimeoutMs?: number | undefined;
  idleTimeoutMs?: number | undefined;
  connectTimeoutMs?: number | undefined;
  maxResponseBytes?: number | undefined;
  maxEventBytes?: number | undefined;
  /** How requests reach the upstream; default the built-in fetch. */
  transport?: UpstreamTransport | undefined;
  /** What the connect, first-byte, idle and total timers run on; default the system's. */
  scheduler?: Scheduler | undefined;
}

/**
 * The upstream key: fixed when the provider is built, or asked on every exchange
 * (a host's key source over the config's key), so a rotated key is used by the next
 * exchange without a reload. The getter throws the client's ApiError when it cannot
 * give one; it never returns an empty string.
 */
export type UpstreamKey = string | (() => string | undefined);

/** A key asked per exchange, and where it goes. */
export interface UpstreamCredential {
  /** Lower-case header name. */
  readonly header: string;
  /** What precedes the key in the header (`Bearer ` in Authorization). */
  readonly prefix: string;
  /** The key for this exchange; undefined: none (the configured headers stand). */
  readonly key: () => string | undefined;
}

export interface ExchangeSettings {
  endpoint: string;
  /** Every header but content-type, accept and x-request-id, which are ours; lower-case names. */
  baseHeaders: Readonly<Record<string, string>>;
  /** A key asked on every exchange, set over baseHeaders; absent when the key is fixed (it is in baseHeaders). */
  credential?: UpstreamCredential | undefined;
  timeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  /** Bound on connection setup (see ./connect-phase.ts); undefined: the transport's own. */
  connectTimeoutMs: number | undefined;
  /** Non-stream response body limit (decoded bytes). */
  maxResponseBytes: number;
  /** Largest single event of a stream. */
  maxEventBytes: number;
  transport: UpstreamTransport;
  /** Chosen once per provider, so an exchange pays nothing to find it. */
  scheduler: Scheduler;
}

/** `${baseUrl}/${resource}`, with or without a trailing slash on baseUrl; a
 * query (e.g. an api-version) stays after the path. Throws TypeError for a URL
 * that cannot work. */
export function endpointUrl(baseUrl: string, resource: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError('The upstream baseUrl is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('The upstream baseUrl must use http or https.');
  }
  if (url.hash !== '') throw new TypeError('The upstream baseUrl must not have a fragment.');
  // fetch refuses such URLs on every call; refuse them once, at startup.
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('The upstream baseUrl must not contain credentials; use apiKey or headers.');
  }
  let path = url.pathname;
  while (path.endsWith('/')) path = path.slice(0, -1);
  url.pathname = `${path}/${resource}`;
  return url.toString();
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new RangeError(`${name} must be a positive integer of at most ${MAX_TIMER_MS}.`);
  }
  return value;
}

/** The settings of every exchange with one upstream, checked once, at startup. */
export function exchangeSettings(endpoint: string, baseHeaders: Headers, options: ExchangeOptions, credential?: UpstreamCredential): ExchangeSettings {
  return {
    endpoint,
    // A plain object: both transports take one, and copying it per request is cheaper than a Headers.
    baseHeaders: Object.fromEntries(baseHeaders),
    ...(credential === undefined ? {} : { credential }),
    timeoutMs: positiveInteger(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs'),
    firstByteTimeoutMs: positiveInteger(options.firstByteTimeoutMs, DEFAULT_FIRST_BYTE_TIMEOUT_MS, 'firstByteTimeoutMs'),
    idleTimeoutMs: positiveInteger(options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    connectTimeoutMs:
      options.connectTimeoutMs === undefined ? undefined : positiveInteger(options.connectTimeoutMs, 0, 'connectTimeoutMs'),
    maxResponseBytes: positiveInteger(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes'),
    maxEventBytes: positiveInteger(options.maxEventBytes, DEFAULT_MAX_EVENT_BYTES, 'maxEventBytes'),
    transport: options.transport ?? FETCH_TRANSPORT,
    scheduler: options.scheduler ?? systemScheduler,
  };
}

/** The configured extra headers, plus the API key under `keyHeader` (with
 * `keyPrefix`) when a fixed one is set (a key asked per exchange is upstreamCredential's).
 * Built once so that an invalid value fails at startup, not per call; the errors
 * never quote a value, which may be a secret. */
export function upstreamHeaders(
  extra: Record<string, string> | undefined,
  apiKey: UpstreamKey | undefined,
  keyHeader: string,
  keyPrefix: string,
): Headers {
  let headers: Headers;
  try {
    headers = new Headers(extra ?? {});
  } catch {
    throw new TypeError('The upstream headers contain an invalid header name or value.');
  }
  // The key goes in this one header only (Azure's api-key is never also a Bearer).
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(keyHeader)) throw new TypeError('The upstream apiKeyHeader is not a valid header name.');
  if (typeof apiKey === 'string' && apiKey !== '') {
    try {
      headers.set(keyHeader, `${keyPrefix}${apiKey}`);
    } catch {
      throw new TypeError('The upstream apiKey contains characters not allowed in a header.');
    }
  }
  return headers;
}

/** The credential of a key asked per exchange; undefined for a fixed key or none (upstreamHeaders bakes it in). */
export function upstreamCredential(apiKey: UpstreamKey | undefined, keyHeader: string, keyPrefix: string): UpstreamCredential | undefined {
  return typeof apiKey === 'function' ? { header: keyHeader.toLowerCase(), prefix: keyPrefix, key: apiKey } : undefined;
}
