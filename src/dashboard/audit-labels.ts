// How the audit view words a record: who acted, what they did, and which
// fields changed between before and after. Pure (no DOM), tested on its own.
import type { AuditActor, AuditActorKind, AuditValue } from './admin-model.ts';
import type { AuditActionName } from './audit-query.ts';

export const ACTOR_KIND_LABEL: Record<AuditActorKind, string> = {
  cli: 'command line',
  password: 'password',
  bootstrap: 'bootstrap token',
  token: 'API token',
  sso: 'single sign-on',
  system: 'gateway',
  anonymous: 'not signed in',
};

/** The actor's readable name (else its id), e.g. "ci-deploy"; "-" of a refused login reads as "unknown". */
export function actorName(actor: { id: string; name?: string | undefined }): string {
  if (actor.name !== undefined && actor.name !== '') return actor.name;
  return actor.id === '-' ? 'unknown' : actor.id;
}

/** The kind in words; an unknown kind (a newer server) is shown as it is. */
export function actorKindLabel(kind: string): string {
  return (ACTOR_KIND_LABEL as Record<string, string>)[kind] ?? kind;
}

/** Everything known about the actor, for a title or the details: "alice (single sign-on, sub 1234 at https://id.example)". */
export function actorDescription(actor: AuditActor): string {
  const facts = [actorKindLabel(actor.kind)];
  if (actor.name !== undefined && actor.name !== '' && actor.name !== actor.id) facts.push(`id ${actor.id}`);
  if (actor.uid !== undefined && actor.uid !== null) facts.push(`uid ${actor.uid}`);
  if (actor.issuer !== undefined) facts.push(`issuer ${actor.issuer}`);
  return `${actorName(actor)} (${facts.join(', ')})`;
}

export const ACTION_LABEL: Record<AuditActionName, string> = {
  'key.create': 'Key created',
  'key.update': 'Key changed',
  'key.rotate': 'Key rotated',
  'key.revoke': 'Key revoked',
  'admin.login': 'Signed in',
  'admin.login_failed': 'Sign-in refused',
  'admin.password_set': 'Admin password set',
  'token.create': 'Token created',
  'token.revoke': 'Token revoked',
  'token.use': 'Token used',
  'token.refused': 'Token refused',
  'config.reload': 'Config reloaded',
  'config.reload_refused': 'Config reload refused',
  'change.incomplete': 'Change not made',
};

/** Actions that refuse something: shown with the danger badge (the words say it too). */
const REFUSALS: ReadonlySet<string> = new Set(['admin.login_failed', 'token.refused', 'config.reload_refused', 'key.revoke', 'token.revoke', 'change.incomplete']);

export function actionLabel(action: string): string {
  return (ACTION_LABEL as Record<string, string>)[action] ?? action;
}

export function actionTone(action: string): 'danger' | 'neutral' {
  return REFUSALS.has(action) ? 'danger' : 'neutral';
}

/** One changed field: its value before and after; undefined where the record has no such field (or no before/after at all). */
export interface FieldChange {
  field: string;
  before: AuditValue | undefined;
  after: AuditValue | undefined;
}

type Fields = { readonly [field: string]: AuditValue } | null;

/** The same JSON whatever the order of object keys, so {a,b} and {b,a} compare equal. */
function canonical(value: AuditValue | undefined): string {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as { [field: string]: AuditValue })[k])}`);
  return `{${entries.join(',')}}`;
}

type FieldMap = { readonly [field: string]: AuditValue };

function isFieldMap(value: AuditValue | undefined): value is FieldMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The fields that differ between before and after, in the record's order
 * (before's fields, then any only after has). A create lists every field of
 * after; a removal every field of before. An unchanged field is left out. A
 * field that is an object on both sides (a key's limits) is compared field by
 * field and named with a dot ("limits.requestsPerMinute"), so one changed
 * limit reads as one line, not two long objects.
 */
export function auditChanges(before: Fields, after: Fields): FieldChange[] {
  const changes: FieldChange[] = [];
  collectChanges(before, after, '', before === null || after === null, changes);
  return changes;
}

function collectChanges(before: Fields, after: Fields, prefix: string, whole: boolean, changes: FieldChange[]): void {
  const fields = [...Object.keys(before ?? {}), ...Object.keys(after ?? {}).filter((f) => !Object.hasOwn(before ?? {}, f))];
  for (const field of fields) {
    const was = before === null || !Object.hasOwn(before, field) ? undefined : before[field];
    const now = after === null || !Object.hasOwn(after, field) ? undefined : after[field];
    if (canonical(was) === canonical(now)) continue;
    // A create or a removal shows each field whole: there is nothing to compare inside.
    if (!whole && isFieldMap(was) && isFieldMap(now)) collectChanges(was, now, `${prefix}${field}.`, false, changes);
    else changes.push({ field: `${prefix}${field}`, before: was, after: now });
  }
}

/** A value for a cell: text as it is, nothing as "—", "none" for null, anything else as compact JSON. */
export function formatAuditValue(value: AuditValue | undefined): string {
  if (value === undefined) return '—';
  if (value === null) return 'none';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * Who made a token, from TokenView.createdBy ("password:admin", "sso:<sub>",
 * "cli:<user>"): "admin (password)". Anything else is shown as it is.
 */
export function createdByLabel(createdBy: string): string {
  const colon = createdBy.indexOf(':');
  if (colon <= 0) return createdBy;
  const kind = createdBy.slice(0, colon);
  const who = createdBy.slice(colon + 1);
  if (!Object.hasOwn(ACTOR_KIND_LABEL, kind) || who === '') return createdBy;
  return `${who} (${actorKindLabel(kind)})`;
}
