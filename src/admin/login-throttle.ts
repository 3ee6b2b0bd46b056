// Rate limit for failed admin credentials: a pure policy over an injected
// scheduler (its monotonic clock: a wall clock stepped back cannot lift a lockout).
// The admin listener keeps two, each with its own budget: one for the password
// login (per address and global) and one for unknown admin API tokens (per
// address only: token-auth.ts), so neither can lock the other out.
//
// Per client (the caller passes the client address, ctx.clientAddress): after
// `maxFailures` failed logins within `windowMs` of the first one, the client is
// refused for `lockoutMs`. A success clears the client's record. A client is
// its address group (src/http/address-group.ts), as the connection share
// counts it: an IPv6 client by its /56, so rotating addresses within the
// block its provider gave it buys no fresh budget.
//
// Across all clients: after `maxGlobalFailures` failures within one `windowMs` window,
// every client is refused until that window ends. This slows a guess spread over
// many addresses to `maxGlobalFailures` per window (100 per 15 min by default: under
// 10,000 a day, hopeless against a 12-character password). The price is that such an
// attack also locks the real admin out of the password login until the window
// ends; single sign-on, admin API tokens and the CLI (`portcullis admin
// set-password`, `portcullis keys`) keep working. `maxGlobalFailures: null` keeps
// no global count (the unknown-token budget: a token cannot be guessed, so
// tokens from many addresses are no attack a global ceiling would slow).
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

import { addressGroup } from '../http/address-group.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

const DEFAULT_MAX_LOGIN_FAILURES = 5;
const DEFAULT_LOGIN_WINDOW_MS = 15 * 60 * 1000;
const DEFAULT_LOGIN_LOCKOUT_MS = 15 * 60 * 1000;
const DEFAULT_MAX_THROTTLED_CLIENTS = 10_000;
const DEFAULT_MAX_GLOBAL_LOGIN_FAILURES = 100;
/** Client keys are address groups; anything longer is cut so a record stays small. */
const MAX_CLIENT_KEY_LENGTH = 256;

export interface LoginThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  lockoutMs?: number;
  maxClients?: number;
  /** Failures from all clients within one window that refuse everyone; null: no global ceiling. */
  maxGlobalFailures?: number | null;
  /** Where the time comes from (its monotonic clock); the system's by default. */
  scheduler?: Scheduler;
}

/** Which budget refused: the client's own, or the one all clients share. */
export type LoginLimit = 'client' | 'global';

export type LoginDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number; readonly limit: LoginLimit };

/** The budgets a throttle keeps, for the words of its refusals. */
export interface LoginThrottleSettings {
  readonly maxFailures: number;
  readonly windowMs: number;
  readonly lockoutMs: number;
  readonly maxGlobalFailures: number | null;
}

export interface LoginThrottle {
  /** May `client` try now? */
  check(client: string): LoginDecision;
  /** `client` presented a wrong credential. */
  failure(client: string): void;
  /** `client` logged in: its failures are forgotten (the global count is not). */
  success(client: string): void;
  readonly settings: LoginThrottleSettings;
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
  const maxGlobalFailures = options.maxGlobalFailures === null ? null : requirePositiveInteger(options.maxGlobalFailures ?? DEFAULT_MAX_GLOBAL_LOGIN_FAILURES, 'maxGlobalFailures');
  const settings: LoginThrottleSettings = { maxFailures, windowMs, lockoutMs, maxGlobalFailures };
  const scheduler = options.scheduler ?? systemScheduler;
  const clock = (): number => scheduler.monotonic();
  // Insertion order is the order of last failure: the first entry is the stalest.
  const clients = new Map<string, ClientRecord>();
  let globalWindowStartMs = Number.NEGATIVE_INFINITY;
  let globalFailures = 0;

  function keyOf(client: string): string {
    return addressGroup(String(client).slice(0, MAX_CLIENT_KEY_LENGTH));
  }

  function isLive(record: ClientRecord, nowMs: number): boolean {
    return nowMs < record.lockedUntilMs || nowMs - record.windowStartMs < windowMs;
  }

  function globalRetryAfterMs(nowMs: number): number {
    const windowEndMs = globalWindowStartMs + windowMs;
    return maxGlobalFailures !== null && globalFailures >= maxGlobalFailures && nowMs < windowEndMs ? windowEndMs - nowMs : 0;
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
      const globalWaitMs = globalRetryAfterMs(nowMs);
      // Both may refuse: the answer names the one that lasts longer, and waits that long.
      if (clientWaitMs === 0 && globalWaitMs === 0) return ALLOWED;
      return globalWaitMs > clientWaitMs ? { allowed: false, retryAfterMs: globalWaitMs, limit: 'global' } : { allowed: false, retryAfterMs: clientWaitMs, limit: 'client' };
    },
    failure(client) {
      const nowMs = clock();
      if (maxGlobalFailures !== null) countGlobalFailure(nowMs);
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
    settings,
    get trackedClients() {
      return clients.size;
    },
  };
}
