// What an authenticated key may do with one request, in request order:
// expiry (401), the resolved alias (403), then its limits (429), answered in
// OpenAI's shapes so SDK retry logic works: Retry-After, retry-after-ms and the
// x-ratelimit-* headers, `insufficient_quota` for a budget (tokens or money) that
// is spent or has too little left for the request. A request that no budget
// window could ever admit gets no Retry-After at all, and a message saying what
// to lower. Successful
// answers carry the same x-ratelimit-* headers. The limiter itself (in-process
// or Redis) is src/limits/.
import { ApiError, AuthenticationError } from '../errors/api-error.ts';
import { AUTO_ALIAS, type GatewayConfig } from '../config/config.ts';
import { listAliases } from '../routing/alias-routing.ts';
import { allowsAlias, isExpired } from '../keys/key-settings.ts';
import type { KeyLimits } from '../limits/key-limits.ts';
import type { KeyGuard } from '../guard/guard-policy.ts';
import { hasAnyLimit } from '../limits/key-limits.ts';
import type { AdmitDecision, BudgetRefusal, Charge, Limiter, Permit, Refusal } from '../limits/limiter.ts';
import { formatAmount } from '../limits/cost.ts';
import { formatResetDuration, rateLimitHeaders, retryAfterSeconds } from '../limits/rate-limit-headers.ts';

export interface KeyPolicy {
  readonly id: string;
  readonly expiresAt: string | null;
  readonly allowedAliases: readonly string[] | null;
  readonly limits: KeyLimits;
  /** The key's egress guard (a stored key's, or a host's policy's); absent or null: none. */
  readonly guard?: KeyGuard | null;
}

/** 401 for a key past its expiry: the client must get a new key, not retry. */
export function checkExpiry(key: KeyPolicy, nowMs: number): void {
  if (isExpired(key, nowMs)) {
    throw new AuthenticationError(`This API key expired at ${key.expiresAt}; ask the gateway's operator for a new key.`);
  }
}

/**
 * The model names a key may ask for, as GET /v1/models lists them: every
 * alias (or those the key is limited to), and service-auto.
 */
export function usableAliases(key: KeyPolicy, config: Pick<GatewayConfig, 'aliases'>): string[] {
  const allowed = key.allowedAliases;
  return listAliases(config).filter((id) => allowed === null || id === AUTO_ALIAS || allowed.includes(id));
}

/** 403 when the key may not use the alias the request resolved to. */
export function checkAlias(key: KeyPolicy, alias: string, requested: string): void {
  if (allowsAlias(key, alias)) return;
  const via = alias === requested ? '' : ` (${requested} resolved to it)`;
  throw new ApiError('model_not_allowed', `This API key may not use '${alias}'${via}. It may use: ${(key.allowedAliases ?? []).join(', ')}.`, {
    param: 'model',
  });
}

export interface Admission {
  /** null when the key has no limits: nothing to settle. */
  permit: Permit | null;
  /** x-ratelimit-* for the answer. */
  headers: Record<string, string>;
}

/** A reservation as admitRequest takes it: what the limiter counts, and its parts for a refusal's message. */
export interface ReservedCharge extends Charge {
  /** The prompt's bound and the output maximum (reservation.ts), when known. */
  readonly promptTokens?: number;
  readonly outputTokens?: number;
}

/**
 * Asks the limiter to admit the request with its reservation (the most it can spend,
 * src/limits/reservation.ts); throws the 429 for a refusal. A StateUnavailableError
 * (503) passes through.
 */
export async function admitRequest(limiter: Limiter, key: KeyPolicy, reservation: ReservedCharge, nowMs: number): Promise<Admission> {
  if (!hasAnyLimit(key.limits)) return { permit: null, headers: {} };
  const charge = { tokens: reservation.tokens, costNanos: reservation.costNanos };
  const decision = await limiter.admit({ keyId: key.id, limits: key.limits, reservation: charge, nowMs });
  if (decision.allowed) return { permit: decision.permit, headers: rateLimitHeaders(decision.snapshot) };
  throw refusalError(decision, key.limits, reservation);
}

/** A 429 from a key's limit; `refusal` says which (for the access log and metrics). */
export class KeyLimitRefusal extends ApiError {
  override name = 'KeyLimitRefusal';
  readonly refusal: Refusal;
  constructor(refusal: Refusal, code: 'rate_limit_exceeded' | 'insufficient_quota', message: string, headers: Record<string, string>) {
    super(code, message, { headers });
    this.refusal = refusal;
  }
}

