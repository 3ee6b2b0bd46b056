// One booted container for the systemd boot test: a throw-away overlay of the
// cached Debian root (a copy where overlayfs cannot be mounted), booted with
//   systemd-nspawn -b --register=no --keep-unit --private-network
// so no host systemd, machined or D-Bus is needed, and the container has a
// network of its own holding only loopback: the gateway listens on the
// documented 127.0.0.1:8080 and :8081 in there, never on the host's ports.
//
// The test reaches it with nsenter, by the PID of the container's init:
// - run(): a shell command in all of the container's namespaces (its file
//   system, PIDs, systemctl, journalctl), as root;
// - spawnInNetwork(): the host's Node with a script from the host's file
//   system, in the container's network namespace only (./network-agent.ts:
//   HTTP clients and a fake upstream on the container's loopback).
// The host's running Node binary is bound read-only to /usr/bin/node (Debian
// 12's nodejs is older than the package's engines.node).
//
// Everything it makes on the host is undone by a reaper (../support/reaper.ts)
// started before any of it, whether destroy() is called or the test process
// is killed: nspawn and the container, the test's processes in the
// container's network, the overlay mount, the folder, nspawn's own folders.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startReaper, type Reaper, type ReapReport } from '../support/reaper.ts';

const CONTAINER_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** How often boot() looks for the container's init: reading nspawn's children is cheap. */
const LEADER_POLL_MS = 20;
/** Between two `systemctl is-system-running --wait` that could not reach the manager yet. */
const MANAGER_POLL_MS = 50;

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class BootFailure extends Error {
  override name = 'BootFailure';
}

let made = 0;

export class Container {
  /** The folder the container boots from; a host-side write there is seen inside. */
  readonly root: string;
  /** A folder for the test's own files (a tarball, scripts), removed with the container. */
  readonly scratch: string;
  readonly name: string;
  /** The temporary folder holding all of the above, and the overlay's upper and work folders. */
  readonly tmp: string;
  private readonly reaper: Reaper;
  private nspawn: ChildProcess | undefined;
  private consoleText = '';
  private leaderPid = 0;

  private constructor(tmp: string, reaper: Reaper, name: string) {
    this.tmp = tmp;
    this.root = path.join(tmp, 'root');
    this.scratch = path.join(tmp, 'scratch');
    this.name = name;
    this.reaper = reaper;
  }

