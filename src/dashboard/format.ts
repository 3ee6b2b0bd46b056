// How the dashboard words values: dates, counts, limits, circuit states.
// Pure functions over API data, no DOM, so the wording lives in one place.
import type { CircuitState, KeyLimits, KeyStatus } from './admin-model.ts';
import { formatCostBudget } from './money.ts';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const fullDateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
const hourOnly = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const count = new Intl.NumberFormat(undefined);
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export function formatDateTime(iso: string | null, whenNull: string): string {
  if (iso === null) return whenNull;
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : dateTime.format(at);
}

/**
 * A date for a table cell, short enough for one line: the time alone ("Today,
 * 9:44 AM") on the day it is, the date alone ("Nov 25, 2026") on any other.
 * The cell's title carries the whole instant (formatFullDateTime).
 */
export function formatShortDateTime(iso: string, now: Date): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  return sameDay ? `Today, ${timeOnly.format(at)}` : dateOnly.format(at);
}

/** The whole instant, local and ISO: "Wednesday, November 25, 2026 at 9:44:12 AM UTC (2026-11-25T09:44:12.000Z)". */
export function formatFullDateTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${fullDateTime.format(at)} (${iso})`;
}

function formatDate(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : dateOnly.format(at);
}

/** A bucket's start, worded for its granularity. */
export function formatBucketStart(iso: string, granularity: 'hour' | 'day'): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return granularity === 'hour' ? hourOnly.format(at) : dateOnly.format(at);
}

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

const instant = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An instant to the second, for the audit log: "Nov 26, 2026, 11:00:05 PM". */
export function formatInstant(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : instant.format(at);
}
