// Temporary directories for a test file, removed when its process exits
// (whatever the tests' outcome), so no test has to remember to.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = new Set<string>();
let counter = 0;

function removeAll(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}

/** A new empty directory under the system's temporary folder, named `portcullis-<label>-…`. */
export function tempDir(label: string): string {
  return tempDirIn(os.tmpdir(), label);
}

/** Where Linux mounts a memory file system: an fsync there costs nothing. */
const MEMORY_FS = '/dev/shm';

/**
 * A tempDir on a memory file system where there is one, else the system's
 * temporary folder: for tests that sync files hundreds of times (an audit log
 * appending) where the syncing is not what they test. On a loaded machine
 * each fsync to the disk costs tens of milliseconds.
 */
export function memoryTempDir(label: string): string {
  return tempDirIn(existsSync(MEMORY_FS) ? MEMORY_FS : os.tmpdir(), label);
}

function tempDirIn(parent: string, label: string): string {
  if (made.size === 0) process.once('exit', removeAll);
  const dir = mkdtempSync(path.join(parent, `portcullis-${label}-`));
  made.add(dir);
  return dir;
}

/** A new empty directory inside `parent` (a tempDir), numbered. */
export function freshDir(parent: string): string {
  const dir = path.join(parent, `d${counter++}`);
  mkdirSync(dir);
  return dir;
}

/** A path inside `parent` that does not exist yet (for code that must create it). */
export function freshPath(parent: string, label = 'data'): string {
  return path.join(parent, `${label}-${counter++}`);
}