  /**
   * A fresh overlay of `lower` (a copy where overlayfs cannot be mounted), not
   * booted yet. A reaper (../support/reaper.ts) is started first: whatever
   * ends this process, the container, its processes, the overlay and the
   * folder go with it.
   */
  static create(options: { lower: string; log: (line: string) => void }): Container {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-systemd-'));
    const name = `portcullis-test-${process.pid}-${made++}`;
    const root = path.join(tmp, 'root');
    const reaper = startReaper({
      // systemd-nspawn is started with this argument; the container is its descendant, the helpers share its network.
      killArguments: [`--directory=${root}`],
      // nspawn's own folders for the machine, left behind when it is killed.
      remove: [tmp, path.join('/run/systemd/nspawn/propagate', name), path.join('/run/systemd/nspawn/unix-export', name)],
    });
    const container = new Container(tmp, reaper, name);
    for (const dir of [root, container.scratch, path.join(tmp, 'upper'), path.join(tmp, 'work')]) mkdirSync(dir);
    const mounted = spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${options.lower},upperdir=${path.join(tmp, 'upper')},workdir=${path.join(tmp, 'work')}`, root], {
      encoding: 'utf8',
    });
    if (mounted.status !== 0) {
      options.log(`overlayfs could not be mounted (${mounted.stderr.trim().replace(/\s+/g, ' ')}); copying the root instead`);
      const copied = spawnSync('cp', ['-a', '--reflink=auto', `${options.lower}/.`, root], { encoding: 'utf8' });
      if (copied.status !== 0) throw new Error(`cannot copy the Debian root: ${copied.stderr}`);
    }
    return container;
  }

  get console(): string {
    return this.consoleText;
  }

  /** The container's init, as seen from the host (0 before boot). */
  get leader(): number {
    return this.leaderPid;
  }

  /** systemd-nspawn's PID on the host. */
  get nspawnPid(): number {
    return this.nspawn?.pid ?? 0;
  }

  /** Boots it; throws BootFailure (with nspawn's own words) when nspawn cannot boot here. */
  async boot(timeoutMs: number): Promise<void> {
    await this.reaper.ready;
    const child = spawn(
      'systemd-nspawn',
      [
        '--boot',
        '--register=no',
        '--keep-unit',
        '--private-network',
        '--console=read-only',
        `--machine=${this.name}`,
        `--directory=${this.root}`,
        `--bind-ro=${process.execPath}:/usr/bin/node`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.nspawn = child;
    const collect = (chunk: Buffer): void => {
      if (this.consoleText.length < 1_000_000) this.consoleText += chunk.toString('utf8');
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const started = Date.now();
    const ended = (): boolean => child.exitCode !== null || child.signalCode !== null;
    while (this.leaderPid === 0) {
      if (ended()) throw new BootFailure(`systemd-nspawn exited (${child.exitCode ?? child.signalCode}) before the container's init started:\n${tail(this.consoleText)}`);
      if (Date.now() - started > timeoutMs) throw new BootFailure(`the container's init did not start within ${timeoutMs} ms:\n${tail(this.consoleText)}`);
      await sleep(LEADER_POLL_MS);
      this.leaderPid = child.pid === undefined ? 0 : findLeader(child.pid);
    }
    // Boot finished: "running", or "degraded" when some unit failed (said, not fatal).
    // --wait returns at once, saying "offline", while the manager cannot be reached yet.
    for (;;) {
      const left = Math.max(1_000, timeoutMs - (Date.now() - started));
      const state = await this.run('systemctl is-system-running --wait', { timeoutMs: left });
      const word = state.stdout.trim();
      if (word === 'running') return;
      if (word === 'degraded') {
        const failed = await this.run('systemctl --failed --no-legend --plain', { timeoutMs: 10_000 });
        console.log(`# systemd-boot: the container booted degraded; failed units: ${failed.stdout.trim()}`);
        return;
      }
      if (ended()) throw new BootFailure(`systemd-nspawn exited (${child.exitCode ?? child.signalCode}) while booting:\n${tail(this.consoleText)}`);
      if (Date.now() - started > timeoutMs) {
        throw new BootFailure(`the container did not finish booting within ${timeoutMs} ms (state: ${word || state.stderr.trim()}):\n${tail(this.consoleText)}`);
      }
      await sleep(MANAGER_POLL_MS);
    }
  }

  /** A shell command as root in all of the container's namespaces. */
  run(script: string, options: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
    if (this.leaderPid === 0) throw new Error('the container is not booted');
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve) => {
      const child = spawn('nsenter', ['-t', String(this.leaderPid), '-a', '--', '/usr/bin/env', '-i', CONTAINER_PATH, 'HOME=/root', 'LANG=C.UTF-8', 'sh', '-c', script], {
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
      child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      const timer = setTimeout(() => {
        stderr += `\n[killed: no exit within ${timeoutMs} ms]`;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  /** The host's Node running a host file, in the container's network namespace only (the reaper kills it with the container). */
  spawnInNetwork(script: string, args: string[]): ChildProcess {
    if (this.leaderPid === 0) throw new Error('the container is not booted');
    return spawn('nsenter', ['-t', String(this.leaderPid), '-n', '--', process.execPath, script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  }

  /**
   * Kills the container (SIGKILL to nspawn, its init and everything in its
   * network), unmounts the overlay and removes the folder, by its reaper.
   * No clean poweroff: nothing in it is kept, and a kill is instant.
   */
  async destroy(): Promise<ReapReport> {
    return this.reaper.reap();
  }
}

/** The container's init: nspawn's child whose PID in its own namespace is 1 (nspawn is its subreaper). */
function findLeader(nspawnPid: number): number {
  let children: number[];
  try {
    children = readdirSync(`/proc/${nspawnPid}/task`).flatMap((task) =>
      readFileSync(`/proc/${nspawnPid}/task/${task}/children`, 'utf8').trim().split(' ').filter((pid) => pid !== '').map(Number),
    );
  } catch {
    return 0; // nspawn is gone: boot() says so
  }
  for (const pid of children) {
    try {
      const nspid = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
      if (nspid.length >= 2 && nspid[nspid.length - 1] === '1') return pid;
    } catch {
      // gone while we looked
    }
  }
  return 0;
}

function tail(text: string, lines = 40): string {
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trim().split('\n').slice(-lines).join('\n');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

