// Nothing outlives a systemd test, however its process ends. A fixture
// process (./cleanup-fixture.ts) makes what the boot test makes, under a
// reaper (../support/reaper.ts), and is killed right after; then, within a
// bound that only guards against a hang, no process it started may be
// alive, nothing may be mounted in its folder, and the folder must be gone.
//
// The reaper is tried on a stand-in (a bind mount kept busy, a process tree)
// for both ways a test process is ended from outside: SIGKILL, and the
// SIGTERM of node:test's timeout. One real container is killed too: booted,
// with a helper in its network, and its test process SIGKILLed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually, within } from '../support/eventually.ts';
import { reapNow, type ReapReport } from '../support/reaper.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import type { BootedContainer, StandIn } from './cleanup-fixture.ts';
import { cachedRoot, systemdTestUnsupported } from './debian-root.ts';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cleanup-fixture.js');
/** Real time, only against a hang: the reaper is done in well under a second. */
const BOUND_MS = 30_000;
const SENTINEL = 'the cache below the mount must survive\n';

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.charAt(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

/** Whether anything is mounted at or below `dir`, in /proc/self/mountinfo's own words. */
function mountedIn(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(` ${dir} `) || line.includes(` ${dir}/`));
}

interface Fixture<T> {
  child: ChildProcess;
  /** The first line it printed: what it made. */
  made: T | { skip: string };
  /** Its exit code and every line it printed, once it has exited. */
  ended: Promise<{ code: number | null; lines: string[] }>;
}

async function startFixture<T>(args: string[]): Promise<Fixture<T>> {
  const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const ended = new Promise<{ code: number | null; lines: string[] }>((resolve) =>
    child.on('close', (code) => resolve({ code, lines: stdout.split('\n').filter((line) => line !== '') })),
  );
  const line = new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
    child.on('exit', (code, signal) => reject(new Error(`the fixture exited (${code ?? signal}) before saying what it made: ${stdout}${stderr}`)));
  });
  const made = JSON.parse(await within(line, `the fixture ${args[0]}`, 90_000)) as T | { skip: string };
  return { child, made, ended };
}

/** What is left of `processes` and `folders`: empty once everything is gone. */
function leftovers(processes: Record<string, number>, folders: string[]): string[] {
  return [
    ...Object.entries(processes).filter(([, pid]) => alive(pid)).map(([name, pid]) => `${name} (pid ${pid}) alive`),
    ...folders.flatMap(mountedIn).map((line) => `still mounted: ${line}`),
    ...folders.filter((dir) => existsSync(dir)).map((dir) => `${dir} still there`),
  ];
}

/** Waits, within the bound, until nothing is left; fails saying what is. */
async function nothingLeft(processes: Record<string, number>, folders: string[]): Promise<void> {
  try {
    await eventually(() => leftovers(processes, folders).length === 0, 'nothing left behind', { boundMs: BOUND_MS, everyMs: 20 });
  } catch (err) {
    assert.fail(`${(err as Error).message}: ${leftovers(processes, folders).join('; ')}`);
  }
}

function unsupported(): string | undefined {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root (it mounts)';
  return undefined;
}

for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
  test(`a test process ended by ${signal}: the reaper kills the processes it names, unmounts a busy mount lazily and removes the folder, and the cache below the mount survives`, async (t) => {
    const cannot = unsupported();
    if (cannot !== undefined) return t.skip(cannot);
    const base = tempDir('reaper');
    const tmp = freshDir(base);
    const cache = freshDir(base);
    writeFileSync(path.join(cache, 'sentinel'), SENTINEL);
    const { child, made } = await startFixture<StandIn>(['stand-in', tmp, cache]);
    assert.ok(!('skip' in made));
    try {
      assert.equal(made.named.length, 3);
      assert.ok(made.named.every(alive) && alive(made.holder), 'the fixture made its processes');
      assert.equal(mountedIn(tmp).length, 1, 'the fixture mounted the cache');
      child.kill(signal);
      await nothingLeft(Object.fromEntries(made.named.map((pid, i) => [`named process ${i}`, pid])), [tmp]);
      assert.deepEqual(readdirSync(cache), ['sentinel']);
      assert.equal(readFileSync(path.join(cache, 'sentinel'), 'utf8'), SENTINEL);
      // The holder was not in the plan: it lives on, in the mount detached from the tree.
      assert.ok(alive(made.holder), 'the reaper killed a process its plan did not name');
    } finally {
      child.kill('SIGKILL');
      for (const pid of [made.holder, ...made.named]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      // After a failure: never leave the mount for the temporary folder's removal to reach into.
      reapNow({ remove: [tmp] });
    }
  });
}

test('reap() at the end of a test: the reaper does the same, reports exactly what it did, and the test process waits for it', async (t) => {
  const cannot = unsupported();
  if (cannot !== undefined) return t.skip(cannot);
  const base = tempDir('reaper');
  const tmp = freshDir(base);
  const cache = freshDir(base);
  writeFileSync(path.join(cache, 'sentinel'), SENTINEL);
  const { made, ended } = await startFixture<StandIn>(['reap', tmp, cache]);
  assert.ok(!('skip' in made));
  try {
    const { code, lines } = await within(ended, 'the fixture to reap and end', BOUND_MS);
    assert.equal(code, 0);
    const report = JSON.parse(lines[1] ?? 'null') as ReapReport;
    assert.deepEqual({ ...report, killed: [...report.killed].sort() }, { killed: [...made.named].sort(), unmounted: [path.join(tmp, 'mount')], removed: [tmp], problems: [] });
    assert.deepEqual(leftovers(Object.fromEntries(made.named.map((pid, i) => [`named process ${i}`, pid])), [tmp]), []);
    assert.equal(readFileSync(path.join(cache, 'sentinel'), 'utf8'), SENTINEL);
  } finally {
    for (const pid of [made.holder, ...made.named]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    reapNow({ remove: [tmp] });
  }
});

test('a container whose test process is SIGKILLed right after boot leaves no nspawn, no container, no helper, no mount and no folder', async (t) => {
  const cannot = await systemdTestUnsupported();
  if (cannot !== undefined) return t.skip(cannot);
  const lower = cachedRoot();
  // The suite's setup step makes the root where it can be made; the boot test says why when it was not.
  if (lower === undefined) return t.skip('no cached Debian root (the suite setup step makes it; see the systemd boot test)');
  const { child, made } = await startFixture<BootedContainer>(['container', lower]);
  if ('skip' in made) return t.skip(made.skip);
  const processes = { nspawn: made.nspawn, leader: made.leader, helper: made.helper };
  const propagation = path.join('/run/systemd/nspawn/propagate', made.name);
  try {
    assert.ok(Object.values(processes).every(alive), `the fixture's container runs: ${JSON.stringify(processes)}`);
    assert.equal(mountedIn(made.tmp).length, 1, 'the overlay is mounted');
    child.kill('SIGKILL');
    await nothingLeft(processes, [made.tmp, propagation]);
  } finally {
    child.kill('SIGKILL');
    reapNow({ killArguments: [`--directory=${path.join(made.tmp, 'root')}`], remove: [made.tmp, propagation] });
  }
});
