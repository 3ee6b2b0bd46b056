// When to try an upstream call again, how long to wait first, and when to give
// up on a target and move to the next one. Pure functions over data: the clock
// and the random source are arguments, so every decision is reproducible.

import { ApiError } from '../errors/api-error.ts';
import { catalogueEntry, Failure } from '../errors/catalogue.ts';
import { isClientAbort } from './upstream-errors.ts';

export interface RetryPolicy {
  /** Attempts per target, the first included. */
  maxAttempts: number;
  /** Backoff ceiling for the first retry; doubles with every further retry. */
  baseDelayMs: number;
  /** Backoff ceiling, whatever the attempt. */
  maxDelayMs: number;
  /** An upstream Retry-After longer than this is not waited for: the
   * dispatcher moves to the next target at once (or answers 429). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  baseDelayMs: 200,
  maxDelayMs: 5000,
  maxRetryAfterMs: 30_000,
});

/**
 * The wait before retrying after failed attempt number `attempt` (1-based):
 * "full jitter", a uniform draw in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))).
 * Full jitter rather than a fixed or equal-jitter schedule because many gateway
 * requests fail at the same moment when an upstream hiccups; spreading their
 * retries over the whole window keeps them from arriving as a second wave.
 * (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/)
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  // 2^30 already exceeds any sane maxDelayMs; the cap keeps the power finite.
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  if (!(ceiling > 0)) return 0;
  const draw = random();
  // A random source that returns 1 (or garbage) must not push past the ceiling.
  const unit = draw >= 0 && draw < 1 ? draw : 0;
  return Math.floor(unit * ceiling);
}

/** What the dispatcher does after a failed attempt. */
export const FailureClass = {
  /** Try the same target again after a wait. */
  Retry: 'retry',
  /** Give up on this target and try the next one at once. */
  Fallback: 'fallback',
  /** Stop and hand the error to the client as it is. */
  Fatal: 'fatal',
} as const;
export type FailureClass = (typeof FailureClass)[keyof typeof FailureClass];

/**
 * The classification of the errors the provider adapters throw: each code's
 * `failure` in the error catalogue (src/errors/catalogue.ts) decides.
 *
 * | failure (codes)                                | class    | why                                                          |
 * |------------------------------------------------|----------|--------------------------------------------------------------|
 * | transient: upstream_unreachable (refused,      | retry    | a network blip or a restarting server: the next attempt,    |
 * |   reset, connection lost)                      |          | a moment later, usually gets through                         |
 * | transient: rate_limit_exceeded (any 429)       | retry    | the upstream said "later", often with a Retry-After to obey  |
 * | transient: upstream_error (HTTP 5xx, an error  | retry    | overload and crashes are mostly transient; an error event    |
 * |   event in the stream, an unexpected status)   |          | before any chunk has reached the client is the same thing   |
 * | transient: upstream_stream_truncated           | retry    | only seen before the first chunk here (after it nothing is   |
 * |                                                |          | retried): the upstream dropped the stream, like a reset      |
 * | target: upstream_timeout (connect, first byte, | fallback | a wait already spent a whole timeout; spending it again on   |
 * |   idle, total, or an upstream 408)             |          | the same target multiplies latency, another may be healthy  |
 * | target: upstream_auth_failed (401/403)         | fallback | the gateway's credentials for this target: the same answer   |
 * |                                                |          | every time, but another target has other credentials         |
 * | target: upstream_not_found (404)               | fallback | this target's model or URL mapping is wrong; same reasoning  |
 * | target: bad_upstream_response                  | fallback | the upstream does not speak the protocol (not JSON, not an   |
 * |                                                |          | event stream, too large): it will not improve on a retry     |
 * | target: upstream_schema_mismatch               | fallback | the answer breaks the request's strict json_schema: another  |
 * |                                                |          | model may hold to it; never counted against the breaker      |
 * | target: upstream_tls_failed (unknown CA, name, | fallback | only configuration fixes a handshake: the same target fails  |
 * |   client certificate, version)                 |          | the same way, another may be set up right                    |
 * | target: upstream_proxy_failed (ERR_PROXY_*)    | fallback | the proxy refused or is down: never retried in a loop here;  |
 * |                                                |          | another target may not need it (clients may retry later)     |
 * | gateway: other 5xx codes                       | fallback | unknown server-side trouble: do not hammer, try elsewhere    |
 * | request: upstream_rejected_request (the        | fatal    | the client's request: another target would reject it too,    |
 * |   upstream judged the request) and every 4xx   |          | and the client needs the upstream's words to fix it          |
 * | client abort (ClientAbortError)                | fatal    | nobody is waiting for an answer any more                     |
 * | anything else (a bug)                          | fatal    | retrying a bug hides it; the error boundary answers 500      |
 */
export function classifyFailure(error: unknown): FailureClass {
  if (isClientAbort(error)) return FailureClass.Fatal;
  if (!(error instanceof ApiError)) return FailureClass.Fatal;
  const failure = catalogueEntry(error.code).failure;
  switch (failure) {
    case Failure.Transient:
      return FailureClass.Retry;
    case Failure.Target:
    case Failure.Gateway:
      return FailureClass.Fallback;
    case Failure.Request:
      return FailureClass.Fatal;
    default:
      return unreachable(failure);
  }
}

function unreachable(failure: never): never {
  throw new TypeError(`unknown failure class ${String(failure)}`);
}
