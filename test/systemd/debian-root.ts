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
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { reapNow, startReaper } from '../support/reaper.ts';

const run = promisify(execFile);

export const MIRROR = 'http://deb.debian.org/debian';
const SUITE = 'bookworm';
const INCLUDE = ['systemd', 'dbus', 'libatomic1'];
const RECIPE = `debootstrap --variant=minbase --include=${INCLUDE.join(',')} ${SUITE} ROOT ${MIRROR}\n`;
/** debootstrap took 27 to 101 s on an idle 2-core machine, 151 to 181 s on a loaded one; a slow mirror may take minutes. */
const DEBOOTSTRAP_MS = 600_000;
/** How often the setup step says how far debootstrap got. */
const PROGRESS_MS = 15_000;

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

/** Why the systemd boot test cannot run on this machine at all, or undefined when it can. */
export async function systemdTestUnsupported(): Promise<string | undefined> {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root (systemd-nspawn boots the container, mount makes its overlay)';
  for (const command of ['systemd-nspawn', 'nsenter', 'mount', 'tar']) {
    if (!(await hasCommand(command))) return `${command} is not installed (.ci/install-system-packages installs systemd-container)`;
  }
  return undefined;
}

async function hasCommand(name: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${name}`]);
    return true;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the half-made trees of makers that are gone and whose reaper could
 * not clean up (a power cut): processes still chrooted there are killed, and
 * debootstrap's /proc and /sys mounts in them unmounted before the removal.
 */
export function removeAbandonedTrees(log: (line: string) => void): void {
  const dir = cacheDirectory();
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const match = /^root\.partial-(\d+)$/.exec(name);
    if (match === null || alive(Number(match[1]))) continue;
    const tree = path.join(dir, name);
    log(`removing ${tree}, left by a run that was stopped while making the root`);
    const report = reapNow({ killInside: [tree], remove: [tree] });
    for (const problem of report.problems) log(problem);
  }
}

/**
 * The suite's setup step for the systemd boot test: makes the cached root
 * when the test can run here and the root is missing, saying how far it got
 * every 15 s, bounded by DEBOOTSTRAP_MS. Where the test cannot run, or the
 * mirror cannot be reached, it says why and leaves the test to skip with
 * that reason; a failed debootstrap leaves no tree and fails the test.
 */
export async function prepareDebianRootForSuite(log: (line: string) => void): Promise<void> {
  if ((await systemdTestUnsupported()) !== undefined || cachedRoot() !== undefined) return;
  removeAbandonedTrees(log);
  const debootstrap = await findDebootstrap();
  if (debootstrap === undefined) {
    log('no Debian 12 root for the systemd boot test, and debootstrap is not installed (.ci/install-system-packages installs it)');
    return;
  }
  const problem = await mirrorProblem();
  if (problem !== undefined) {
    log(`no Debian 12 root for the systemd boot test, and debootstrap cannot fetch one: ${problem}`);
    return;
  }
  try {
    await makeRoot(debootstrap, log);
  } catch (err) {
    log(`making the Debian 12 root failed; the systemd boot test will fail with this:\n${(err as Error).message}`);
  }
}

/**
 * Makes the cached tree unless it is there. Each maker works in its own
 * folder and renames it into place, so two test runs at once cannot mix
 * their trees; the loser throws its copy away. A reaper started first
 * (../support/reaper.ts) removes the half-made tree however this ends (a
 * failure, the bound, Ctrl-C, SIGKILL): it kills debootstrap with everything
 * it started and everything chrooted in the tree, and unmounts the /proc and
 * /sys debootstrap mounts there before anything is removed.
 */
export async function makeRoot(debootstrap: string, log: (line: string) => void): Promise<string> {
  const dir = cacheDirectory();
  mkdirSync(dir, { recursive: true });
  const root = path.join(dir, 'root');
  const partial = path.join(dir, `root.partial-${process.pid}`);
  // One left by an earlier process that had this PID.
  reapNow({ killInside: [partial], remove: [partial] });
  const reaper = startReaper({ killArguments: [partial], killInside: [partial], remove: [partial] });
  await reaper.ready;
  const started = Date.now();
  const seconds = (): number => Math.round((Date.now() - started) / 1000);
  log(`making the Debian 12 root once (about 30 s to 3 min; at most ${DEBOOTSTRAP_MS / 60_000} min): ${RECIPE.trim().replace('ROOT', partial)}`);
  const args = ['--variant=minbase', `--include=${INCLUDE.join(',')}`, SUITE, partial, MIRROR];
  const child = spawn(debootstrap, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let lastStep = 'starting';
  const take = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-20_000);
    const steps = text.split('\n').filter((line) => line.startsWith('I: '));
    if (steps.length > 0) lastStep = (steps[steps.length - 1] as string).slice(3).trim();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const progress = setInterval(() => log(`still making the Debian 12 root: ${seconds()} s so far; ${lastStep}`), PROGRESS_MS);
  const bound = setTimeout(() => child.kill('SIGKILL'), DEBOOTSTRAP_MS);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));
  clearInterval(progress);
  clearTimeout(bound);
  if (code !== 0) {
    await reaper.reap();
    const why = signal === 'SIGKILL' && seconds() * 1000 >= DEBOOTSTRAP_MS ? `no end within ${DEBOOTSTRAP_MS / 1000} s` : `exit ${code ?? signal}`;
    throw new Error(`debootstrap failed (${why}):\n${output.trim().split('\n').slice(-15).join('\n')}`);
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
    if (cachedRoot() === undefined) throw err;
  } finally {
    // The tree is in place, or this copy goes.
    await reaper.reap();
  }
  log(`the Debian 12 root took ${seconds()} s; cached in ${root}`);
  return root;
}
