// What `portcullis keys` prints: key details, tables and JSON, never a hash.
import { keyStatus } from '../keys/key-settings.ts';
import { formatMoney } from '../limits/cost.ts';
import type { KeyRecord, ListedKey } from '../state/key-store-port.ts';
import type { UsageStore } from '../state/usage-store-port.ts';
import { UsageFileError } from '../usage/usage-file.ts';
import { describeGuard, describeLimits } from './key-options.ts';

/** ISO time without milliseconds, for tables. */
export function shortTime(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

/** The record as JSON output: everything but the hash. */
export function publicRecord(k: KeyRecord | ListedKey, nowMs: number): Record<string, unknown> {
  const { hash: _hash, ...rest } = k;
  return { ...rest, status: keyStatus(k, nowMs) };
}

export function describeKey(k: KeyRecord | ListedKey, nowMs: number, currency?: string): string {
  return (
    `id:        ${k.id}\n` +
    `name:      ${k.name}\n` +
    `prefix:    ${k.prefix}\n` +
    `status:    ${keyStatus(k, nowMs)}\n` +
    `created:   ${k.createdAt}\n` +
    (k.rotatedAt === null ? '' : `rotated:   ${k.rotatedAt}\n`) +
    (k.revokedAt === null ? '' : `revoked:   ${k.revokedAt}\n`) +
    (!('lastUsedAt' in k) ? '' : `last used: ${k.lastUsedAt ?? 'never'}\n`) +
    `expires:   ${k.expiresAt ?? 'never'}\n` +
    `aliases:   ${k.allowedAliases === null ? 'all' : k.allowedAliases.join(', ')}\n` +
    `limits:    ${describeLimits(k.limits, currency)}\n` +
    (describeGuard(k.guard) === 'none' ? '' : `guard:     ${describeGuard(k.guard)}\n`)
  );
}

/**
 * The `usage:` line of `keys show`: everything the gateway recorded for the key. A usage
 * file that cannot be read says so on this line; the key's settings still show.
 */
export async function describeUsage(usage: UsageStore, keyId: string, nowMs: number, currency?: string): Promise<string> {
  let totals;
  try {
    totals = (await usage.series(keyId, 'day', nowMs)).totals;
  } catch (error) {
    if (error instanceof UsageFileError) return `usage:     unreadable: ${error.message}\n`;
    throw error;
  }
  if (totals.requests === 0) return 'usage:     none recorded\n';
  return `usage:     ${totals.requests} requests, ${totals.promptTokens} prompt + ${totals.completionTokens} completion tokens, ${formatCost(totals.costNanos, currency)} (all time)\n`;
}

/** Nanos as people read them: `0.001235 USD`, or `0.001235` when the currency is not known. */
export function formatCost(nanos: number, currency: string | undefined): string {
  return currency === undefined ? formatMoney(nanos, '').trimEnd() : formatMoney(nanos, currency);
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max([...title].length, ...rows.map((row) => [...(row[column] ?? '')].length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell + ' '.repeat((widths[column] ?? 0) - [...cell].length)))
      .join('  ') + '\n';
  return line(header) + rows.map(line).join('');
}

/** What `keys list` and `keys usage` print when there are no keys. */
export function noKeysYet(command = 'portcullis'): string {
  return `No API keys yet. Create one with: ${command} keys create --name NAME\n`;
}

export function renderKeyList(keys: readonly ListedKey[], nowMs: number, command?: string): string {
  if (keys.length === 0) return noKeysYet(command);
  return renderTable(
    ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'STATUS'],
    keys.map((k) => [
      k.id,
      k.name,
      k.prefix,
      shortTime(k.createdAt),
      k.lastUsedAt === null ? 'never' : shortTime(k.lastUsedAt),
      keyStatus(k, nowMs),
    ]),
  );
}
