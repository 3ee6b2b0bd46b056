// What the audit trail records (docs/audit.md): who did what to which target,
// from where, with the non-secret fields before and after. This file holds
// only the shapes every door (CLI, admin API, dashboard, SSO, reload) shares;
// audit-trail.ts writes them, the chain and its files live beside it.

/**
 * Who acted.
 * - `cli`: a `portcullis` command on the machine; id is the OS user name, uid its uid.
 * - `password`: a dashboard or admin API session opened with the admin password; id "admin".
 * - `bootstrap`: a session opened with the one-time bootstrap token; id "bootstrap".
 * - `token`: an admin API token; id is the token's id (never the token).
 * - `sso`: a session opened by OpenID Connect; id is the ID token's `sub`, issuer its `iss`,
 *   name the preferred_username or email when the provider sent one.
 * - `system`: the gateway itself (a SIGHUP reload); id "serve".
 * - `anonymous`: a refused login or token, before anyone was known; id "-".
 */
export const AUDIT_ACTOR_KINDS = ['cli', 'password', 'bootstrap', 'token', 'sso', 'system', 'anonymous'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

export interface AuditActor {
  kind: AuditActorKind;
  id: string;
  /** cli: the OS user's uid (null where the platform has none). */
  uid?: number | null;
  /** sso: the ID token's issuer. */
  issuer?: string;
  /** A readable name: the OS user, the SSO username or email, the token's name. */
  name?: string;
}

/** Every action the trail records; one record per action, whichever door it came through. */
export const AUDIT_ACTIONS = [
  'key.create',
  'key.update',
  'key.rotate',
  'key.revoke',
  'admin.login',
  'admin.login_failed',
  'admin.password_set',
  'token.create',
  'token.revoke',
  'token.use',
  'token.refused',
  'config.reload',
  'config.reload_refused',
  'change.incomplete',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** A plain JSON value (what before/after/detail may hold). */
export type AuditValue = string | number | boolean | null | readonly AuditValue[] | { readonly [field: string]: AuditValue };

/** What a door hands to the trail; the trail adds time, sequence number and the chain's hashes. */
export interface AuditEvent {
  actor: AuditActor;
  /** Where from: the client address for the admin listener, "cli" for a command, "signal" for a reload. */
  source: string;
  action: AuditAction;
  /** What was acted on: a key id, a token id, "admin" (login, password), the config file; null when nothing. */
  target: string | null;
  /** The target's non-secret fields before and after the change (null: did not exist / does not any more / not a change). */
  before: { readonly [field: string]: AuditValue } | null;
  after: { readonly [field: string]: AuditValue } | null;
  /** Anything else worth keeping: the reason of a refusal, the method and path of a token use. Never a secret. */
  detail?: { readonly [field: string]: AuditValue };
}

/** A write-ahead record on the chain, its change not made yet. done() and failed() never reject. */
export interface AuditIntent {
  /** The record's seq; null when the trail has no chain (the event went to the log stream only). */
  readonly seq: number | null;
  /** The change is made: the record stands for it and is no longer open. */
  done(): Promise<void>;
  /** The change was not made after all: a `change.incomplete` record names this one, with why. */
  failed(reason: string): Promise<void>;
}

/**
 * Where doors send events. record() never rejects: a record that cannot be
 * appended is still written to the log stream, logged as an error and counted,
 * so the action it describes is not undone by the trail failing.
 *
 * begin() is for changes that have not happened yet (write-ahead): the record is
 * durable before it resolves, and it rejects (AuditLogError) when it cannot be
 * appended, so the change is not made without its record.
 */
export interface AuditTrail {
  record(event: AuditEvent): Promise<void>;
  begin(event: AuditEvent): Promise<AuditIntent>;
}
