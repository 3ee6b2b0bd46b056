// The response store port: the gateway's own memory of Responses it answered with
// `store: true`, so a client can continue with `previous_response_id`, read one back
// (GET /v1/responses/{id}) or delete it. It holds conversation content: turning it on
// is the operator's data-protection decision (docs/config.md, "responses.store").
//
// A record belongs to the key that made it. Every read, delete and resolution names
// that key, and another key is answered exactly as if the id did not exist (null,
// false): the door answers 404, never "forbidden", so an id leaks nothing about other
// keys' conversations.
//
// A record holds the whole conversation up to it (its request's input after the
// previous response's items, oldest first) and what it produced. Continuing a
// conversation therefore reads one record, and a link cannot expire in the middle of
// a chain: the conversation lives as long as its newest response. The price is that
// a conversation's records repeat its early items; maxRecordBytes bounds each record,
// maxChainDepth the number of turns, maxTotalBytes the whole store.
//
// Adapters: memory or the data directory for one instance (local-response-store.ts),
// Redis for several (redis-response-store.ts); both are held to
// test/state/response-store-contract.ts.
import { ConversationTooLongError } from './errors.ts';

/** One stored response. Times are epoch milliseconds on the gateway's clock. */
export interface StoredResponse {
  /** `resp_...`, as the answer named it. */
  id: string;
  /** The gateway key that made it: the only one that can read, continue or delete it. */
  keyId: string;
  createdAt: number;
  /** It is gone from this instant on (alive while now < expiresAt). */
  expiresAt: number;
  /** The response this one continued; null when it started the conversation. */
  previousId: string | null;
  /** Responses in the conversation up to and including this one (1 for a first turn). */
  depth: number;
  /** The conversation before this response's answer: earlier turns' items, then this request's input items. */
  input: unknown[];
  /** The items this response produced (messages, function calls, reasoning). */
  output: unknown[];
  /** The answer's usage as the client saw it; null when there was none. */
  usage: unknown;
}

/** The conversation a new request continues, for the door to put before its input. */
export interface ResolvedConversation {
  /** Every item of the chain, oldest first: the stored input, then the stored output. */
  items: unknown[];
  /** The previous response's depth: the new response's is one more. */
  depth: number;
}

export interface ResponseStoreLimits {
  /** Milliseconds a record lives after it is stored. */
  ttlMs: number;
  /** One record's JSON, in bytes: the bound of one conversation's size. */
  maxRecordBytes: number;
  /** Every live record's JSON together, in bytes. */
  maxTotalBytes: number;
  /** Responses one conversation may chain through previous_response_id. */
  maxChainDepth: number;
}

export interface ResponseStore {
  readonly limits: ResponseStoreLimits;
  /**
   * Stores `record` until its expiresAt (a record already past it is not stored). Rejects with ResponseTooLargeError (past
   * maxRecordBytes or maxChainDepth), ResponseStoreFullError (no room once expired
   * records are gone) or a DuplicateResponseIdError; nothing is kept then.
   */
  put(record: StoredResponse): Promise<void>;
  /** The record, when it exists, has not expired and belongs to `keyId`; null otherwise (whichever it is). */
  get(id: string, keyId: string): Promise<StoredResponse | null>;
  /** Removes the record when get() would return it; false otherwise, and nothing changes. */
  delete(id: string, keyId: string): Promise<boolean>;
  /**
   * The conversation `previousId` ends, for a request continuing it: null when get()
   * would be null. Rejects with ConversationTooLongError when one more response would
   * pass maxChainDepth.
   */
  resolveConversation(previousId: string, keyId: string): Promise<ResolvedConversation | null>;
  close(): Promise<void>;
}

/** A record's size as every adapter counts it: its JSON's UTF-8 bytes. */
export function recordJson(record: StoredResponse): { json: string; bytes: number } {
  const json = JSON.stringify(record);
  return { json, bytes: Buffer.byteLength(json, 'utf8') };
}

/** The stored form read back: a record as put() wrote it, or null (the caller reports what is wrong). */
export function parseRecord(json: string): StoredResponse | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  const ok =
    typeof r['id'] === 'string' &&
    typeof r['keyId'] === 'string' &&
    Number.isSafeInteger(r['createdAt']) &&
    Number.isSafeInteger(r['expiresAt']) &&
    (r['previousId'] === null || typeof r['previousId'] === 'string') &&
    Number.isSafeInteger(r['depth']) &&
    (r['depth'] as number) >= 1 &&
    Array.isArray(r['input']) &&
    Array.isArray(r['output']) &&
    'usage' in r;
  return ok ? (value as StoredResponse) : null;
}

const SEND_WHOLE = "Start a new conversation, or send this one whole in 'input' with 'store': false.";

/** The checks every adapter's put() makes before it stores anything. */
export function checkRecordBounds(record: StoredResponse, bytes: number, limits: ResponseStoreLimits): void {
  if (record.depth > limits.maxChainDepth) {
    throw new ConversationTooLongError(`The conversation has ${record.depth} responses, past the ${limits.maxChainDepth} the gateway stores (responses.store.maxChainDepth). ${SEND_WHOLE}`, 'previous_response_id');
  }
  if (bytes > limits.maxRecordBytes) {
    throw new ConversationTooLongError(`The conversation takes ${bytes} bytes with this response, past the ${limits.maxRecordBytes} the gateway stores for one (responses.store.maxRecordBytes). ${SEND_WHOLE}`, null);
  }
}

/** What resolveConversation() answers for a record get() found. */
export function conversationOf(record: StoredResponse, limits: ResponseStoreLimits): ResolvedConversation {
  if (record.depth >= limits.maxChainDepth) {
    throw new ConversationTooLongError(`The conversation ${record.id} ends already has ${record.depth} responses, the most the gateway stores (responses.store.maxChainDepth). ${SEND_WHOLE}`, 'previous_response_id');
  }
  return { items: [...record.input, ...record.output], depth: record.depth };
}

/** The limits as responses.store sets them (src/config/response-store-config.ts). */
export function responseStoreLimits(config: { ttlSeconds: number; maxRecordBytes: number; maxTotalBytes: number; maxChainDepth: number }): ResponseStoreLimits {
  return { ttlMs: config.ttlSeconds * 1000, maxRecordBytes: config.maxRecordBytes, maxTotalBytes: config.maxTotalBytes, maxChainDepth: config.maxChainDepth };
}
