// The admin token store port: where admin API tokens live. Two adapters: the data
// directory's admin-tokens.json (file-admin-token-store.ts, one host) and Redis
// (redis-admin-token-store.ts, shared by every instance). Both apply the record
// functions of src/keys/admin-token.ts and do only the I/O around them;
// test/state/admin-token-store-contract.ts holds both to one set of cases.
//
// Every call reads the store fresh (admin traffic is rare and a token list is at
// most a few hundred records), so a token revoked anywhere (the CLI, another
// instance) is refused by the very next request.
import type { AdminTokenRecord, NewAdminTokenInput } from '../keys/admin-token.ts';

export type { AdminTokenRecord, NewAdminTokenInput } from '../keys/admin-token.ts';

/** A new token: the token itself, shown once and never stored, and what is stored. */
export interface IssuedAdminToken {
  token: string;
  record: AdminTokenRecord;
}

/**
 * Called with a token change once it is decided and before it is written (under the store's
 * lock, or within one compare-and-set attempt); when it rejects, nothing is written. The
 * audit trail's write-ahead record is made here (audited-token-store.ts).
 */
export type TokenWriteAhead = (change: { before: AdminTokenRecord | null; after: AdminTokenRecord }) => Promise<void>;

export interface AdminTokenStore {
  /** Where the tokens live, for messages: a file path or a Redis address. */
  readonly location: string;
  /**
   * Create a token at `nowMs`; InvalidTokenSettingError naming the field, or
   * AdminTokenLimitError when MAX_LIVE_TOKENS are live.
   */
  create(input: NewAdminTokenInput, nowMs: number, ahead?: TokenWriteAhead): Promise<IssuedAdminToken>;
  /** Every token (revoked and expired ones too), oldest first (by createdAt). */
  list(): Promise<AdminTokenRecord[]>;
  /** Mark a token revoked at `nowMs`; AdminTokenNotFoundError or AdminTokenAlreadyRevokedError otherwise. */
  revoke(id: string, nowMs: number, ahead?: TokenWriteAhead): Promise<AdminTokenRecord>;
  /**
   * The record of `token` whatever its status (the caller judges revoked and
   * expired), or null for an unknown or malformed token. Malformed tokens are
   * refused before any I/O.
   */
  findByToken(token: string): Promise<AdminTokenRecord | null>;
  /** Runs `work` while no process changes tokens through this store's file (holding its lock); absent for Redis. */
  whileNoChange?<T>(work: () => Promise<T>): Promise<T>;
}
