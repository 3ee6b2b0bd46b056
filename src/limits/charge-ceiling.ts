// How much of one request's charge the limits count: at most a multiple of
// its reservation (limits.maxChargeMultiple, docs/keys.md "What a request is
// charged"). For text the reservation bounds what an honest upstream reports,
// so the ceiling only matters when an upstream reports more than it could
// have used (a misbehaving or compromised account): without it, answers
// claiming 1000 tokens for requests reserved at 88 would each count eleven
// times what their admission allowed, and a burst would spend a budget many
// times over. The key's usage record keeps what was reported; only the
// limiter's settlement takes the counted charge.
//
// Both limiters settle through countedCharge (memory-limiter.ts, and
// redis-limiter.ts before its script runs), so they count the same numbers.
import { DEFAULT_LIMITS, MAX_CHARGE_MULTIPLE } from '../config/config.ts';
import type { Charge } from './limiter.ts';

/** limits.maxChargeMultiple unless configured: a charge counts at most twice its reservation. */
export const DEFAULT_MAX_CHARGE_MULTIPLE = DEFAULT_LIMITS.maxChargeMultiple;
export { MAX_CHARGE_MULTIPLE };

/**
 * The charge the limits count: each of tokens and cost at most `multiple` times
 * the reservation's. Returns `charge` itself when it is within, so `!==` tells
 * a clamped charge; a multiple of null leaves every charge as it is. A
 * multiple that is not a whole number from 1 to MAX_CHARGE_MULTIPLE is a
 * programming error (the config parser checks it): RangeError.
 */
export function countedCharge(reservation: Charge, charge: Charge, multiple: number | null): Charge {
  if (multiple === null) return charge;
  if (!Number.isSafeInteger(multiple) || multiple < 1 || multiple > MAX_CHARGE_MULTIPLE) {
    throw new RangeError(`maxChargeMultiple must be an integer from 1 to ${MAX_CHARGE_MULTIPLE}; got ${multiple}.`);
  }
  // Products stay exact where they matter: tokens are at most 1e9 (1e11 here), and a
  // cost product beyond 2^53 is far above any charge, which min() then keeps.
  const tokenCeiling = reservation.tokens * multiple;
  const costCeiling = reservation.costNanos * multiple;
  if (charge.tokens <= tokenCeiling && charge.costNanos <= costCeiling) return charge;
  return { tokens: Math.min(charge.tokens, tokenCeiling), costNanos: Math.min(charge.costNanos, costCeiling) };
}
