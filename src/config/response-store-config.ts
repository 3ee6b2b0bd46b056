// The "responses" section: the gateway's own store of Responses answers
// (`responses.store`, docs/config.md "Stored responses"), off unless the operator
// turns it on, because it keeps conversation content in the state backend (the data
// directory or Redis) for its TTL.
import type { Checker } from './config-checker.ts';

export interface ResponseStoreConfig {
  /** false: stateless; previous_response_id and friends are refused, `store: true` is answered as not stored. */
  enabled: boolean;
  ttlSeconds: number;
  maxRecordBytes: number;
  maxTotalBytes: number;
  maxChainDepth: number;
}

export interface ResponsesConfig {
  store: ResponseStoreConfig;
}

const MIB = 1024 * 1024;
/** OpenAI keeps a stored response 30 days: longer would keep conversations the client believes gone. */
const MAX_TTL_SECONDS = 30 * 24 * 3600;
const MIN_RECORD_BYTES = 1024;
const MAX_RECORD_BYTES = 256 * MIB;
/** 1 TiB: beyond any store, below 2^53. */
const MAX_TOTAL_BYTES = 1024 ** 4;
const MAX_CHAIN_DEPTH = 100_000;

export const DEFAULT_RESPONSE_STORE: ResponseStoreConfig = {
  enabled: false,
  // A day: an agent's run and its follow-ups, not an archive of conversations.
  ttlSeconds: 24 * 3600,
  // Twice the default body limit: a conversation holds the request and the answer.
  maxRecordBytes: 8 * MIB,
  maxTotalBytes: 256 * MIB,
  maxChainDepth: 1000,
};

const STORE_SETTINGS = ['enabled', 'ttlSeconds', 'maxRecordBytes', 'maxTotalBytes', 'maxChainDepth'];

export function parseResponses(c: Checker, value: unknown): ResponsesConfig {
  const store = { ...DEFAULT_RESPONSE_STORE };
  if (value === undefined) return { store };
  const o = c.object(value, 'responses', ['store']);
  if (o === undefined || o['store'] === undefined) return { store };
  const s = c.object(o['store'], 'responses.store', STORE_SETTINGS);
  if (s === undefined) return { store };
  const at = 'responses.store';
  store.enabled = c.optional(s, 'enabled', at, store.enabled, (v, vat) => c.boolean(v, vat));
  store.ttlSeconds = c.int(s, 'ttlSeconds', at, store.ttlSeconds, 1, MAX_TTL_SECONDS);
  const bytes = (key: 'maxRecordBytes' | 'maxTotalBytes', min: number, max: number): number =>
    c.optional(s, key, at, store[key], (v, vat) => {
      if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) return v;
      // A size written as text ("8MiB") or out of range: say the unit and give the default as an example.
      return c.report(vat, { code: 'invalid_value', message: `must be a number of bytes, an integer from ${min} to ${max}, e.g. ${DEFAULT_RESPONSE_STORE[key]} for ${DEFAULT_RESPONSE_STORE[key] / MIB} MiB` });
    });
  store.maxRecordBytes = bytes('maxRecordBytes', MIN_RECORD_BYTES, MAX_RECORD_BYTES);
  store.maxTotalBytes = bytes('maxTotalBytes', MIN_RECORD_BYTES, MAX_TOTAL_BYTES);
  store.maxChainDepth = c.int(s, 'maxChainDepth', at, store.maxChainDepth, 1, MAX_CHAIN_DEPTH);
  if (store.maxRecordBytes > store.maxTotalBytes) {
    c.report(`${at}.maxTotalBytes`, {
      code: 'conflict',
      message: `${store.maxTotalBytes} is below maxRecordBytes (${store.maxRecordBytes}), so one conversation could never be stored: raise maxTotalBytes or lower maxRecordBytes`,
    });
  }
  return { store };
}

