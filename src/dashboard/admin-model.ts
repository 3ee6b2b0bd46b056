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
}

export interface UsageBucket extends UsageCounts {
  start: string;
}

export interface KeyUsage {
  keyId: string;
  granularity: Granularity;
  buckets: UsageBucket[];
  totals: UsageCounts;
  /** `used` includes the reservations of requests still in flight. */
  budget: { tokens: number; used: number; period: BudgetPeriod; resetsAt: string } | null;
  /** The spending budget; `used`/`usedNanos` include requests in flight. Absent from older servers. */
  costBudget?: { amount: number; used: number; usedNanos: number; period: BudgetPeriod; resetsAt: string; currency: string } | null;
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
}

export interface AliasInfo {
  alias: string;
  available: boolean;
  maxOutputTokens: number | null;
  contextWindow: number | null;
  capabilities: string[];
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
