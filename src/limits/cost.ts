// Money, in one place. Every stored and summed amount is an integer of nanos
// (1e-9 of the config's currency, as google.type.Money's `nanos`), exact in
// JS doubles and Redis's Lua doubles up to 2^53 - 1 nanos (about 9 million
// currency units). Prices are per million tokens with at most 6 decimals
// (src/config/price-config.ts), so a price is a whole number of micro-units
// per million tokens, and N tokens cost N * micros / 1000 nanos: rounded up
// once, so a charge is never below what the tokens cost.
import type { Price } from '../config/config.ts';

const NANOS_PER_UNIT = 1_000_000_000;
const MIN_DECIMALS = 6;

/**
 * What `tokens` cost at `pricePerMillion` (currency units per million tokens):
 * ceil(tokens * round(price * 1e6) / 1000) nanos, computed in BigInt since the
 * product may pass 2^53. A cost beyond Number.MAX_SAFE_INTEGER (about 9
 * million units; only for absurd token counts) is that maximum: still above
 * any cost budget (at most 1e15 nanos), and still a safe integer to store.
 */
export function costNanos(tokens: number, pricePerMillion: number): number {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`tokens must be a non-negative safe integer; got ${tokens}.`);
  if (!Number.isFinite(pricePerMillion) || pricePerMillion < 0) throw new RangeError(`pricePerMillion must be a non-negative number; got ${pricePerMillion}.`);
  const micros = BigInt(Math.round(pricePerMillion * 1e6));
  const product = BigInt(tokens) * micros;
  const nanos = (product + 999n) / 1000n;
  return nanos > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(nanos);
}

/**
 * What a request's usage costs: the uncached prompt tokens at input, the
 * cached ones at cachedInput, the completion at output. cachedTokens is part
 * of promptTokens (OpenAI's prompt_tokens_details.cached_tokens) and may not
 * exceed it.
 */
export function usageCostNanos(u: { promptTokens: number; cachedTokens: number; completionTokens: number }, price: Price): number {
  if (!Number.isSafeInteger(u.cachedTokens) || u.cachedTokens < 0 || u.cachedTokens > u.promptTokens) {
    throw new RangeError(`cachedTokens must be an integer from 0 to promptTokens (${u.promptTokens}); got ${u.cachedTokens}.`);
  }
  const sum = costNanos(u.promptTokens - u.cachedTokens, price.input) + costNanos(u.cachedTokens, price.cachedInput) + costNanos(u.completionTokens, price.output);
  return Math.min(sum, Number.MAX_SAFE_INTEGER);
}

/**
 * `nanos` for people: "0.000150 USD". Six decimals, more (up to all nine) only
 * when the amount has nonzero digits beyond the sixth: "0.00000015 USD".
 */
export function formatMoney(nanos: number, currency: string): string {
  return `${formatAmount(nanos, MIN_DECIMALS)} ${currency}`;
}

/**
 * `nanos` as an exact decimal in currency units with at least `minDecimals`
 * decimals and no trailing zeros beyond them: (25510000000, 0) -> "25.51",
 * (25000000000, 0) -> "25", (150000, 6) -> "0.000150".
 */
export function formatAmount(nanos: number, minDecimals: number): string {
  if (!Number.isSafeInteger(nanos)) throw new RangeError(`nanos must be a safe integer; got ${nanos}.`);
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(nanos);
  const rest = abs % NANOS_PER_UNIT;
  const units = (abs - rest) / NANOS_PER_UNIT; // an exact quotient
  let fraction = String(rest).padStart(9, '0');
  while (fraction.length > minDecimals && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return fraction === '' ? `${sign}${units}` : `${sign}${units}.${fraction}`;
}

/** Currency units (as a config or an API body writes them) to nanos: 25.5 -> 25_500_000_000. */
export function nanosOf(amount: number): number {
  const nanos = Math.round(amount * NANOS_PER_UNIT);
  if (!Number.isSafeInteger(nanos)) throw new RangeError(`amount must be finite and at most about 9 million units; got ${amount}.`);
  return nanos === 0 ? 0 : nanos; // never -0
}

/** Nanos to currency units, a float for JSON bodies (the nanos stay the exact value). */
export function amountOf(nanos: number): number {
  return nanos / NANOS_PER_UNIT;
}
