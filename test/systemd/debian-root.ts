// A minimal Debian 12 root file system for the systemd boot test, made once
// with debootstrap and cached outside the clone:
//   ${XDG_CACHE_HOME:-$HOME/.cache}/portcullis/debian-rootfs/root      the tree
//   ${XDG_CACHE_HOME:-$HOME/.cache}/portcullis/debian-rootfs/complete  the stamp
// The stamp holds the recipe below; a tree without it, or made by another
// recipe, is made again. Each run boots a throw-away overlay of the tree
// (./nspawn-container.ts), so the cache itself is never written to.
//
// The recipe is `--variant=minbase` plus systemd and dbus, and libatomic1,
// which the official Node.js 26 binary links against (without it Node 26
// does not start there); on purpose without procps: /bin/kill is missing there, as on many minimal images, so a
// unit that relies on it fails in this test as it would in the field.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const MIRROR = 'http://deb.debian.org/debian';
const SUITE = 'bookworm';
const INCLUDE = ['systemd', 'dbus', 'libatomic1'];
const RECIPE = `debootstrap --variant=minbase --include=${INCLUDE.join(',')} ${SUITE} ROOT ${MIRROR}\n`;
/** debootstrap took 27 s on a 2-core machine near the mirror; a slow mirror may take minutes. */
const DEBOOTSTRAP_MS = 420_000;

export function cacheDirectory(): string {
  const base = process.env['XDG_CACHE_HOME'] || path.join(process.env['HOME'] || os.homedir(), '.cache');
  return path.join(base, 'portcullis', 'debian-rootfs');
}

/** The cached tree, when it is complete and made by the current recipe. */
export function cachedRoot(): string | undefined {
  const dir = cacheDirectory();
  const stamp = path.join(dir, 'complete');
  const root = path.join(dir, 'root');
  if (!existsSync(stamp) || !existsSync(path.join(root, 'usr/lib/systemd/systemd'))) return undefined;
  return readFileSync(stamp, 'utf8') === RECIPE ? root : undefined;
}

/** Where debootstrap is: PATH, or /usr/sbin (not on a non-root PATH). */
export async function findDebootstrap(): Promise<string | undefined> {
  for (const candidate of ['/usr/sbin/debootstrap', '/sbin/debootstrap', '/usr/bin/debootstrap']) {
    if (existsSync(candidate)) return candidate;
  }
  try {
    return (await run('sh', ['-c', 'command -v debootstrap'])).stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Why the mirror cannot be used, or undefined when it answers. */
export async function mirrorProblem(): Promise<string | undefined> {
  const url = `${MIRROR}/dists/${SUITE}/Release`;
  try {
    const answer = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(15_000) });
    return answer.ok ? undefined : `${url} answered ${answer.status}`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return `${url} cannot be reached: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
  }
}

/**
 * Makes the cached tree unless it is there. Each maker works in its own
 * folder and renames it into place, so two test runs at once cannot mix
 * their trees; the loser throws its copy away.
 */
export async function makeRoot(debootstrap: string, log: (line: string) => void): Promise<string> {
  const dir = cacheDirectory();
  mkdirSync(dir, { recursive: true });
  const root = path.join(dir, 'root');
  const partial = path.join(dir, `root.partial-${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  const started = Date.now();
  log(`making the Debian 12 root once: ${RECIPE.trim().replace('ROOT', partial)}`);
  try {
    await run(debootstrap, ['--variant=minbase', `--include=${INCLUDE.join(',')}`, SUITE, partial, MIRROR], {
      timeout: DEBOOTSTRAP_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    rmSync(partial, { recursive: true, force: true });
    const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`debootstrap failed (${(err as Error).message.split('\n')[0]}):\n${tail}`);
  }
  // A tree made by another recipe, or left without its stamp, goes.
  if (cachedRoot() === undefined) {
    rmSync(path.join(dir, 'complete'), { force: true });
    rmSync(root, { recursive: true, force: true });
  }
  try {
    renameSync(partial, root);
    writeFileSync(path.join(dir, 'complete'), RECIPE);
  } catch (err) {
    // Another run put its tree in place first (ENOTEMPTY, EEXIST): use that one.
    rmSync(partial, { recursive: true, force: true });
    if (cachedRoot() === undefined) throw err;
  }
  log(`the Debian 12 root took ${Math.round((Date.now() - started) / 1000)} s; cached in ${root}`);
  return root;
}
