// Dashboard sessions, in memory: a session lives until its absolute lifetime ends
// (`ttlMs`, 8 h by default), until it sits unused for `idleMs` (30 min), until logout,
// or until the process stops. Nothing is written to disk, so a restart logs everyone out.
//
// - A session id is 32 random bytes in base64url (43 characters): the cookie value.
// - The store is keyed by SHA-256 of the id, never the id itself, so a heap dump or
//   a debugger does not yield cookies that could be replayed.
// - Each session has its own CSRF token (32 random bytes, base64url) that the page
//   echoes in a header on every state-changing request; verifyCsrf compares it in
//   constant time.
// - At most `maxSessions` live at once. Creating one more first drops expired
//   sessions, then the oldest by creation. Only someone who knows the admin password
//   or is an allowed single sign-on user can create sessions, so the cap bounds memory,
//   not an anonymous attack surface; the cost of hitting it (an allowed user signing in
//   a thousand times) is that the oldest logins are logged out.
// No timers: expiry is checked when a session is looked up or created.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AuditActor } from '../audit/audit-event.ts';
import { BROWSER_SECRET_BYTES, BROWSER_SECRET_KIND } from '../log/secret-kinds.ts';

const DEFAULT_SESSION_TTL_MS = 8 * 60 * 60 * 1000;
const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 1000;

// Session ids and CSRF tokens are BROWSER_SECRET_KIND: 32 bytes in base64url, without padding.
const SECRET_BYTES = BROWSER_SECRET_BYTES;
const SECRET_LENGTH = BROWSER_SECRET_KIND.length;
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface Session {
  /** Who logged in (password, bootstrap token or single sign-on): the actor of everything the session does. */
  readonly actor: AuditActor;
  readonly csrfToken: string;
  readonly createdAtMs: number;
  /** End of the absolute lifetime; the idle limit may end the session sooner. */
  readonly expiresAtMs: number;
  /** Last time get() found the session; the idle limit counts from here. */
  readonly lastSeenMs: number;
  /** What admitted it, when the caller names it (single sign-on: the allow-lists' fingerprint, sso-routes.ts); else null. */
  readonly grant: string | null;
}

export interface CreatedSession {
  /** The cookie value. Only returned here: the store keeps its hash. */
  readonly id: string;
  readonly csrfToken: string;
  readonly expiresAtMs: number;
}

export interface SessionStoreOptions {
  ttlMs?: number;
  idleMs?: number;
  maxSessions?: number;
  /** Milliseconds since the epoch; Date.now by default. */
  clock?: () => number;
  /** Source of random bytes (tests pin it); crypto.randomBytes by default. */
  random?: (size: number) => Buffer;
}

export interface SessionStore {
  /** `grant`: what admitted the session (kept with it, for the caller to check later). */
  create(actor: AuditActor, grant?: string): CreatedSession;
  /** The live session for a cookie value, or null; a hit refreshes its idle time. */
  get(id: string): Session | null;
  /** Log out one session (unknown ids are ignored). */
  destroy(id: string): void;
  /** Log out everyone, e.g. after the admin password changed. */
  destroyAll(): void;
  /** Live sessions (expired ones are dropped first). */
  readonly size: number;
}

interface StoredSession {
  actor: AuditActor;
  csrfToken: string;
  createdAtMs: number;
  expiresAtMs: number;
  lastSeenMs: number;
  grant: string | null;
}

function requirePositiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function hashId(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('base64url');
}

export function isWellFormedSessionId(id: unknown): id is string {
  return typeof id === 'string' && id.length === SECRET_LENGTH && SECRET_SHAPE.test(id);
}

export function createSessionStore(options: SessionStoreOptions = {}): SessionStore {
  const ttlMs = requirePositiveInteger(options.ttlMs ?? DEFAULT_SESSION_TTL_MS, 'ttlMs');
  const idleMs = requirePositiveInteger(options.idleMs ?? DEFAULT_SESSION_IDLE_MS, 'idleMs');
  const maxSessions = requirePositiveInteger(options.maxSessions ?? DEFAULT_MAX_SESSIONS, 'maxSessions');
  const clock = options.clock ?? Date.now;
  const random = options.random ?? randomBytes;
  // Insertion order is creation order, which makes the first entry the oldest.
  const sessions = new Map<string, StoredSession>();

  function isExpired(session: StoredSession, nowMs: number): boolean {
    return nowMs >= session.expiresAtMs || nowMs - session.lastSeenMs >= idleMs;
  }

  function dropExpired(nowMs: number): void {
    for (const [key, session] of sessions) if (isExpired(session, nowMs)) sessions.delete(key);
  }

  function newSecret(): string {
    const bytes = random(SECRET_BYTES);
    if (bytes.length !== SECRET_BYTES) throw new RangeError(`random source returned ${bytes.length} bytes, expected ${SECRET_BYTES}`);
    return bytes.toString('base64url');
  }

  return {
    create(actor, grant) {
      const nowMs = clock();
      dropExpired(nowMs);
      while (sessions.size >= maxSessions) {
        const oldest = sessions.keys().next();
        if (oldest.done === true) break;
        sessions.delete(oldest.value);
      }
      const id = newSecret();
      const csrfToken = newSecret();
      const expiresAtMs = nowMs + ttlMs;
      sessions.set(hashId(id), { actor: { ...actor }, csrfToken, createdAtMs: nowMs, expiresAtMs, lastSeenMs: nowMs, grant: grant ?? null });
      return { id, csrfToken, expiresAtMs };
    },
    get(id) {
      if (!isWellFormedSessionId(id)) return null;
      const key = hashId(id);
      const session = sessions.get(key);
      if (session === undefined) return null;
      const nowMs = clock();
      if (isExpired(session, nowMs)) {
        sessions.delete(key);
        return null;
      }
      session.lastSeenMs = nowMs;
      return { ...session };
    },
    destroy(id) {
      if (isWellFormedSessionId(id)) sessions.delete(hashId(id));
    },
    destroyAll() {
      sessions.clear();
    },
    get size() {
      dropExpired(clock());
      return sessions.size;
    },
  };
}

/**
 * True when `presented` (the CSRF header of a request) is the session's token.
 * Constant-time for a presented value of the right length; a wrong length says
 * nothing secret, since every token has the same length.
 */
export function verifyCsrf(session: Session, presented: string | undefined): boolean {
  if (typeof presented !== 'string' || presented.length !== session.csrfToken.length) return false;
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(session.csrfToken, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
