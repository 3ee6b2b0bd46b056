// The key store port: what the server, the CLI and the admin API need from wherever
// API keys live. Two adapters implement it: the data directory's files
// (file-key-store.ts, one host) and Redis (redis-key-store.ts, several
// instances). Both apply the same record functions (src/keys/key-records.ts) and do
// only the I/O around them; src/testing/key-store-contract.ts holds both to one set of
// cases.
import type { KeySettingsInput } from '../keys/key-settings.ts';
import type { KeyPatch } from '../keys/key-records.ts';
import type { KeyRecord } from '../keys/store-format.ts';

export type { KeyPatch };

export type { KeyRecord } from '../keys/store-format.ts';

export type ListedKey = KeyRecord & { readonly lastUsedAt: string | null };

/** How often either store re-reads its records by default: a revoke reaches every server within it. */
export const DEFAULT_RELOAD_INTERVAL_MS = 1000;
/** How often either store writes the keys' last-used times by default. */
export const DEFAULT_LAST_USED_FLUSH_MS = 5000;

/**
 * How a lookup() ended: found active, unknown (or revoked) in the store, answered from
 * the unknown-key cache, not asked because enough lookups were in flight or the lookup
 * rate was spent (shed), or
 * failed (timeout, store unreachable).
 */
export type KeyLookupResult = 'found' | 'unknown' | 'cached_unknown' | 'shed' | 'failed';

/** A new key: the raw key, shown once, and what is stored. */
export interface IssuedKey {
  key: string;
  record: KeyRecord;
}

/**
 * Called with a change once it is decided and before it is written (under the store's lock,
 * or within one compare-and-set attempt); when it rejects, the change is not written and the
 * store's call rejects with its error. The audit trail's write-ahead record is made here
 * (src/state/audited-key-store.ts). Redis calls it again for each attempt after one lost a
 * race with another instance.
 */
export type WriteAhead = (change: { before: KeyRecord | null; after: KeyRecord }) => Promise<void>;

/**
 * Where keys live. Every adapter keeps an in-memory index so authenticate() is
 * synchronous.
 */
export interface KeyStore {
  /** Where the keys live, for messages: a file path or a Redis address. */
  readonly location: string;
  /** Create a key; the raw key is returned once and never stored. InvalidKeyNameError/InvalidKeySettingError otherwise. */
  create(name: string, settings?: KeySettingsInput, ahead?: WriteAhead): Promise<IssuedKey>;
  /** Every key in creation order, read fresh, with its last use. */
  list(): Promise<ListedKey[]>;
  /** One key, read fresh; KeyNotFoundError otherwise. */
  get(id: string): Promise<ListedKey>;
  /** Change name, allowed aliases, expiry, limits or guard; KeyNotFoundError or KeyRevokedError otherwise. */
  update(id: string, patch: KeyPatch, ahead?: WriteAhead): Promise<KeyRecord>;
  /** A new secret for the same id, settings and history; the old secret stops working. KeyNotFoundError or KeyRevokedError otherwise. */
  rotate(id: string, ahead?: WriteAhead): Promise<IssuedKey>;
  /** Mark a key revoked; KeyNotFoundError or KeyAlreadyRevokedError otherwise. */
  revoke(id: string, ahead?: WriteAhead): Promise<KeyRecord>;
  /** Re-read the keys now (SIGHUP); the last good index stays when the source is broken, and the error is thrown. */
  reload(): Promise<void>;
  /**
   * Reads the keys now without serving them: `commit()` swaps them in. A SIGHUP
   * reads the keys and the config first and then swaps both in one step. Throws
   * like reload() when the source is broken.
   */
  prepareReload(): Promise<{ commit(): void }>;
  /** Synchronous per-request lookup: the active key's record, or null. Does not record use. */
  authenticate(rawKey: string): KeyRecord | null;
  /**
   * After authenticate() answered null: asks the shared store, for a key created on
   * another instance a moment ago (Redis only). Bounded: one lookup per key hash at a
   * time, a timeout, unknown keys remembered briefly, a rate per instance and per
   * `client` (the caller's address group). Null when the store says the key is unknown
   * or revoked; rejects with StateUnavailableError when it could not ask (shed, timeout,
   * store unreachable). Never answers a key this instance knows to be revoked.
   */
  lookup?(rawKey: string, client?: string): Promise<KeyRecord | null>;
  /** Lookups made by lookup(), by result, since the store opened (for /metrics). */
  lookupCounts?(): Readonly<Record<KeyLookupResult, number>>;
  /** Record that key `id` was used now; kept in memory, flushed within `lastUsedFlushMs`. */
  touch(id: string): void;
  /** Write pending last-used times now. */
  flushLastUsed(): Promise<void>;
  /** Stop watching, flush pending last-used times. Idempotent. */
  close(): Promise<void>;
  /**
   * Runs `work` while no process changes keys through this store's files (it holds the lock
   * every change takes, across processes): a change whose write-ahead record is open then
   * either has been written or never will be. Absent where changes take no lock (Redis).
   */
  whileNoChange?<T>(work: () => Promise<T>): Promise<T>;
}
