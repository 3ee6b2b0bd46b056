// What one chat request is charged once it is over, however it ended: the one
// set of numbers both the key's usage record and the limiter's settlement take
// (so they never disagree). Pure: the call object (./call.ts) gathers the
// facts, this decides.
//
// The rules, by how far the request got (docs/keys.md, "What a request is charged"):
//   - never sent upstream (the client left while the limiter decided): nothing;
//   - sent, and the upstream failed before answering (refused, timed out, an
//     error status): nothing, as providers bill no failed call. An answer the
//     gateway could not use (`bad_upstream_response`, or off the request's strict
//     schema: `upstream_schema_mismatch`) was produced upstream: the reservation.
//     Calls the upstream did answer before the request failed (the other parts
//     of a split embeddings request) were billed: their usage (`partial` when
//     some reported none and count their inputs' bound), each at its target's price;
//   - sent, and the client left before any answer: the prompt's bound, at the
//     highest input price of the alias's targets, since the provider bills the
//     prompt it already read;
//   - an answer started and was cut (the client left, the upstream broke off, a
//     shutdown): the usage the upstream reported so far if any, else the prompt's
//     bound plus the UTF-8 bytes generated so far (capped at the output maximum);
//   - a finished answer: the upstream's usage when it reported a sane one, else
//     the reservation (logged as `usage_bad` or `usage_missing`).
// Usage is sane when every count is an integer from 0 to MAX_REPORTED_TOKENS and
// the cached tokens are no more than the prompt's. normalizeUsage already refuses
// negatives, fractions and non-numbers as a malformed answer.
import type { Usage } from '../chat/types.ts';
import type { Price } from '../config/config.ts';
import { costNanos, usageCostNanos } from '../limits/cost.ts';
import { MAX_CHARGE_NANOS } from '../limits/limiter.ts';
import type { Reservation } from '../limits/reservation.ts';

/** More tokens than any model's context in one count: an upstream reporting this is broken. */
export const MAX_REPORTED_TOKENS = 100_000_000;

/** How far a call got, in order. The charge rules read it: before `sent` nothing was asked of an upstream. */
export const CallPhase = {
  /** The request arrived; nothing checked yet. */
  Received: 'received',
  /** Its key is known and valid. */
  Authenticated: 'authenticated',
  /** Its body is valid and its alias and targets are chosen. */
  Routed: 'routed',
  /** The key's limits let it through (its permit, if any, is held). */
  Admitted: 'admitted',
  /** The upstream call began; no answer reached the client yet. */
  Sent: 'sent',
  /** The first bytes of the answer went to the client. */
  Answering: 'answering',
  /** The whole answer came from the upstream. */
  Answered: 'answered',
  /** The response closed: charged, settled and logged. */
  Closed: 'closed',
} as const;
export type CallPhase = (typeof CallPhase)[keyof typeof CallPhase];

/** The phases before the upstream call: nothing to charge. */
function notSent(phase: CallPhase): boolean {
  return phase === CallPhase.Received || phase === CallPhase.Authenticated || phase === CallPhase.Routed || phase === CallPhase.Admitted;
}

/** How the charge was decided, for the access log's `charge` field. */
export type ChargeBasis = 'none' | 'usage' | 'reservation' | 'prompt' | 'partial';

export interface ChargeFacts {
  readonly reservation: Reservation;
  readonly phase: CallPhase;
  /** The request ended because the client left (or a shutdown cut it). */
  readonly clientLeft: boolean;
  /** The error code the request failed with, if it failed. */
  readonly errorCode: string | undefined;
  /** The upstream's usage: final when phase is Answered, a running total otherwise. */
  readonly usage: Usage | undefined;
  /** UTF-8 bytes of the generated text relayed so far (content, refusals, tool calls). */
  readonly generatedBytes: number;
  /** Price of the target that answered; null when unpriced or no target answered. */
  readonly answeredPrice: Price | null;
  /** Prices of every target of the alias (null entries for unpriced ones). */
  readonly prices: readonly (Price | null)[];
  /** What the upstreams billed for the calls they answered, each at its target's price (the parts of an
   * embeddings request, over all its attempts); null for a request of one call per attempt (chat). */
  readonly billed?: BilledCalls | null | undefined;
}

/** Calls an upstream answered and billed, priced: ./embeddings-endpoint.ts sums its EmbeddingsBill so. */
export interface BilledCalls {
  readonly promptTokens: number;
  /** Each call's tokens at its own target's input price. */
  readonly costNanos: number;
  /** Some call reported no usage: its tokens are its inputs' bound, not a count. */
  readonly estimated: boolean;
}

