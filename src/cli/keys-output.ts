// What `portcullis keys` prints: key details, tables and JSON, never a hash.
import { keyStatus } from '../keys/key-settings.ts';
import type { KeyRecord, ListedKey } from '../state/key-store-port.ts';
import { describeLimits } from './key-options.ts';

/** ISO time without milliseconds, for tables. */
export function shortTime(iso: string): string {
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

/** The record as JSON output: everything but the hash. */
export function publicRecord(k: KeyRecord | ListedKey, nowMs: number): Record<string, unknown> {
  const { hash: _hash, ...rest } = k;
  return { ...rest, status: keyStatus(k, nowMs) };
}

export function describeKey(k: KeyRecord | ListedKey, nowMs: number): string {
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
    `limits:    ${describeLimits(k.limits)}\n`
  );
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
