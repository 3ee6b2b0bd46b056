// When to try Redis again after a connection is lost or refused. Pure: the
// client owns the timer and passes the attempt count and a random source.

export interface ReconnectPolicy {
  /** Delay ceiling of the first attempt; doubles with each failed attempt. */
  baseDelayMs: number;
  /** The ceiling never grows past this. */
  maxDelayMs: number;
}

export const DEFAULT_RECONNECT_POLICY: ReconnectPolicy = { baseDelayMs: 50, maxDelayMs: 2000 };

/** Past this many doublings any sane policy is at its cap; stops 2 ** n overflowing. */
const MAX_DOUBLINGS = 30;

/**
 * Exponential backoff with "equal jitter": the ceiling is
 * min(maxDelayMs, baseDelayMs * 2^attempt); half of it is fixed and half is
 * random. The fixed half keeps a flapping Redis from being hammered; the
 * random half keeps N gateway instances, all cut off by the same restart, from
 * reconnecting in lockstep. `attempt` counts consecutive failures from 0;
 * `random` returns a number in [0, 1).
 */
export function reconnectDelayMs(attempt: number, policy: ReconnectPolicy, random: () => number = Math.random): number {
  const doublings = Math.min(Math.max(0, Math.floor(attempt)), MAX_DOUBLINGS);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** doublings);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Throws RangeError for a policy that cannot work (non-positive, or cap below base). */
export function checkReconnectPolicy(policy: ReconnectPolicy): ReconnectPolicy {
  const { baseDelayMs, maxDelayMs } = policy;
  if (!Number.isFinite(baseDelayMs) || baseDelayMs <= 0) throw new RangeError('reconnect.baseDelayMs must be a positive number');
  if (!Number.isFinite(maxDelayMs) || maxDelayMs < baseDelayMs) {
    throw new RangeError('reconnect.maxDelayMs must be a number no smaller than reconnect.baseDelayMs');
  }
  return { baseDelayMs, maxDelayMs };
}
