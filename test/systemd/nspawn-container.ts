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
//   system, in the container's network namespace only: HTTP clients and a fake
//   upstream on the container's loopback.
// The host's running Node binary is bound read-only to /usr/bin/node (Debian
// 12's nodejs is older than the package's engines.node).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const CONTAINER_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class BootFailure extends Error {
  override name = 'BootFailure';
}

interface ContainerOptions {
  /** The cached tree; never written to. */
  lower: string;
  /** A fresh temporary folder owned by this container. */
  tmp: string;
  /** Called with the folder the container boots from, before it boots. */
  prepare: (root: string) => void;
  log: (line: string) => void;
}

export class Container {
  readonly root: string;
  readonly name: string;
  private readonly tmp: string;
  private overlay = false;
  private nspawn: ChildProcess | undefined;
  private consoleText = '';
  private leaderPid = 0;
  private readonly helpers = new Set<ChildProcess>();

  private constructor(tmp: string) {
    this.tmp = tmp;
    this.root = path.join(tmp, 'root');
    this.name = `portcullis-test-${process.pid}`;
  }

  /** The overlay (or copy), prepared; not booted yet. */
  static create(options: ContainerOptions): Container {
    const container = new Container(options.tmp);
    registerForExit(container);
    const { root, tmp } = container;
    mkdirSync(root);
    mkdirSync(path.join(tmp, 'upper'));
    mkdirSync(path.join(tmp, 'work'));
    const mounted = spawnSync(
      'mount',
      ['-t', 'overlay', 'overlay', '-o', `lowerdir=${options.lower},upperdir=${path.join(tmp, 'upper')},workdir=${path.join(tmp, 'work')}`, root],
      { encoding: 'utf8' },
    );
    if (mounted.status === 0) {
      container.overlay = true;
    } else {
      options.log(`overlayfs could not be mounted (${mounted.stderr.trim().replace(/\s+/g, ' ')}); copying the root instead`);
      const copied = spawnSync('cp', ['-a', '--reflink=auto', `${options.lower}/.`, root], { encoding: 'utf8' });
      if (copied.status !== 0) throw new Error(`cannot copy the Debian root: ${copied.stderr}`);
    }
    options.prepare(root);
    return container;
  }

  get console(): string {
    return this.consoleText;
  }

  /** Boots it; throws BootFailure (with nspawn's own words) when nspawn cannot boot here. */
  async boot(timeoutMs: number): Promise<void> {
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
    while (this.leaderPid === 0) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new BootFailure(`systemd-nspawn exited (${child.exitCode ?? child.signalCode}) before the container's init started:\n${tail(this.consoleText)}`);
      }
      if (Date.now() - started > timeoutMs) throw new BootFailure(`the container's init did not start within ${timeoutMs} ms:\n${tail(this.consoleText)}`);
      await sleep(100);
      this.leaderPid = child.pid === undefined ? 0 : findLeader(child.pid);
    }
    // Boot finished: "running", or "degraded" when some unit failed (said, not fatal).
    for (;;) {
      const state = await this.run('systemctl is-system-running', { timeoutMs: 10_000 });
      const word = state.stdout.trim();
      if (word === 'running') return;
      if (word === 'degraded') {
        const failed = await this.run('systemctl --failed --no-legend --plain', { timeoutMs: 10_000 });
        console.log(`# systemd-boot: the container booted degraded; failed units: ${failed.stdout.trim()}`);
        return;
      }
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new BootFailure(`systemd-nspawn exited (${child.exitCode ?? child.signalCode}) while booting:\n${tail(this.consoleText)}`);
      }
      if (Date.now() - started > timeoutMs) {
        throw new BootFailure(`the container did not finish booting within ${timeoutMs} ms (state: ${word || state.stderr.trim()}):\n${tail(this.consoleText)}`);
      }
      await sleep(200);
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

  /** The host's Node running a host file, in the container's network namespace only. */
  spawnInNetwork(script: string, args: string[]): ChildProcess {
    if (this.leaderPid === 0) throw new Error('the container is not booted');
    const child = spawn('nsenter', ['-t', String(this.leaderPid), '-n', '--', process.execPath, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.helpers.add(child);
    child.on('exit', () => this.helpers.delete(child));
    return child;
  }

  /** Powers the container off (SIGKILL after timeoutMs), then removes the overlay and the folder. */
  async destroy(timeoutMs: number): Promise<void> {
    for (const helper of this.helpers) helper.kill('SIGKILL');
    const child = this.nspawn;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // nspawn turns SIGTERM into SIGRTMIN+3 for the container's systemd: a clean poweroff.
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        console.log(`# systemd-boot: the container did not power off within ${timeoutMs} ms; killing it. Its console:\n${tail(this.consoleText, 30)}`);
        this.killNow();
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    }
    this.removeFiles();
    unregisterForExit(this);
  }

  /** Synchronous last resort (process exit, a timed-out test). */
  killNow(): void {
    for (const helper of this.helpers) helper.kill('SIGKILL');
    // SIGKILL to a PID namespace's init ends every process in it.
    if (this.leaderPid !== 0) {
      try {
        process.kill(this.leaderPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.nspawn?.kill('SIGKILL');
  }

  removeFiles(): void {
    if (this.overlay) {
      const unmounted = spawnSync('umount', [this.root], { encoding: 'utf8' });
      // Busy a moment after the container's end: detach it now, it goes when the last user does.
      if (unmounted.status !== 0) spawnSync('umount', ['--lazy', this.root]);
      this.overlay = false;
    }
    if (isMountPoint(this.root)) return; // never rm -rf into a mounted tree (the cache below it)
    rmSync(this.tmp, { recursive: true, force: true });
    // nspawn's own propagation folder, when it leaves it behind.
    rmSync(path.join('/run/systemd/nspawn/propagate', this.name), { recursive: true, force: true });
  }
}

/** The container's init: a descendant of nspawn whose PID in its own namespace is 1. */
function findLeader(nspawnPid: number): number {
  const parents = new Map<number, number>();
  const candidates: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(/^PPid:\s*(\d+)/m.exec(status)?.[1] ?? 0);
    parents.set(Number(entry), ppid);
    const nspid = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
    if (nspid.length >= 2 && nspid[nspid.length - 1] === '1') candidates.push(Number(entry));
  }
  for (const candidate of candidates) {
    for (let pid = parents.get(candidate) ?? 0, depth = 0; pid > 1 && depth < 8; pid = parents.get(pid) ?? 0, depth++) {
      if (pid === nspawnPid) return candidate;
    }
  }
  return 0;
}

function isMountPoint(dir: string): boolean {
  if (!existsSync(dir)) return false;
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  return mounts.split('\n').some((line) => line.split(' ')[4] === dir);
}

function tail(text: string, lines = 40): string {
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trim().split('\n').slice(-lines).join('\n');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Containers still up when the process exits (a crash, a test runner giving
// up) are killed and their overlays removed, synchronously.
const live = new Set<Container>();
function registerForExit(container: Container): void {
  if (live.size === 0) process.once('exit', cleanUpAtExit);
  live.add(container);
}
function unregisterForExit(container: Container): void {
  live.delete(container);
}
function cleanUpAtExit(): void {
  for (const container of live) {
    container.killNow();
    container.removeFiles();
  }
}
