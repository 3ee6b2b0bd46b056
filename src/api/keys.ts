// The ports that decide who a request is and what it may do: a host's
// authenticator, or a key store like the built-in ones. Public types only: this
// file imports nothing from the gateway. Each port has a contract suite in
// `portcullis/testing` that a host runs against its own implementation.
import type { IncomingHttpHeaders } from 'node:http';

// ---------------------------------------------------------------- keys

/** A budget's window: the UTC day or the UTC month. */
export type BudgetPeriod = 'day' | 'month';

/** A key's limits; null: unlimited. */
export interface KeyLimits {
  readonly requestsPerMinute: number | null;
  readonly tokensPerMinute: number | null;
  readonly concurrentRequests: number | null;
  readonly tokenBudget: { readonly tokens: number; readonly period: BudgetPeriod } | null;
  /** Money per UTC day or month, in the configured currency (at most 6 decimals). */
  readonly costBudget: { readonly amount: number; readonly period: BudgetPeriod } | null;
}

/** What the egress guard does with a finding. */
export type GuardAction = 'off' | 'log' | 'mask' | 'block';

/** A key's egress guard: detector or group names to actions; it only ever makes an alias's policy stricter. */
export interface KeyGuard {
  readonly detectors: { readonly [detector: string]: GuardAction };
}

/**
 * What one request may do, as a host's Authenticator returns it. Checked when
 * returned: a field of the wrong shape fails the request with a generic 500 and an
 * error log naming the field; nothing is ever defaulted to wider access.
 *
 * A field left out is the widest setting, on purpose, as for a stored key without
 * it: no `allowedAliases` means every alias, no `limits` (or a limit left out) means
 * no limit, no `expiresAt` never expires. A host that means to restrict a key must
 * say so in the policy it returns.
 */
export interface KeyPolicy {
  /** The key's id: access lines, usage, limits and budgets are counted by it. 1 to 128 printable characters. */
  readonly id: string;
  /** ISO 8601 with a zone; null or absent: never expires. */
  readonly expiresAt?: string | null;
  /** The aliases this key may use; null or absent: every alias. An empty list is refused (use null in the Authenticator's answer to refuse). */
  readonly allowedAliases?: readonly string[] | null;
  /** Limits; a field absent is unlimited. */
  readonly limits?: Partial<KeyLimits>;
  /** The key's egress guard; null or absent: none beyond the alias's. */
  readonly guard?: KeyGuard | null;
}

/** The API door a request came through. */
export type ApiDoor = 'chat' | 'messages' | 'count_tokens' | 'responses' | 'embeddings' | 'models';

/** What an Authenticator is given about a request. */
export interface AuthenticationRequest {
  /**
   * The API key as the door reads it (Authorization: Bearer on OpenAI's doors; x-api-key or
   * Bearer on Anthropic's); null when the request has none. Never log it.
   */
  readonly apiKey: string | null;
  readonly headers: IncomingHttpHeaders;
  /** The client's address (after the configured trusted proxies). */
  readonly clientAddress: string;
  /**
   * The TLS certificate the client presented, null without one. `verified`: it
   * verified against the server's CAs (node's socket.authorized). The gateway's
   * own listener refuses an unverified one (clientAuth "optional": 403) before
   * asking; a host's https server with requestCert and rejectUnauthorized: false
   * lets it through, and the Authenticator decides (pinning its fingerprint256,
   * for instance). `subject` as node gives it ("CN=alice\nO=Example").
   */
  readonly clientCertificate: { readonly subject: string; readonly fingerprint256: string; readonly verified: boolean } | null;
  readonly door: ApiDoor;
}

/**
 * Decides every API request's key when given (the key store is then not asked for
 * requests): a policy, or null for 401. A throw or rejection fails the request with a
 * generic 500 and an error log.
 */
export type Authenticator = (request: AuthenticationRequest) => KeyPolicy | null | Promise<KeyPolicy | null>;

/** A stored key. Never the raw key: only its SHA-256. */
export interface KeyRecord {
  readonly id: string;
  readonly name: string;
  /** Display prefix of the key: its first 12 characters, e.g. `pcl_AbC1x9Qz`. */
  readonly prefix: string;
  /** SHA-256 of the raw key, lowercase hex. */
  readonly hash: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
  readonly rotatedAt: string | null;
  readonly allowedAliases: readonly string[] | null;
  readonly expiresAt: string | null;
  readonly limits: KeyLimits;
  readonly guard: KeyGuard | null;
}

