// What goes in the tarball and how, as plain data: npm's file list becomes
// tar entries under package/, each with the one mode a package file may have.
import type { TarFile } from './tar.ts';

/** The directory npm's tarballs hold everything under. */
export const PACKAGE_DIR = 'package';

/** A file as read from the checkout: its path relative to the root, its stat mode, its bytes. */
export interface CheckoutFile {
  readonly path: string;
  readonly statMode: number;
  readonly data: Uint8Array;
}

/** 0755 for a bin of package.json or a file with any execute bit, else 0644: no other mode of the checkout gets in. */
export function packedMode(file: { path: string; statMode: number }, bins: ReadonlySet<string>): number {
  return bins.has(file.path) || (file.statMode & 0o111) !== 0 ? 0o755 : 0o644;
}

/** The bin paths of package.json `bin` (a string or a map), normalised as npm lists files (no leading ./). */
export function binPaths(manifest: { name?: unknown; bin?: unknown }): Set<string> {
  const bin = manifest.bin;
  const values = typeof bin === 'string' ? [bin] : bin !== null && typeof bin === 'object' ? Object.values(bin as Record<string, unknown>) : [];
  return new Set(values.filter((v): v is string => typeof v === 'string').map((v) => v.replace(/^\.\//, '')));
}

/** The tar entries of the checkout's files, under package/. */
export function tarFiles(files: readonly CheckoutFile[], bins: ReadonlySet<string>): TarFile[] {
  return files.map((file) => ({ path: `${PACKAGE_DIR}/${file.path}`, mode: packedMode(file, bins), data: file.data }));
}

/**
 * The packed files (npm's list) that are not the commit's: outside dist/ (the
 * build's output, made from the commit's sources) every packed file must be
 * tracked by git and unchanged; `tracked` is `git ls-files`, `changed` the
 * paths `git status` reports.
 */
export function filesNotFromCommit(packed: readonly string[], tracked: ReadonlySet<string>, changed: ReadonlySet<string>): string[] {
  return packed.filter((file) => !file.startsWith('dist/') && (!tracked.has(file) || changed.has(file)));
}

/** The files whose bytes hold `needle` (an absolute path of the build machine), in the given order. */
export function filesHolding(files: readonly CheckoutFile[], needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  return files.filter((file) => Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength).includes(bytes)).map((file) => file.path);
}
