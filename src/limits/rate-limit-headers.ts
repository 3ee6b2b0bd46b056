// The rate-limit headers of OpenAI's API, from a limiter snapshot.
//
// x-ratelimit-{limit,remaining,reset}-{requests,tokens}, for the configured limits
// only. Resets are durations in Go's time.Duration notation ("1s", "6m0s", "20ms",
// "1.5s"), which is what OpenAI sends and what clients parse (go-openai hands them to
// time.ParseDuration). Retry-After is whole seconds (RFC 9110 delay-seconds).
import type { LimitWindowState, RateLimitSnapshot } from './limiter.ts';

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60_000;
const MS_PER_HOUR = 3_600_000;

/**
 * A duration as Go prints it, at millisecond resolution. Rounding: a fractional
 * millisecond is rounded up (a client that waits the stated time is never early);
 * negative values print as "0s". Under a second: "20ms"; otherwise hours and minutes
 * appear from the largest non-zero unit down, seconds always, with the milliseconds
 * as a decimal fraction without trailing zeros: "1s", "1.5s", "6m0s", "1h2m3.004s".
 */
export function formatResetDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`A reset duration must be a finite number of milliseconds; got ${ms}.`);
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < MS_PER_SECOND) return `${total}ms`;
  const hours = Math.floor(total / MS_PER_HOUR);
  const minutes = Math.floor((total % MS_PER_HOUR) / MS_PER_MINUTE);
  const seconds = Math.floor((total % MS_PER_MINUTE) / MS_PER_SECOND);
  const millis = total % MS_PER_SECOND;
  const fraction = millis === 0 ? '' : `.${String(millis).padStart(3, '0').replace(/0+$/, '')}`;
  const secondsPart = `${seconds}${fraction}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsPart}`;
  if (minutes > 0) return `${minutes}m${secondsPart}`;
  return secondsPart;
}

/** The x-ratelimit-* headers for the limits present in `snapshot`, in OpenAI's order. */
export function rateLimitHeaders(snapshot: RateLimitSnapshot): Record<string, string> {
  const headers: Record<string, string> = {};
  const sets: [string, LimitWindowState | undefined][] = [
    ['requests', snapshot.requests],
    ['tokens', snapshot.tokens],
  ];
  for (const [name, state] of sets) if (state !== undefined) headers[`x-ratelimit-limit-${name}`] = String(state.limit);
  for (const [name, state] of sets) if (state !== undefined) headers[`x-ratelimit-remaining-${name}`] = String(state.remaining);
  for (const [name, state] of sets) if (state !== undefined) headers[`x-ratelimit-reset-${name}`] = formatResetDuration(state.resetMs);
  return headers;
}

/** Retry-After value: whole seconds, rounded up so a client is never early, at least 1. */
export function retryAfterSeconds(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`A retry delay must be a finite number of milliseconds; got ${ms}.`);
  return String(Math.max(1, Math.ceil(ms / MS_PER_SECOND)));
}
