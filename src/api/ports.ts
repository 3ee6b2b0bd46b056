// The ports a host may implement when it embeds the gateway: where keys live or
// who decides them, usage, limits, the audit tee, logging, provider keys and
// trace export. Public types only: this file imports nothing from the gateway,
// so what a host codes against is what it reads here. Each port has a contract
// suite in `portcullis/testing` that a host runs against its own implementation.
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
  /** The client's TLS certificate when the TLS layer verified it; null otherwise. */
  readonly clientCertificate: { readonly subject: string; readonly fingerprint256: string } | null;
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

// ---------------------------------------------------------------- usage

/** Counters of one key in one bucket, or in total. */
export interface KeyUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
  /** Nanos (1e-9) of the configured currency. */
  costNanos: number;
  guardBlocked: number;
  guardMasked: number;
  guardLogged: number;
}

/** Drained counters: key id → hour start (ms since the epoch) → usage. */
export type PendingUsage = Map<string, Map<number, KeyUsage>>;

export type UsageGranularity = 'hour' | 'day';

export interface UsageBucket extends KeyUsage {
  /** ISO 8601 start of the bucket. */
  start: string;
}

export interface UsageSeries {
  granularity: UsageGranularity;
  /** 48 hours or 30 days in time order, ending with the bucket holding nowMs; empty ones are zeros. */
  buckets: UsageBucket[];
  totals: KeyUsage;
}

/** Where per-key usage is counted, by the hour. Times are milliseconds since the epoch (UTC). */
export interface UsageStore {
  /**
   * Adds drained counters (every 5 s and at close), all or nothing: on failure it
   * rejects and keeps none of them, and the gateway adds them to the next flush.
   */
  add(pending: PendingUsage, nowMs: number): Promise<void>;
  /** One key's usage (admin API): the last 48 hours by hour or 30 days by UTC day, ending with the bucket holding nowMs. */
  series(keyId: string, granularity: UsageGranularity, nowMs: number): Promise<UsageSeries>;
  /** Every key's all-time totals, by key id. */
  totals(): Promise<Map<string, KeyUsage>>;
  /** Every key with stored usage, summed over the window series(id, granularity, nowMs) covers, by key id. */
  periodTotals(granularity: UsageGranularity, nowMs: number): Promise<Map<string, KeyUsage>>;
}

// ---------------------------------------------------------------- limits

/** One per-minute limit's state, as the x-ratelimit-* headers give it. */
export interface LimitWindowState {
  /** The limit per minute (requests or tokens). */
  limit: number;
  /** What is left now, a whole number, at least 0. */
  remaining: number;
  /** A duration, not a time: milliseconds from now until the bucket is full again (0 when full). */
  resetMs: number;
}

export interface RateLimitSnapshot {
  requests?: LimitWindowState;
  tokens?: LimitWindowState;
}

/** What a request reserves at admission or is charged at settlement. */
export interface Charge {
  readonly tokens: number;
  /** Integer nanos of the configured currency. */
  readonly costNanos: number;
}

export interface Permit {
  readonly keyId: string;
  readonly id: string;
  readonly reservation: Charge;
  readonly admittedAtMs: number;
  readonly budgetPeriod: string | null;
  readonly costBudgetPeriod: string | null;
}

/**
 * A budget's refusal. `limit`, `used` and `requested` are tokens, or integer nanos for a
 * cost budget; `used` counts the period's settled charges and the reservations still
 * held; `spent` is used >= limit; `resetsAt` is the period's end (ISO 8601, UTC). Why,
 * and the refusal's retryAfterMs:
 *   - exceeds_budget: the reservation is above the whole budget: never (null);
 *   - spent: used >= limit: until resetsAt;
 *   - held_in_flight: too little room while the key's requests in flight hold reservations: a short wait;
 *   - too_little_left: too little room and nothing in flight: until resetsAt.
 */
export interface BudgetRefusal {
  kind: 'tokens' | 'cost';
  limit: number;
  used: number;
  requested: number;
  period: BudgetPeriod;
  resetsAt: string;
  spent: boolean;
  cause: 'exceeds_budget' | 'spent' | 'held_in_flight' | 'too_little_left';
}