export interface RequestCharge {
  readonly basis: ChargeBasis;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens: number;
  readonly costNanos: number;
  /** Why a reported usage was not used (`usage_bad: ...`, `usage_missing`), for a warning. */
  readonly note?: string;
}

const NOTHING: RequestCharge = { basis: 'none', promptTokens: 0, completionTokens: 0, cachedTokens: 0, costNanos: 0 };

export function chargeFor(facts: ChargeFacts): RequestCharge {
  const { reservation, phase } = facts;
  if (notSent(phase)) return NOTHING;
  if (phase === CallPhase.Sent) {
    if (facts.clientLeft) return promptCharge(reservation.promptTokens, 0, highestInput(facts.prices), 'prompt');
    if (facts.errorCode === 'bad_upstream_response' || facts.errorCode === 'upstream_schema_mismatch') return reservationCharge(facts, undefined);
    // Calls the upstream answered (and billed) before the request failed: the parts of an embeddings request.
    if (facts.billed != null && facts.billed.promptTokens > 0) return billedCharge(facts.billed);
    return NOTHING;
  }
  if (facts.billed != null) return facts.billed.estimated ? reservationCharge(facts, 'usage_missing') : billedCharge(facts.billed);
  const problem = facts.usage === undefined ? 'usage_missing' : usageProblem(facts.usage);
  if (problem === null && facts.usage !== undefined) return usageCharge(facts.usage, facts.answeredPrice);
  if (phase === CallPhase.Answering && facts.usage === undefined) {
    const generated = Math.min(facts.generatedBytes, reservation.outputTokens);
    return promptCharge(reservation.promptTokens, generated, facts.answeredPrice, 'partial');
  }
  return reservationCharge(facts, problem ?? undefined);
}

/** Reported usage (`usage`), or with some calls' tokens estimated from their inputs (`partial`). */
function billedCharge(billed: BilledCalls): RequestCharge {
  return { basis: billed.estimated ? 'partial' : 'usage', promptTokens: billed.promptTokens, completionTokens: 0, cachedTokens: 0, costNanos: Math.min(billed.costNanos, MAX_CHARGE_NANOS) };
}

function usageCharge(u: Usage, price: Price | null): RequestCharge {
  const charged = { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, cachedTokens: u.prompt_tokens_details.cached_tokens };
  // At the highest price (10000 per million) the largest believed usage costs 2e15 nanos,
  // more than the limiter takes in one charge (MAX_CHARGE_NANOS, the largest cost budget):
  // capped, so the record and the settlement still hold the same number and settle succeeds.
  const cost = price === null ? 0 : Math.min(usageCostNanos(charged, price), MAX_CHARGE_NANOS);
  return { basis: 'usage', ...charged, costNanos: cost };
}

/** Why a reported usage cannot be charged, or null when it can. */
export function usageProblem(usage: Usage): string | null {
  const counts: Array<[string, number]> = [
    ['prompt_tokens', usage.prompt_tokens],
    ['completion_tokens', usage.completion_tokens],
    ['prompt_tokens_details.cached_tokens', usage.prompt_tokens_details.cached_tokens],
  ];
  for (const [name, value] of counts) {
    if (!Number.isSafeInteger(value) || value < 0 || value > MAX_REPORTED_TOKENS) return `usage_bad: ${name} out of range`;
  }
  if (usage.prompt_tokens_details.cached_tokens > usage.prompt_tokens) return 'usage_bad: cached_tokens above prompt_tokens';
  return null;
}

function reservationCharge(facts: ChargeFacts, note: string | undefined): RequestCharge {
  const { reservation } = facts;
  const price = facts.answeredPrice;
  const cost = price === null ? reservation.costNanos : costNanos(reservation.promptTokens, price.input) + costNanos(reservation.outputTokens, price.output);
  const charge: RequestCharge = { basis: 'reservation', promptTokens: reservation.promptTokens, completionTokens: reservation.outputTokens, cachedTokens: 0, costNanos: cost };
  return note === undefined ? charge : { ...charge, note };
}

function promptCharge(promptTokens: number, completionTokens: number, price: Price | null, basis: ChargeBasis): RequestCharge {
  const cost = price === null ? 0 : costNanos(promptTokens, price.input) + costNanos(completionTokens, price.output);
  return { basis, promptTokens, completionTokens, cachedTokens: 0, costNanos: cost };
}

/** The price with the highest input rate among `prices` (an upper bound for a prompt whose target is unknown). */
function highestInput(prices: readonly (Price | null)[]): Price | null {
  let best: Price | null = null;
  for (const p of prices) if (p !== null && (best === null || p.input > best.input)) best = p;
  return best;
}
