// Rate limit for admin login attempts: a pure policy over an injected clock.
//
// Per client (the caller's choice of key, normally the remote address): after
// `maxFailures` failed logins within `windowMs` of the first one, the client is
// refused for `lockoutMs`. A success clears the client's record.
//
// Across all clients: after `maxGlobalFailures` failures within one `windowMs` window,
// every client is refused until that window ends. This slows a guess spread over
// many addresses to `maxGlobalFailures` per window (100 per 15 min by default: under
// 10,000 a day, hopeless against a 12-character password). The price is that such an
// attack also locks the real admin out of the dashboard until the window ends; the
// CLI (`portcullis admin set-password`, `portcullis keys`) keeps working. Failures
// that are no guess at the password (an unknown admin API token) count per client
// only (`failure(client, {global: false})`), so they cannot trigger that lockout.
//
// Memory is bounded: at most `maxClients` client records. Making room drops records
// that no longer matter first (window over, not locked), then the least recently
// failed one; an attacker with that many addresses could thus lift one client's
// lockout, but the global ceiling still holds.
//
// check() does not reserve anything: attempts checked in parallel are all allowed
// before the first failure() is recorded. Callers should run check, verify and
// failure/success for one login at a time (the scrypt verify is worth serialising
// anyway: it takes 32 MiB and tens of milliseconds).

const DEFAULT_MAX_LOGIN_FAILURES = 5;
const DEFAULT_LOGIN_WINDOW_MS = 15 * 60 * 1000;
const DEFAULT_LOGIN_LOCKOUT_MS = 15 * 60 * 1000;
const DEFAULT_MAX_THROTTLED_CLIENTS = 10_000;
const DEFAULT_MAX_GLOBAL_LOGIN_FAILURES = 100;
/** Client keys are addresses; anything longer is cut so a record stays small. */
const MAX_CLIENT_KEY_LENGTH = 256;

export interface LoginThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  lockoutMs?: number;
  maxClients?: number;
  maxGlobalFailures?: number;
  /** Milliseconds since the epoch; Date.now by default. */
  clock?: () => number;
}

export type LoginDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

export interface LoginThrottle {
  /** May `client` try a password now? */
  check(client: string): LoginDecision;
  /**
   * `client` presented a wrong password. `global: false` counts it for the client only,
   * not toward the global ceiling: for failures that are no guess at the password (an
   * unknown admin API token), so they cannot lock everyone out of the password login.
   */
  failure(client: string, options?: { global?: boolean }): void;
  /** `client` logged in: its failures are forgotten (the global count is not). */
  success(client: string): void;
  /** Client records held, for tests and metrics. */
  readonly trackedClients: number;
}

interface ClientRecord {
  windowStartMs: number;
  failures: number;
  lockedUntilMs: number;
}

const ALLOWED: LoginDecision = { allowed: true };

function requirePositiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const maxFailures = requirePositiveInteger(options.maxFailures ?? DEFAULT_MAX_LOGIN_FAILURES, 'maxFailures');
  const windowMs = requirePositiveInteger(options.windowMs ?? DEFAULT_LOGIN_WINDOW_MS, 'windowMs');
  const lockoutMs = requirePositiveInteger(options.lockoutMs ?? DEFAULT_LOGIN_LOCKOUT_MS, 'lockoutMs');
  const maxClients = requirePositiveInteger(options.maxClients ?? DEFAULT_MAX_THROTTLED_CLIENTS, 'maxClients');
  const maxGlobalFailures = requirePositiveInteger(options.maxGlobalFailures ?? DEFAULT_MAX_GLOBAL_LOGIN_FAILURES, 'maxGlobalFailures');
  const clock = options.clock ?? Date.now;
  // Insertion order is the order of last failure: the first entry is the stalest.
  const clients = new Map<string, ClientRecord>();
  let globalWindowStartMs = Number.NEGATIVE_INFINITY;
  let globalFailures = 0;

  function keyOf(client: string): string {
    return String(client).slice(0, MAX_CLIENT_KEY_LENGTH);
  }

  function isLive(record: ClientRecord, nowMs: number): boolean {
    return nowMs < record.lockedUntilMs || nowMs - record.windowStartMs < windowMs;
  }

  function globalRetryAfterMs(nowMs: number): number {
    const windowEndMs = globalWindowStartMs + windowMs;
    return globalFailures >= maxGlobalFailures && nowMs < windowEndMs ? windowEndMs - nowMs : 0;
  }

  function makeRoom(nowMs: number): void {
    if (clients.size < maxClients) return;
    for (const [key, record] of clients) if (!isLive(record, nowMs)) clients.delete(key);
    while (clients.size >= maxClients) {
      const stalest = clients.keys().next();
      if (stalest.done === true) break;
      clients.delete(stalest.value);
    }
  }

  function countGlobalFailure(nowMs: number): void {
    if (nowMs - globalWindowStartMs >= windowMs) {
      globalWindowStartMs = nowMs;
      globalFailures = 0;
    }
    globalFailures++;
  }

  return {
    check(client) {
      const nowMs = clock();
      const record = clients.get(keyOf(client));
      const clientWaitMs = record !== undefined && nowMs < record.lockedUntilMs ? record.lockedUntilMs - nowMs : 0;
      const waitMs = Math.max(clientWaitMs, globalRetryAfterMs(nowMs));
      return waitMs > 0 ? { allowed: false, retryAfterMs: waitMs } : ALLOWED;
    },
    failure(client, failureOptions) {
      const nowMs = clock();
      if (failureOptions?.global !== false) countGlobalFailure(nowMs);
      const key = keyOf(client);
      let record = clients.get(key);
      clients.delete(key);
      if (record !== undefined && nowMs < record.lockedUntilMs) {
        // Already locked out: the lockout is not extended, but the record becomes the
        // most recent, so a client still hammering is the last to be dropped.
        clients.set(key, record);
        return;
      }
      if (record === undefined || nowMs - record.windowStartMs >= windowMs) {
        makeRoom(nowMs);
        record = { windowStartMs: nowMs, failures: 0, lockedUntilMs: 0 };
      }
      record.failures++;
      if (record.failures >= maxFailures) {
        // The next window opens when the lockout ends.
        record.lockedUntilMs = nowMs + lockoutMs;
        record.windowStartMs = record.lockedUntilMs;
        record.failures = 0;
      }
      clients.set(key, record);
    },
    success(client) {
      clients.delete(keyOf(client));
    },
    get trackedClients() {
      return clients.size;
    },
  };
}