export type AdmitDecision =
  | { allowed: true; permit: Permit; snapshot: RateLimitSnapshot }
  | {
      allowed: false;
      refusal: 'requests' | 'tokens' | 'concurrency' | 'budget';
      /** null: the same request can never be admitted. */
      retryAfterMs: number | null;
      snapshot: RateLimitSnapshot;
      budget?: BudgetRefusal;
    };

/**
 * Per-key limits (KeyLimits) at injected times (nowMs, ms since the epoch, UTC), what
 * runLimiterContract holds an implementation to:
 *   - requestsPerMinute and tokensPerMinute are buckets holding the limit, full at first
 *     and refilled continuously at the limit per 60 s, never above it; a request takes 1
 *     request and its reservation's tokens. The admission's snapshot has a window for each
 *     of the two set (none for a limit not set): `remaining` the whole units left.
 *   - concurrentRequests counts the key's permits in flight (admitted, not settled, lease
 *     not run out).
 *   - tokenBudget and costBudget count per UTC day or month (the budget's period); a cost
 *     budget in integer nanos (amount × 1e9). A reservation counts at admission, in the
 *     period of the admission, and is replaced by the charge at settle, in that same period.
 *     A refusal names the budget (BudgetRefusal) when one refuses, else the limit with the
 *     longest wait; retryAfterMs is how long until the same request can pass.
 *   - A refusal charges nothing. Keys never share anything.
 *   - Every permit of a key with a limit set holds a lease of leaseMs from admit or renew;
 *     a key without limits holds nothing (its permits' renew is false, their settle does
 *     nothing). A lease that ran out frees its slot; its reservation stays charged and a
 *     later settle changes nothing.
 */
