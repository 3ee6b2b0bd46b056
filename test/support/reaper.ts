// A keeper for what a test leaves on the host outside its own process: a
// booted container, a mounted file system, a folder under /tmp, a process
// tree in a chroot. The test starts it before it makes any of them, detached
// in a session of its own, with a plan of what to undo; the keeper holds a
// pipe from the test process and carries the plan out when asked to (the end
// of a test) or when the pipe closes, which happens however the test process
// ends: a crash, the SIGTERM of a runner's timeout, SIGKILL. A signal handler
// or an 'exit' hook in the test process runs for none of those.
//
// The plan names things by what they will be (an argument a process will be
// started with, a folder), so it is complete before anything exists and
// there is no moment in which a thing is made but not yet known to the keeper.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ReapPlan {
  /**
   * Processes started with one of these arguments exactly are killed, with
   * all their descendants and every process in a network namespace of
   * theirs other than the keeper's own (what `nsenter -n` put there).
   */
  killArguments?: string[];
  /** Processes whose root or working directory lies in one of these folders (a chroot) are killed, with their descendants. */
  killInside?: string[];
  /**
   * These folders are removed after the kill: first everything mounted at or
   * in them is unmounted, the deepest first, lazily when busy. A folder with
   * a mount still in it is left whole: removing it would reach into what is
   * mounted there (a cache used as an overlay's lower folder).
   */
  remove?: string[];
}

export interface ReapReport {
  killed: number[];
  unmounted: string[];
  removed: string[];
  problems: string[];
}

/** How long killed processes get to be gone, each round. */
const GONE_MS = 5_000;
const KILL_ROUNDS = 5;

