// A per-minute token bucket in exact integer arithmetic.
//
// A bucket for "L per minute" holds up to L units and refills L / 60000 units per
// millisecond. Fractions of a unit would make float error accumulate across refills, so
// the level is kept in 1/60000ths of a unit ("scaled units"): capacity = L * 60000 and
// the refill is exactly L scaled units per millisecond. With L <= 1e9 and a single charge
// <= 1e9 tokens every value stays an integer below 2^53, so the arithmetic is exact in
// JavaScript and in Redis' Lua (doubles) alike, and both implementations agree to the unit.
//
// The level may be negative (debt): settlement charges actual tokens beyond the
// estimate after the fact, and that debt delays later requests.

/** Milliseconds per window; also the scale of the level. */
export const WINDOW_MS = 60_000;
/**
 * Lowest level, in scaled units. Debt only grows through settlements of huge
 * underestimates; the floor keeps the level far inside the exact-integer range
 * (2^53 is about 9e15) whatever happens. 1e15 is ~16.7e9 tokens of debt.
 */
export const DEBT_FLOOR = -1e15;

export interface BucketState {
  /** The limit per minute the level was last computed for. */
  readonly limit: number;
  /** Scaled units (1/60000 of a request or token); may be negative. */
  readonly level: number;
  /** Latest time the bucket has seen; never moves backwards, so a clock step cannot mint units. */
  readonly lastMs: number;
}

/**
 * The bucket as of `nowMs`: a new bucket starts full; a known one gains `limit` scaled
 * units per millisecond since lastMs, up to capacity. A lowered limit clamps the level
 * to the new capacity; a raised one keeps the level and refills at the new rate. When
 * `nowMs` is before lastMs (clock stepped back, or another instance's clock is behind)
 * no time has passed: lastMs stays, and refill resumes only once the clock passes it.
 */
export function refill(bucket: BucketState | undefined, limit: number, nowMs: number): BucketState {
  const capacity = limit * WINDOW_MS;
  if (bucket === undefined) return { limit, level: capacity, lastMs: nowMs };
  let level = Math.min(bucket.level, capacity);
  const elapsed = nowMs - bucket.lastMs;
  if (elapsed > 0 && level < capacity) {
    const missing = capacity - level;
    // Compare in milliseconds first so a long idle time never multiplies into a huge number.
    level = elapsed >= Math.ceil(missing / limit) ? capacity : level + elapsed * limit;
  }
  return { limit, level, lastMs: Math.max(bucket.lastMs, nowMs) };
}

/** `cost` units taken (negative `cost` gives units back), clamped to [DEBT_FLOOR, capacity]. */
export function charge(bucket: BucketState, cost: number): BucketState {
  const level = Math.min(bucket.limit * WINDOW_MS, Math.max(DEBT_FLOOR, bucket.level - cost * WINDOW_MS));
  return { limit: bucket.limit, level, lastMs: bucket.lastMs };
}

/**
 * Milliseconds from `nowMs` until the (refilled) bucket holds `units`, 0 if it does now.
 * Includes the time until the clock catches up with lastMs after a backwards step.
 */
export function msUntilLevel(bucket: BucketState, units: number, nowMs: number): number {
  const needed = units * WINDOW_MS;
  if (bucket.level >= needed) return 0;
  return Math.max(0, bucket.lastMs - nowMs) + Math.ceil((needed - bucket.level) / bucket.limit);
}

/** Whole units available now: floor(level), never below 0 (debt shows as 0). */
export function remainingUnits(bucket: BucketState): number {
  return Math.max(0, Math.floor(bucket.level / WINDOW_MS));
}

/** True when the bucket is at capacity: it holds nothing a fresh bucket would not. */
export function isFull(bucket: BucketState): boolean {
  return bucket.level >= bucket.limit * WINDOW_MS;
}