export type ListedKey = KeyRecord & { readonly lastUsedAt: string | null };

/** A new key: the raw key, shown once, and what is stored. */
export interface IssuedKey {
  /** `pcl_` and 49 characters of [0-9A-Za-z]: the shape the gateway's logs recognise as an API key and redact. */
  key: string;
  record: KeyRecord;
}

/** Settings given to create; absent fields keep their defaults. Checked by the store. */
export interface KeySettingsInput {
  allowedAliases?: unknown;
  expiresAt?: unknown;
  limits?: unknown;
  guard?: unknown;
}

/** A change to a key; checked by the store. */
export interface KeyPatch {
  name?: unknown;
  allowedAliases?: unknown;
  expiresAt?: unknown;
  /** The key's limits, whole: a field left out becomes null. */
  limits?: unknown;
  /** Only these limit fields (null clears one), merged with the current limits. */
  limitChanges?: unknown;
  guard?: unknown;
}

/** Called with a decided change before it is written; a rejection means the change is not made and the call rejects. */
export type WriteAhead = (change: { before: KeyRecord | null; after: KeyRecord }) => Promise<void>;

/**
 * Where API keys live, when the gateway is to manage them (keys CLI, admin API).
 * runKeyStoreContract holds a store to these comments. The admin API and the CLI tell
 * a store's errors apart by `name` and `code` (the message is the store's own words,
 * shown to the operator; never a raw key in it):
 *   - InvalidKeyNameError / invalid_key_name: a name that is not 1 to 64 printable characters after trimming;
 *   - InvalidKeySettingError / invalid_key_setting, with `param` the setting's path (e.g.
 *     `limits.requestsPerMinutes`, `guard.detectors.email`) and `problem`: a bad setting;
 *   - KeyNotFoundError / key_not_found: no key has the id;
 *   - KeyRevokedError / key_revoked, with `keyId`: update or rotate of a revoked key;
 *   - KeyAlreadyRevokedError / key_already_revoked: revoke of a revoked key;
 *   - KeyStoreClosedError / key_store_closed: any call but authenticate, touch and close after close().
 */
export interface KeyStore {
  /** Where the keys live, for messages. */
  readonly location: string;
  /**
   * Issues a key named `name` with `settings` (checked: a bad name or setting
   * rejects, naming it). The raw key is returned once and never stored.
   */
  create(name: string, settings?: KeySettingsInput, ahead?: WriteAhead): Promise<IssuedKey>;
  /** Every key (revoked and expired ones too) in creation order, read fresh, each with its last use. */
  list(): Promise<ListedKey[]>;
  /** One key, read fresh; rejects when no key has this id. */
  get(id: string): Promise<ListedKey>;
  /** Changes a key's name, allowed aliases, expiry, limits or guard (checked as create's); rejects for an unknown or revoked id. */
  update(id: string, patch: KeyPatch, ahead?: WriteAhead): Promise<KeyRecord>;
  /** A new raw key for the same id, settings and history: the old one stops working. Rejects for an unknown or revoked id. */
  rotate(id: string, ahead?: WriteAhead): Promise<IssuedKey>;
  /** Marks a key revoked (its raw key stops working); rejects for an unknown or already revoked id. */
  revoke(id: string, ahead?: WriteAhead): Promise<KeyRecord>;
  /** Re-reads the keys now; when the source is broken the last good keys stay served and the call rejects. */
  reload(): Promise<void>;
  /** Reads the keys without serving them; commit() swaps them in (a reload does keys and config in one step). */
  prepareReload(): Promise<{ commit(): void }>;
  /**
   * Synchronous per-request lookup: the record of the key whose raw key this is,
   * or null when none or revoked. An expired key's record is returned: the gateway
   * checks expiresAt itself, to answer "expired" rather than "unknown". Does not record use.
   */
  authenticate(rawKey: string): KeyRecord | null;
  /** Records that key `id` was used now: kept in memory, written later (flushLastUsed, close). */
  touch(id: string): void;
  /** Writes the pending last-used times now. */
  flushLastUsed(): Promise<void>;
  /** Stops watching and writes the pending last-used times; the gateway calls it only for a store it opened. */
  close(): Promise<void>;
}
