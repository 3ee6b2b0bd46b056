// The audit view's filters as the query of GET /api/audit: key id, actor,
// action, and a time range picked in the browser's time zone. Pure (no DOM),
// so it is tested on its own.

/** The actions the audit log records, in the server's order (src/audit/audit-event.ts AUDIT_ACTIONS; a test keeps them in step). */
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
export type AuditActionName = (typeof AUDIT_ACTIONS)[number];

/** Records per page: enough to fill a desktop screen, few enough for a phone to draw at once. */
export const AUDIT_PAGE_SIZE = 50;

/** The longest key id or actor the filter sends (the server refuses longer; this says so first). */
export const MAX_FILTER_LENGTH = 256;

/** What the filter form holds, as its inputs give it (since/until from `<input type="datetime-local">`; until is exclusive, as on the server). */
export interface AuditFilterInput {
  key: string;
  actor: string;
  action: string;
  since: string;
  until: string;
}

export const NO_FILTER: AuditFilterInput = { key: '', actor: '', action: '', since: '', until: '' };

/** A filter the server can be asked: each field set or absent; since/until as ISO instants. */
export interface AuditFilter {
  key?: string;
  actor?: string;
  action?: AuditActionName;
  since?: string;
  until?: string;
}

export type FilterField = keyof AuditFilterInput;
export type FilterOutcome = { ok: true; filter: AuditFilter } | { ok: false; field: FilterField; message: string };

/**
 * A `datetime-local` value ("2026-11-26T09:30", seconds optional) as the ISO
 * instant it names in UTC, the zone every time on the page is shown in (a
 * time read off a row filters as it reads); null when it is not one (a Date
 * would roll 31 April into May, so that is refused too).
 */
export function instantFromLocalInput(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (match === null) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? '0')) as [number, number, number, number, number, number];
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second, 0));
  if (Number.isNaN(at.getTime()) || at.getUTCFullYear() !== year || at.getUTCMonth() !== month - 1 || at.getUTCDate() !== day || at.getUTCHours() !== hour || at.getUTCMinutes() !== minute) return null;
  return at.toISOString();
}

function isAction(value: string): value is AuditActionName {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/** Reads the form; the first field in the way is named, with what to change. */
export function auditFilter(input: AuditFilterInput): FilterOutcome {
  const filter: AuditFilter = {};
  for (const field of ['key', 'actor'] as const) {
    const value = input[field].trim();
    if (value.length > MAX_FILTER_LENGTH) return { ok: false, field, message: `Shorten the ${field === 'key' ? 'key id' : 'actor'} to at most ${MAX_FILTER_LENGTH} characters.` };
    if (value !== '') filter[field] = value;
  }
  if (input.action !== '') {
    if (!isAction(input.action)) return { ok: false, field: 'action', message: 'Choose an action from the list.' };
    filter.action = input.action;
  }
  for (const field of ['since', 'until'] as const) {
    if (input[field] === '') continue;
    const instant = instantFromLocalInput(input[field]);
    if (instant === null) return { ok: false, field, message: `Enter the ${field === 'since' ? 'start' : 'end'} as a date and time, or leave it empty.` };
    filter[field] = instant;
  }
  // The server counts since in and until out, so an empty range is refused, not answered with nothing.
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) {
    return { ok: false, field: 'until', message: 'The end of the time range must be after its start.' };
  }
  return { ok: true, filter };
}

/** The query string of GET /api/audit ("?…"), fields in a fixed order; `before` asks for the page older than that seq. */
export function auditQuery(filter: AuditFilter, before: number | null, limit = AUDIT_PAGE_SIZE): string {
  const params = new URLSearchParams();
  for (const field of ['key', 'actor', 'action', 'since', 'until'] as const) {
    const value = filter[field];
    if (value !== undefined) params.set(field, value);
  }
  params.set('limit', String(limit));
  if (before !== null) params.set('before', String(before));
  return `?${params.toString()}`;
}

/** Whether any filter is set: the empty state then says "no record matches" rather than "nothing recorded yet". */
export function isFiltered(filter: AuditFilter): boolean {
  return Object.values(filter).some((value) => value !== undefined);
}