/**
 * The longest Retry-After the OpenAI SDKs wait for; beyond it openai-node (and, past
 * 120 s, openai-python) drops the header and retries after its own back-off of a second or two.
 */
const SDK_RETRY_AFTER_CAP_MS = 60_000;

/**
 * True for a budget refusal that the SDKs' automatic retries cannot get past: a request
 * above the whole budget (never admitted), or a budget that stays spent (or too low with
 * nothing in flight) longer than the SDKs wait. They retry every 429 unless told
 * `x-should-retry: false`, which they read before the status.
 */
function retryCannotHelp(decision: Extract<AdmitDecision, { allowed: false }>): boolean {
  if (decision.retryAfterMs === null) return true;
  const cause = decision.refusal === 'budget' ? decision.budget?.cause : undefined;
  return (cause === 'spent' || cause === 'too_little_left') && decision.retryAfterMs > SDK_RETRY_AFTER_CAP_MS;
}

function refusalError(decision: Extract<AdmitDecision, { allowed: false }>, limits: KeyLimits, reservation: ReservedCharge): KeyLimitRefusal {
  const { retryAfterMs } = decision;
  // No Retry-After when retrying the same request cannot succeed: SDKs would retry for nothing.
  const headers: Record<string, string> =
    retryAfterMs === null
      ? rateLimitHeaders(decision.snapshot)
      : { ...rateLimitHeaders(decision.snapshot), 'retry-after': retryAfterSeconds(retryAfterMs), 'retry-after-ms': String(Math.max(0, Math.ceil(retryAfterMs))) };
  if (retryCannotHelp(decision)) headers['x-should-retry'] = 'false';
  const wait = formatResetDuration(retryAfterMs ?? 0);
  switch (decision.refusal) {
    case 'budget':
      return new KeyLimitRefusal('budget', 'insufficient_quota', decision.budget === undefined ? 'This API key has spent its budget.' : budgetMessage(decision.budget, reservation), headers);
    case 'requests':
      return new KeyLimitRefusal('requests', 'rate_limit_exceeded', `Rate limit reached for requests per minute on this API key: limit ${limits.requestsPerMinute}. Try again in ${wait}.`, headers);
    case 'tokens':
      return new KeyLimitRefusal('tokens', 'rate_limit_exceeded', `Rate limit reached for tokens per minute on this API key: limit ${limits.tokensPerMinute}. Try again in ${wait}.`, headers);
    case 'concurrency':
      return new KeyLimitRefusal('concurrency', 'rate_limit_exceeded', `Too many requests at once on this API key: limit ${limits.concurrentRequests}. Try again when one finishes.`, headers);
  }
}

/**
 * A budget refusal in words. Amounts of money are written in currency units without
 * the currency (the key's budget is set that way), exactly: 25.51, not 25.510000.
 */
function budgetMessage(b: BudgetRefusal, reservation: ReservedCharge): string {
  const tokens = b.kind === 'tokens';
  const amount = (n: number): string => (tokens ? String(n) : formatAmount(n, 0));
  const what = tokens ? `its token budget of ${b.limit} tokens` : `its spending budget of ${formatAmount(b.limit, 0)}`;
  if (b.cause === 'spent') {
    return `This API key has spent ${what} per ${b.period} (used: ${amount(b.used)}). The budget resets at ${b.resetsAt}.`;
  }
  const may = tokens ? `may use up to ${b.requested} tokens` : `may cost up to ${formatAmount(b.requested, 0)}`;
  if (b.cause === 'exceeds_budget') {
    const { promptTokens, outputTokens } = reservation;
    const parts = promptTokens === undefined || outputTokens === undefined ? 'its prompt and max_tokens' : `a prompt of up to ${promptTokens} tokens and max_tokens ${outputTokens}`;
    return (
      `This request ${may} (${parts}), more than the key's whole ${tokens ? `token budget of ${b.limit} tokens` : `spending budget of ${formatAmount(b.limit, 0)}`} per ${b.period}, ` +
      `so it can never be admitted. Send a lower max_tokens (without it a request reserves the model's output cap: 4096 tokens unless the gateway sets a lower one) or a shorter prompt.`
    );
  }
  const budget = tokens ? 'token budget' : 'spending budget';
  const left = `the key's ${budget} has ${amount(Math.max(0, b.limit - b.used))} left this ${b.period}`;
  if (b.cause === 'too_little_left') {
    return `This request ${may} (its prompt and max_tokens); ${left}, with no requests in flight. Lower max_tokens, or retry after the budget resets at ${b.resetsAt}.`;
  }
  return `This request ${may} (its prompt and max_tokens); ${left}. Lower max_tokens, or retry when the key's requests in flight finish.`;
}
