// The admin API's data as the dashboard sees it (docs: the admin JSON API).
// Types only: imported with `import type`, so the browser never loads this
// module, and the pure modules (format, key-form-input) stay free of the DOM.

export interface KeyLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
  tokenBudget: { tokens: number; period: BudgetPeriod } | null;
  /** Money per UTC day or month, in currency units as written. Absent (older servers, old records) reads as null. */
  costBudget?: CostBudget | null;
}

export interface CostBudget {
  /** Currency units, at most 6 decimals. */
  amount: number;
  period: BudgetPeriod;
}

export type BudgetPeriod = 'day' | 'month';
export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface KeyRecord {
  id: string;
  name: string;
  prefix: string;
  status: KeyStatus;
  createdAt: string;
  revokedAt: string | null;
  expiresAt: string | null;
  rotatedAt: string | null;
  lastUsedAt: string | null;
  /** null: every alias. */
  allowedAliases: string[] | null;
  limits: KeyLimits;
  /** The key's own egress guard (shown, not edited here). Absent (older servers) reads as null. */
  guard?: KeyGuard | null;
}

export type GuardAction = 'off' | 'log' | 'mask' | 'block';

export interface KeyGuard {
  /** Detector or group name -> action, in the order set. */
  detectors: Record<string, GuardAction>;
}

/** The only responses that carry a raw key; the page shows it once and drops it. */
export interface IssuedKey {
  key: string;
  record: KeyRecord;
}

export interface Session {
  csrfToken: string;
  expiresAt: string;
  mustSetPassword: boolean;
  /** Who is signed in; absent from older servers. */
  actor?: { kind: AuditActorKind; id: string; name?: string };
}

/** GET /api/sso: which ways of signing in the login screen offers. */
export interface SignInOptions {
  password: boolean;
  sso: { label: string } | null;
}

export type AuditActorKind = 'cli' | 'password' | 'bootstrap' | 'token' | 'sso' | 'system' | 'anonymous';

export interface AuditActor {
  kind: AuditActorKind;
  id: string;
  uid?: number | null;
  issuer?: string;
  name?: string;
}

/** A plain JSON value, as before/after/detail hold them. */
export type AuditValue = string | number | boolean | null | AuditValue[] | { [field: string]: AuditValue };

/** One line of the audit log (docs/audit.md). */
export interface AuditRecord {
  seq: number;
  time: string;
  actor: AuditActor;
  source: string;
  action: string;
  target: string | null;
  before: { [field: string]: AuditValue } | null;
  after: { [field: string]: AuditValue } | null;
  detail?: { [field: string]: AuditValue };
  prev: string;
  hash: string;
}

export interface AuditPage {
  data: AuditRecord[];
  /** Pass as `before` for the next (older) page; null: this was the oldest. */
  nextBefore: number | null;
}

export type TokenScope = 'read' | 'keys';
export type TokenStatus = 'active' | 'expired' | 'revoked';

/** An admin API token as listed: never the token itself. */
export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  scopes: TokenScope[];
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  status: TokenStatus;
  /** "password:admin", "sso:<sub>", "cli:<user>". */
  createdBy: string;
}

/** POST /api/tokens: the only answer that carries a raw token; shown once. */
export interface IssuedToken {
  token: string;
  record: TokenView;
}

export interface TokenRequest {
  name: string;
  scopes: TokenScope[];
  expiresAt: string;
}

export type Granularity = 'hour' | 'day';

export interface UsageCounts {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
  /** What the requests cost, in integer nanos (1e-9) of the gateway's currency; absent from older servers. */
  costNanos?: number;
  /** The same in currency units (a float, for people reading the JSON; the page uses costNanos). */
  cost?: number;
  /** The egress guard's findings by action (counts only); absent from older servers. */
  guardBlocked?: number;
  guardMasked?: number;
  guardLogged?: number;
}

export interface UsageBucket extends UsageCounts {
  start: string;
}

/** GET /api/usage: every key's usage over the period a series covers. */
export interface UsageByKey {
  granularity: Granularity;
  /** Start of the period's first bucket. */
  from: string;
  data: Array<UsageCounts & { keyId: string }>;
  currency: string;
}

export interface KeyUsage {
  keyId: string;
  granularity: Granularity;
  buckets: UsageBucket[];
  totals: UsageCounts;
  /** `used` includes the reservations of requests still in flight. */
  budget: { tokens: number; used: number; period: BudgetPeriod; resetsAt: string } | null;
  /**
   * The spending budget; `used`/`usedNanos` include requests in flight.
   * `recordedNanos`: all the key's spending the usage records hold for the
   * budget's window (null: not known). Absent from older servers.
   */
  costBudget?: { amount: number; used: number; usedNanos: number; recordedNanos?: number | null; period: BudgetPeriod; resetsAt: string; currency: string } | null;
  /** ISO 4217 code of every money value; absent from older servers. */
  currency?: string;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Per million tokens, in currency units. */
export interface Price {
  input: number;
  cachedInput: number;
  output: number;
}

export interface AliasTarget {
  id: string;
  provider: string;
  model: string;
  weight: number;
  priority: number;
  circuit: CircuitState;
  /** The target's own price, else its alias's; null: no price configured. Absent from older servers. */
  price?: Price | null;
  /** Embeddings aliases only: whether `dimensions` is forwarded to it. */
  acceptsDimensions?: boolean;
  /** Embeddings aliases only: the most inputs one call to it carries. */
  maxInputsPerCall?: number;
}

export interface AliasInfo {
  alias: string;
  /** "chat" or "embeddings"; absent from older servers (chat). */
  kind?: 'chat' | 'embeddings';
  available: boolean;
  maxOutputTokens: number | null;
  contextWindow: number | null;
  capabilities: string[];
  /** OpenAI's request fields beyond the contract's table the alias takes; absent from older servers. */
  requestFields?: string[];
  targets: AliasTarget[];
  /** The alias's default price for targets without their own; absent from older servers. */
  price?: Price | null;
  /** Tokens reserved per image part; absent from older servers. */
  imageTokens?: number;
}

export interface AliasCatalogue {
  data: AliasInfo[];
  auto: { default: string; rules: Array<{ use: string; reason: string }> } | null;
  /** The API listener's address as it listens; absent from older servers. */
  api?: { url: string | null };
  /** ISO 4217 code of every price; absent from older servers. */
  currency?: string;
}

/** Body of POST /api/keys and PATCH /api/keys/{id}; absent fields are left alone by PATCH. */
export interface KeyChanges {
  name?: string;
  allowedAliases?: string[] | null;
  expiresAt?: string | null;
  limits?: KeyLimits;
}

export interface ApiFailure {
  /** HTTP status; 0 when the request never got an answer. */
  status: number;
  message: string;
  type: string;
  param: string | null;
  code: string;
  /** Seconds from Retry-After, when the server sent one. */
  retryAfterSeconds: number | null;
}

export type ApiOutcome<T> = { ok: true; status: number; value: T } | { ok: false; failure: ApiFailure };