interface ProcessEntry {
  pid: number;
  ppid: number;
  args: string[];
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The living processes (zombies are dead: only their parent's wait is missing). */
function processTable(): ProcessEntry[] {
  const table: ProcessEntry[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...", where comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[args.length - 1] === '') args.pop();
      table.push({ pid: Number(entry), ppid: Number(fields[1]), args });
    } catch {
      // gone while we looked
    }
  }
  return table;
}

function link(pid: number | 'self', name: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/${name}`);
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function within(file: string | undefined, dirs: readonly string[]): boolean {
  return file !== undefined && dirs.some((dir) => file === dir || file.startsWith(`${dir}/`));
}

/** The processes the plan kills, as the process table stands now. */
function doomedProcesses(plan: ReapPlan): Set<number> {
  const table = processTable().filter((entry) => entry.pid !== process.pid);
  const inside = (plan.killInside ?? []).map(canonical);
  const roots = table.filter(
    (entry) => entry.args.some((arg) => plan.killArguments?.includes(arg)) || within(link(entry.pid, 'root'), inside) || within(link(entry.pid, 'cwd'), inside),
  );
  const children = new Map<number, number[]>();
  for (const entry of table) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry.pid]);
  const doomed = new Set<number>();
  const add = (pid: number): void => {
    if (doomed.has(pid)) return;
    doomed.add(pid);
    for (const child of children.get(pid) ?? []) add(child);
  };
  for (const entry of roots) add(entry.pid);
  const ownNetwork = link('self', 'ns/net');
  const networks = new Set([...doomed].map((pid) => link(pid, 'ns/net')).filter((ns) => ns !== undefined && ns !== ownNetwork));
  if (networks.size > 0) for (const entry of table) if (networks.has(link(entry.pid, 'ns/net'))) add(entry.pid);
  return doomed;
}

function killProcesses(plan: ReapPlan, report: ReapReport): void {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const doomed = doomedProcesses(plan);
    if (doomed.size === 0) return;
    for (const pid of doomed) {
      try {
        process.kill(pid, 'SIGKILL');
        if (!report.killed.includes(pid)) report.killed.push(pid);
      } catch {
        // gone already
      }
    }
    const giveUpAt = Date.now() + GONE_MS;
    while ([...doomed].some(isAlive) && Date.now() < giveUpAt) pause(10);
  }
  const left = [...doomedProcesses(plan)];
  if (left.length > 0) report.problems.push(`processes still alive after ${KILL_ROUNDS} rounds of SIGKILL: ${left.join(', ')}`);
}

function canonical(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** Mount points at or below `dir` in this mount namespace, the deepest first. */
export function mountsIn(dir: string): string[] {
  const at = canonical(dir);
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined)
    .map((point) => point.replace(/\\([0-7]{3})/g, (_all, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => within(point, [at]));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

function unmountAll(dir: string, report: ReapReport): void {
  // A point may hold several mounts stacked on each other: a round per layer.
  for (let round = 0; round < 8; round++) {
    const points = mountsIn(dir);
    if (points.length === 0) return;
    for (const point of points) {
      // Busy a moment after its last user is killed: detach it now, it goes when the last reference does.
      const unmounted = spawnSync('umount', [point]).status === 0 || spawnSync('umount', ['--lazy', point]).status === 0;
      if (unmounted) report.unmounted.push(point);
    }
  }
}

function removeFolder(dir: string, report: ReapReport): void {
  try {
    lstatSync(dir);
  } catch {
    return;
  }
  unmountAll(dir, report);
  const left = mountsIn(dir);
  if (left.length > 0) {
    report.problems.push(`${dir} is left in place: still mounted in it: ${left.join(', ')}`);
    return;
  }
  rmSync(dir, { recursive: true, force: true });
  report.removed.push(dir);
}

/** Carries the plan out now, in this process: kill, then unmount and remove. */
export function reapNow(plan: ReapPlan): ReapReport {
  const report: ReapReport = { killed: [], unmounted: [], removed: [], problems: [] };
  try {
    killProcesses(plan, report);
  } catch (err) {
    report.problems.push(`killing: ${(err as Error).message}`);
  }
  for (const dir of plan.remove ?? []) {
    try {
      removeFolder(dir, report);
    } catch (err) {
      report.problems.push(`removing ${dir}: ${(err as Error).message}`);
    }
  }
  return report;
}

export interface Reaper {
  readonly pid: number;
  /** Settles once the keeper listens; rejects when it could not start. */
  readonly ready: Promise<void>;
  /** Asks the keeper to carry the plan out now; resolves with what it did once it has exited. */
  reap(): Promise<ReapReport>;
}

const THIS_FILE = fileURLToPath(import.meta.url);

/** Starts a keeper for `plan`: it carries it out when asked, or when this process ends however it ends. */
export function startReaper(plan: ReapPlan): Reaper {
  const env = { ...process.env };
  // Coverage and census preloads have nothing to measure in the keeper.
  delete env['NODE_OPTIONS'];
  const child = spawn(process.execPath, [THIS_FILE, JSON.stringify(plan)], { cwd: '/', detached: true, env, stdio: ['pipe', 'pipe', 'ignore'] });
  const input = child.stdin as unknown as Socket;
  const output = child.stdout as unknown as Socket;
  // Once it listens, neither the keeper nor its pipes keep this process alive: its end is the keeper's signal.
  child.unref();
  input.unref();
  let text = '';
  let onLine: ((line: string) => void) | undefined;
  output.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
      const line = text.slice(0, end);
      text = text.slice(end + 1);
      onLine?.(line);
    }
  });
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`the reaper (pid ${child.pid}) exited (${code ?? signal})`)));
  const ready = new Promise<void>((resolve, reject) => {
    onLine = (line) => (line === 'ready' ? resolve() : undefined);
    child.once('error', reject);
    void exited.then((why) => reject(new Error(`${why} before it was ready`)));
  });
  ready.then(
    () => output.unref(),
    () => undefined,
  );
  const askKeeper = async (): Promise<ReapReport> => {
    await ready;
    // Until the keeper has reported and exited, this process waits for it.
    child.ref();
    output.ref();
    const reported = new Promise<ReapReport>((resolve, reject) => {
      onLine = (line) => resolve(JSON.parse(line) as ReapReport);
      void exited.then((why) => reject(new Error(`${why} without a report`)));
    });
    input.end('reap\n');
    const report = await reported;
    await exited;
    return report;
  };
  return {
    pid: child.pid ?? 0,
    ready,
    async reap(): Promise<ReapReport> {
      try {
        return await askKeeper();
      } catch (err) {
        // No keeper to ask: the plan is carried out here instead.
        const report = reapNow(plan);
        report.problems.unshift(`the reaper could not do it: ${(err as Error).message}`);
        return report;
      }
    },
  };
}

/** The keeper itself: `node reaper.js PLAN`. */
function runReaper(plan: ReapPlan): void {
  let reaped = false;
  const reap = (): void => {
    if (reaped) return;
    reaped = true;
    const report = reapNow(plan);
    try {
      writeSync(1, `${JSON.stringify(report)}\n`);
    } catch {
      // the test process is gone; nobody reads the report
    }
    process.exit(report.problems.length === 0 ? 0 : 1);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, reap);
  process.stdin.on('data', (chunk: Buffer) => (chunk.includes('reap') ? reap() : undefined));
  process.stdin.on('end', reap);
  process.stdin.on('error', reap);
  try {
    writeSync(1, 'ready\n');
  } catch {
    reap();
  }
}

if (process.argv[1] !== undefined && existsSync(process.argv[1]) && realpathSync(process.argv[1]) === realpathSync(THIS_FILE)) {
  runReaper(JSON.parse(process.argv[2] ?? '{}') as ReapPlan);
}