export interface Limiter {
  /**
   * Admits a request of `keyId` reserving `reservation` at time nowMs, or refuses it and says
   * why. A permit is the admission as given (keyId, reservation, admittedAtMs), a new id, and
   * the budget periods it counts in: 'YYYY-MM-DD' (day) or 'YYYY-MM' (month), UTC, of nowMs;
   * null for a budget not set.
   */
  admit(input: { keyId: string; limits: KeyLimits; reservation: Charge; nowMs: number }): Promise<AdmitDecision>;
  /**
   * Replaces the reservation with the charge (in the tokens bucket, never above full, and
   * in both budgets) and releases the slot. The charge counts at most maxChargeMultiple times
   * the reservation, per field: 2 when absent, no ceiling when null. Idempotent.
   */
  settle(input: { permit: Permit; limits: KeyLimits; charge: Charge; nowMs: number; maxChargeMultiple?: number | null }): Promise<void>;
  /** Extends the lease to nowMs + leaseMs; false when the permit holds none (settled, run out, or a key without limits). */
  renew(permit: Permit, nowMs: number): Promise<boolean>;
  /**
   * The key's use of its budgets in the current UTC day or month (the period of
   * each budget in `limits`) at time nowMs (ms since the epoch), reservations of
   * requests in flight included: tokens, and cost in integer nanos; 0 for a
   * budget `limits` does not set. For the admin API.
   */
  budgetUsed(keyId: string, limits: KeyLimits, nowMs: number): Promise<{ tokens: number; costNanos: number }>;
  /**
   * A duration in milliseconds: how long a permit lives without renew(), after
   * which its slot is given back; the gateway renews every leaseMs / 3.
   * A whole number of milliseconds, at least 1000: createGateway refuses a host
   * limiter with another value (an error naming limiter.leaseMs).
   */
  readonly leaseMs: number;
  /** Called by the gateway only for a limiter it opened. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------- audit

/** A plain JSON value. */
export type AuditValue = string | number | boolean | null | readonly AuditValue[] | { readonly [field: string]: AuditValue };

/** One record of the audit chain, after the chain gave it its seq and hashes. */
export interface AuditRecord {
  seq: number;
  time: string;
  prev: string;
  hash: string;
  actor: { kind: string; id: string; uid?: number | null; issuer?: string; name?: string };
  source: string;
  action: string;
  target: string | null;
  before: { readonly [field: string]: AuditValue } | null;
  after: { readonly [field: string]: AuditValue } | null;
  detail?: { readonly [field: string]: AuditValue };
}

/**
 * A copy of each audit record, after the chain took it (a SIEM), one at a time in
 * chain order. A rejection is logged and counted; it never blocks the change or
 * loses the chain's record. An append gets 10 s: one unanswered by then is logged
 * and counted, and the next record is handed over. At most 1000 records wait their
 * turn; past that the oldest waiting one is dropped, with a warning naming its seq.
 * At close the sink gets until the drain deadline for what is queued; what it never
 * confirmed is logged by seq.
 */
export interface AuditSink {
  append(record: AuditRecord): Promise<void>;
}

// ---------------------------------------------------------------- logs

/**
 * A log record's fields, as the gateway passes them: never undefined. A field
 * the gateway does not know is left out, or null where the record always has it
 * (RequestLogFields).
 */
export type LogFields = Record<string, string | number | boolean | null>;

/**
 * The fields of the 'request' record (the access line), one per request: each
 * of these always present, null where the gateway does not know it, never
 * undefined; a route may add fields of its own (traceId, guard, ...).
 */
export interface RequestLogFields extends LogFields {
  requestId: string;
  /** null (with path and totalMs) for an answer to bytes that never became a request (400, 408, 431). */
  method: string | null;
  path: string | null;
  /** The client's address, after the configured trusted proxies. */
  client: string | null;
  /** null when the client left before any answer was written. */
  status: number | null;
  keyId: string | null;
  alias: string | null;
  /** The upstream target that answered, `provider/model`. */
  target: string | null;
  /** Why the alias was chosen; the alias name when asked for directly. */
  route: string | null;
  stream: boolean | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** What the request was charged on: usage, reservation, prompt, partial or none. */
  charge: string | null;
  chargedTokens: number | null;
  /** Integer nanos of the configured currency. */
  costNanos: number | null;
  /** The cost in currency units. */
  cost: number | null;
  /** Milliseconds to the status line and headers. */
  ttfbMs: number | null;
  totalMs: number | null;
  /** The whole answer was handed to the socket. */
  completed: boolean;
  /** The error code of a failed request. */
  error: string | null;
}

/**
 * Where the gateway's log records go: the records it writes to stdout otherwise,
 * at every level (a given logger filters by its own level). The 'request' record
 * (info) carries RequestLogFields. A method must not change `fields` (the gateway may reuse the object).
 */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

// ---------------------------------------------------------------- upstream keys

/**
 * The key for a provider (its name in the config), asked on every upstream exchange:
 * a rotated key is used by the next one. undefined: the config's apiKeyEnv/apiKeyFile.
 * Synchronous: keep a cache and refresh it. Never logged.
 */
export type ProviderKeySource = (provider: string) => string | undefined;

// ---------------------------------------------------------------- traces

export type SpanAttributes = Record<string, string | number | boolean>;

/** A finished span. Times in nanoseconds since the epoch. */
export interface SpanData {
  traceId: string;
  spanId: string;
  /** The parent's span id; undefined for a root span (no traceparent came in). */
  parentSpanId: string | undefined;
  /** The W3C tracestate the request brought; undefined when none. */
  traceState: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: 1 | 2 | 3;
  startNs: bigint;
  endNs: bigint;
  attributes: SpanAttributes;
  events: { name: string; timeNs: bigint; attributes: SpanAttributes }[];
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  /** message: undefined unless code is 2 and the gateway has words for it. */
  status: { code: 0 | 1 | 2; message: string | undefined };
  remoteParent: boolean;
  sampled: boolean;
}

/**
 * Where batches of finished spans go, in place of the OTLP POST (batching, queue limits
 * and sampling stay the gateway's). A rejection counts the batch as dropped.
 */
export interface TraceExporter {
  export(spans: readonly SpanData[]): Promise<void>;
  /** Called once at close, after the last batch. */
  shutdown?(): Promise<void>;
}
