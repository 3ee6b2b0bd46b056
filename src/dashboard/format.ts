// How the dashboard words values: dates, counts, limits, circuit states.
// Pure functions over API data, no DOM, so the wording lives in one place.
import type { CircuitState, KeyGuard, KeyLimits, KeyStatus, UsageCounts } from './admin-model.ts';
import { formatCostBudget } from './money.ts';

/**
 * Every time the dashboard shows is in UTC and says so, as the CLI and the
 * budgets' windows are: "2026-11-28 10:15:02 UTC". One zone for every
 * operator, whatever their browser's, so a time read off the page matches
 * the logs and the audit file.
 */
export const TIME_ZONE = 'UTC';

function utcParts(iso: string): { date: string; minute: string; second: string } | null {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return null;
  const text = at.toISOString();
  return { date: text.slice(0, 10), minute: text.slice(11, 16), second: text.slice(11, 19) };
}

/** An instant to the minute: "2026-11-28 10:15 UTC"; `whenNull` for null. */
export function formatDateTime(iso: string | null, whenNull: string): string {
  if (iso === null) return whenNull;
  const parts = utcParts(iso);
  return parts === null ? iso : `${parts.date} ${parts.minute} ${TIME_ZONE}`;
}

/**
 * A date for a table cell: the day and the minute, which a narrow column
 * breaks between (never inside either): "2026-11-25 09:44 UTC". The cell's
 * title carries the whole instant (formatFullDateTime).
 */
export function formatShortDateTime(iso: string): string {
  return formatDateTime(iso, iso);
}

/** The whole instant: "2026-11-25 09:44:12 UTC (2026-11-25T09:44:12.000Z)". */
export function formatFullDateTime(iso: string): string {
  return `${formatInstant(iso)} (${iso})`;
}

/** An instant to the second, for the audit log: "2026-11-26 23:00:05 UTC". */
export function formatInstant(iso: string): string {
  const parts = utcParts(iso);
  return parts === null ? iso : `${parts.date} ${parts.second} ${TIME_ZONE}`;
}

/** A bucket's start, worded for its granularity: "2026-11-25 09:00 UTC" for an hour, "2026-11-25" for a UTC day. */
export function formatBucketStart(iso: string, granularity: 'hour' | 'day'): string {
  const parts = utcParts(iso);
  if (parts === null) return iso;
  return granularity === 'hour' ? `${parts.date} ${parts.minute} ${TIME_ZONE}` : parts.date;
}

const count = new Intl.NumberFormat(undefined);
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export function formatCount(n: number): string {
  return count.format(n);
}

export function formatCompact(n: number): string {
  return compact.format(n);
}

/** "60 req/min · 10K tokens/min · 4 at once · 1M tokens/day · 25.50 USD/month", or "No limits". */
export function describeLimits(limits: KeyLimits, currency: string): string {
  const parts = limitParts(limits, currency);
  return parts.length === 0 ? 'No limits' : parts.join(LIMIT_SEPARATOR);
}

export const LIMIT_SEPARATOR = ' · ';

/** Each set limit in a fixed order, one phrase each (a table cell wraps between them, never inside). */
export function limitParts(limits: KeyLimits, currency: string): string[] {
  const parts: string[] = [];
  if (limits.requestsPerMinute !== null) parts.push(`${formatCompact(limits.requestsPerMinute)} req/min`);
  if (limits.tokensPerMinute !== null) parts.push(`${formatCompact(limits.tokensPerMinute)} tokens/min`);
  if (limits.concurrentRequests !== null) parts.push(`${formatCount(limits.concurrentRequests)} at once`);
  if (limits.tokenBudget !== null) parts.push(`${formatCompact(limits.tokenBudget.tokens)} tokens/${limits.tokenBudget.period}`);
  if (limits.costBudget != null) parts.push(formatCostBudget(limits.costBudget, currency));
  return parts;
}

/** What a key guard with no detector says: it is set (and counts), it just adds nothing. */
export const EMPTY_GUARD = 'empty policy (no detectors of its own)';

/**
 * A key's own guard, `secrets: block · email: mask`; EMPTY_GUARD for one set
 * with no detectors, which is not the same as none; '' when it has none.
 */
export function describeGuard(guard: KeyGuard | null | undefined): string {
  if (guard === null || guard === undefined) return '';
  const entries = Object.entries(guard.detectors);
  if (entries.length === 0) return EMPTY_GUARD;
  return entries.map(([name, action]) => `${name}: ${action}`).join(LIMIT_SEPARATOR);
}

/** The egress guard's findings by action (absent from older servers: 0). */
export interface GuardFindings {
  blocked: number;
  masked: number;
  logged: number;
}

export function findingsOf(u: UsageCounts): GuardFindings {
  return { blocked: u.guardBlocked ?? 0, masked: u.guardMasked ?? 0, logged: u.guardLogged ?? 0 };
}

export function hasFindings(f: GuardFindings): boolean {
  return f.blocked + f.masked + f.logged > 0;
}

/** The findings of several buckets (a period) added up. */
export function sumFindings(all: readonly UsageCounts[]): GuardFindings {
  const sum = { blocked: 0, masked: 0, logged: 0 };
  for (const u of all) {
    const f = findingsOf(u);
    sum.blocked += f.blocked;
    sum.masked += f.masked;
    sum.logged += f.logged;
  }
  return sum;
}

/** `["2 blocked", "1 masked", "0 logged"]`: every action, zeros too, so a row reads the same way in every key; [] for none at all. */
export function findingParts(f: GuardFindings): string[] {
  if (!hasFindings(f)) return [];
  return [`${formatCount(f.blocked)} blocked`, `${formatCount(f.masked)} masked`, `${formatCount(f.logged)} logged`];
}

export function describeAliases(allowed: string[] | null): string {
  if (allowed === null) return 'All aliases';
  if (allowed.length === 0) return 'None';
  return allowed.join(', ');
}

export const STATUS_LABEL: Record<KeyStatus, string> = { active: 'Active', revoked: 'Revoked', expired: 'Expired' };

/** Circuit states in operators' words; the badge shows the word, so colour is never the only signal. */
export const CIRCUIT_LABEL: Record<CircuitState, string> = { closed: 'Healthy', half_open: 'Recovering', open: 'Failing' };

/**
 * The expiry instant for a date picked in `<input type="date">`: the end of
 * that day in the browser's time zone, because "expires on 3 March" means the
 * key still works during 3 March where the operator is.
 */
export function expiryFromDateInput(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (match === null) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const end = new Date(year, month - 1, day, 23, 59, 59, 999);
  // Date rolls 30 February over to March; a date that does not exist is refused instead.
  if (Number.isNaN(end.getTime()) || end.getFullYear() !== year || end.getMonth() !== month - 1 || end.getDate() !== day) return null;
  return end.toISOString();
}

/** The `<input type="date">` value showing an expiry instant, in the browser's time zone. */
export function dateInputFromExpiry(iso: string | null): string {
  if (iso === null) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}
