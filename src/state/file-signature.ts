// Whether a store file changed since it was read, without reading it: the
// file stores (keys.json, admin-tokens.json) compare a signature of its stat.
import type { Stats } from 'node:fs';

/** The signature of a file that does not exist. */
export const MISSING_FILE = 'missing';

// Every write renames a new file into place, and every create or revoke changes the
// size (a record added, `null` replaced by a timestamp), so the signature changes even
// where timestamps are coarse and inode numbers get reused.
export function fileSignature(stats: Stats | undefined): string {
  return stats === undefined ? MISSING_FILE : `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

export function isMissingFile(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}
