// Crash-safe replacement of a small file: readers see the old content or the new
// content, never a torn mix, and a crash at any point leaves the old file intact.
//
// Steps: write a temp file in the same directory (same file system, so rename is
// atomic), fsync it (the data is on disk before the name points at it), rename it over
// the target, fsync the directory (the rename itself survives a power cut).
// Callers hold the file's lock (file-lock.ts), so no two writers race on one target
// and any temp file found while holding the lock is debris of a crashed writer.

import { randomBytes } from 'node:crypto';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FileIoError } from './errors.ts';

export const PRIVATE_FILE_MODE = 0o600;
const TEMP_SUFFIX = '.tmp';

function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
}

/** True when `name` is a temp file name that tempPathFor produces for `targetName`. */
export function isTempFileOf(targetName: string, name: string): boolean {
  return name.startsWith(targetName + '.') && name.endsWith(TEMP_SUFFIX) && name.length > targetName.length + 1 + TEMP_SUFFIX.length;
}

/** Replace `path` with `data` atomically and durably, with mode 0600. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tempPath = tempPathFor(path);
  let handle;
  try {
    handle = await open(tempPath, 'wx', PRIVATE_FILE_MODE);
  } catch (cause) {
    throw new FileIoError('create a temporary file next to', path, cause);
  }
  try {
    try {
      await handle.writeFile(data, 'utf8');
      // open()'s mode is filtered by the umask; set it explicitly so the result is 0600.
      await handle.chmod(PRIVATE_FILE_MODE);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tempPath, path);
  } catch (cause) {
    await unlink(tempPath).catch(() => undefined);
    throw new FileIoError('write', path, cause);
  }
  await syncDirectory(dirname(path));
}

/** fsync a directory so a rename in it is durable. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (cause) {
    // Windows cannot open or fsync a directory; its rename is already durable enough
    // (MoveFileEx with write-through is what libuv uses).
    if (process.platform === 'win32') return;
    throw new FileIoError('sync the directory', dir, cause);
  } finally {
    await handle?.close();
  }
}

/**
 * Delete temp files a crashed writer of `path` left behind. Only safe while holding
 * the lock for `path`: every live writer of `path` holds it too.
 * Returns the names removed.
 */
export async function removeStaleTempFiles(path: string): Promise<string[]> {
  const dir = dirname(path);
  const target = basename(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (cause) {
    throw new FileIoError('list the directory', dir, cause);
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!isTempFileOf(target, name)) continue;
    try {
      await unlink(join(dir, name));
      removed.push(name);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileIoError('remove', join(dir, name), cause);
    }
  }
  return removed;
}
