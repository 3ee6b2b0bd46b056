// What goes in the tarball and how, as plain data: npm's file list becomes
// tar entries under package/, each with the one mode a package file may have.
import type { TarFile } from './tar.ts';

/** The directory npm's tarballs hold everything under. */
export const PACKAGE_DIR = 'package';

/** A file as read from the checkout: its path relative to the root, whether git records it executable, its bytes. */
export interface CheckoutFile {
  readonly path: string;
  /** Mode 100755 in `git ls-files -s`: the commit's word, not the file system's (core.fileMode=false hides a chmod). */
  readonly executable: boolean;
  readonly data: Uint8Array;
}

/** 0755 for a bin of package.json or a file git records as executable, else 0644 (the build's output is untracked: 0644 unless a bin). */
export function packedMode(file: { path: string; executable: boolean }, bins: ReadonlySet<string>): number {
  return bins.has(file.path) || file.executable ? 0o755 : 0o644;
}

/** The paths `git ls-files -s -z` lists with mode 100755. */
export function executablePaths(lsFilesStage: string): Set<string> {
  const out = new Set<string>();
  for (const record of lsFilesStage.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab > 0 && record.startsWith('100755 ')) out.add(record.slice(tab + 1));
  }
  return out;
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

/** The files whose bytes hold `needle` (an absolute path of the build machine), in the given order. */
export function filesHolding(files: readonly CheckoutFile[], needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  return files.filter((file) => Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength).includes(bytes)).map((file) => file.path);
}
