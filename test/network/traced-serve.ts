// The compiled `portcullis serve` in a mount namespace of its own, under
// strace, for the test of every address it connects to:
//
//   unshare --mount --propagation private
//     sh: bind-mount a private hosts file over /etc/hosts and a private
//         resolv.conf over /etc/resolv.conf, then exec
//     strace -D -f -ttt -v -yy -s 0 -e trace=connect,sendto,sendmsg,sendmmsg,execve
//            -e signal=none -o TRACE
//       node dist/src/cli/main.js serve ARGS
//
// Each step execs the next, and -D makes strace a detached grandchild, so the
// process spawned here IS the server: its PID takes SIGHUP and SIGTERM, its
// exit status is the server's. strace writes each line as the call is made
// (checked with strace 6.1), so the test can wait on the file for a helper
// process to end; it splits the trace into phases by strace's -ttt clock
// (CLOCK_REALTIME, as Date.now()), and parses it once strace has written the
// server's exit line.
//
// Outside root, --user --map-root-user gives the namespace the right to mount.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { killWithThisProcess } from '../support/child-watchdog.ts';
import { SERVER_MAIN, watchServe, type LogLine } from '../cli/serve-process.ts';
import { SYSTEMD_NOTIFY_COMMAND } from '../../src/ops/systemd-notify.ts';

/** Any single wait on the server; the machine is shared and loaded. */
export const WAIT_MS = 20_000;

/** strace's options besides -D and -o: -v prints each sendmmsg's messages in full, -yy each netlink socket's protocol (./strace-connects.ts). */
export const STRACE_ARGS = ['-f', '-ttt', '-v', '-yy', '-s', '0', '-e', 'trace=connect,sendto,sendmsg,sendmmsg,execve', '-e', 'signal=none'];

/** The programs the quiet test needs, each with the Debian package .ci/install-system-packages installs it from. */
export const PREREQUISITES: ReadonlyArray<{ program: string; args: string[]; pkg: string }> = [
  { program: 'strace', args: ['-V'], pkg: 'strace' },
  { program: 'unshare', args: ['--version'], pkg: 'util-linux' },
  { program: SYSTEMD_NOTIFY_COMMAND, args: ['--version'], pkg: 'systemd' },
  { program: 'python3', args: ['--version'], pkg: 'python3' },
];

/** The namespace's only nameserver: a loopback address no resolver plausibly listens on (systemd-resolved is on 127.0.0.53). */
export const NAMESERVER = '127.53.0.1';

/** unshare's options for a mount namespace: outside root, a user namespace gives it the right to mount. */
function namespaceArgs(): string[] {
  const user = process.geteuid?.() === 0 ? [] : ['--user', '--map-root-user'];
  return [...user, '--mount', '--propagation', 'private'];
}

/** Why the trace cannot be taken here (a missing program, a namespace the machine refuses), or false. */
export function tracingMissing(): string | false {
  for (const { program, args, pkg } of PREREQUISITES) {
    if (spawnSync(program, args, { stdio: 'ignore' }).status !== 0) return `${program} not found: install the Debian package ${pkg} (.ci/install-system-packages does)`;
  }
  // The namespace must allow what the run does in it: a bind mount over /etc.
  const probe = spawnSync('unshare', [...namespaceArgs(), '--', '/bin/sh', '-c', 'mount --bind /etc/hosts /etc/hosts'], { encoding: 'utf8' });
  if (probe.status !== 0) return `\`unshare ${namespaceArgs().join(' ')}\` fails here (${probe.stderr.trim() || `status ${probe.status}`}): run as root, or where unprivileged user namespaces are allowed`;
  return false;
}

/**
 * What is bound to port 53 on NAMESERVER or on every address (0.0.0.0, ::),
 * read from /proc/net/{udp,tcp,udp6,tcp6}: empty when nothing could answer
 * a lookup sent there.
 */
export function nameserverListeners(read: (table: string) => string = (table) => readFileSync(`/proc/net/${table}`, 'utf8')): string[] {
  // /proc/net/* prints an IPv4 address as its bytes in host order (little-endian here), then the port.
  const hex = (ip: string): string => Buffer.from(ip.split('.').map(Number)).readUInt32LE(0).toString(16).toUpperCase().padStart(8, '0');
  const wanted = new Map([
    [`${hex(NAMESERVER)}:0035`, `${NAMESERVER}:53`],
    [`${hex('0.0.0.0')}:0035`, '0.0.0.0:53'],
    [`${'0'.repeat(32)}:0035`, '[::]:53'],
  ]);
  const found: string[] = [];
  for (const table of ['udp', 'tcp', 'udp6', 'tcp6']) {
    let text: string;
    try {
      text = read(table);
    } catch {
      continue;
    }
    for (const row of text.split('\n').slice(1)) {
      const local = row.trim().split(/\s+/)[1];
      const where = local === undefined ? undefined : wanted.get(local);
      // A TCP socket only listens in state 0A (LISTEN); a UDP socket bound there receives.
      if (where !== undefined && (table.startsWith('udp') || row.trim().split(/\s+/)[3] === '0A')) found.push(`${table} ${where}`);
    }
  }
  return found;
}

export interface TracedServe {
  child: ChildProcess;
  /** The strace output file (complete once `finished` resolved). */
  traceFile: string;
  /** The first JSON log line `match` accepts, already written or still to come; bounded. */
  line(match: (l: LogLine) => boolean, what: string): Promise<LogLine>;
  /**
   * Once the trace shows `count` child processes started (execve) and every
   * one of them ended: a phase that ran a helper (systemd-notify) is over
   * only when the helper is. Bounded.
   */
  childrenEnded(count: number): Promise<void>;
  /** The exit status, and the trace once strace has written the server's end (bounded from the exit on). */
  finished(): Promise<{ code: number | null; signal: NodeJS.Signals | null; trace: string }>;
  output(): string;
  kill(): void;
}

export interface TracedServeOptions {
  dir: string;
  /** Arguments after `serve`. */
  args: string[];
  /** Names the private /etc/hosts maps to 127.0.0.1, and nothing else. */
  hostNames: readonly string[];
  /** The whole environment besides PATH and HOME=dir. */
  env?: Record<string, string>;
}

export function spawnTracedServe(options: TracedServeOptions): TracedServe {
  const hosts = path.join(options.dir, 'hosts');
  const resolv = path.join(options.dir, 'resolv.conf');
  const traceFile = path.join(options.dir, 'strace.txt');
  writeFileSync(hosts, options.hostNames.map((name) => `127.0.0.1 ${name}\n`).join(''));
  // NAMESERVER is a loopback address nothing plausible listens on (the test
  // checks /proc/net before the run): a lookup of any other name is a
  // datagram to port 53 in the trace, refused at once.
  writeFileSync(resolv, `nameserver ${NAMESERVER}\noptions timeout:1 attempts:1\n`);
  writeFileSync(traceFile, '');
  const mount = 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"';
  const child = spawn(
    'unshare',
    [...namespaceArgs(), '--', '/bin/sh', '-c', mount, 'sh', hosts, resolv, 'strace', '-D', ...STRACE_ARGS, '-o', traceFile, process.execPath, SERVER_MAIN, 'serve', ...options.args],
    { cwd: options.dir, env: { PATH: process.env['PATH'] ?? '', HOME: options.dir, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  killWithThisProcess(child);
  const watched = watchServe(child, WAIT_MS);

  const output = (): string => `\nstdout:\n${watched.stdout()}\nstderr:\n${watched.stderr()}`;
  return {
    child,
    traceFile,
    line: watched.line,
    childrenEnded: async (count) => {
      await traceShows(traceFile, (text) => childrenEndedIn(text, child.pid ?? -1) >= count, `${count} child processes started and ended`, output);
    },
    finished: () => watched.exited.then(async (status) => ({ ...status, trace: await traceComplete(traceFile, child.pid ?? -1, output) })),
    output,
    kill: watched.kill,
  };
}

/** How many children the trace shows started, or -1 while one of them still runs. */
function childrenEndedIn(text: string, serverPid: number): number {
  const started = [...text.matchAll(/^(\d+) +\d+\.\d+ execve\(/gm)].map((m) => Number(m[1])).filter((tid) => tid !== serverPid);
  const ended = new Set([...text.matchAll(/^(\d+) +\d+\.\d+ \+\+\+ (?:exited with|killed by)/gm)].map((m) => Number(m[1])));
  return started.every((tid) => ended.has(tid)) ? started.length : -1;
}

/**
 * The trace once strace (a detached grandchild, outliving the server by a
 * moment) has written the line of the server's own exit.
 */
function traceComplete(traceFile: string, pid: number, output: () => string): Promise<string> {
  const end = new RegExp(`^${pid} +\\d+\\.\\d+ \\+\\+\\+ (?:exited with|killed by)`, 'm');
  return traceShows(traceFile, (text) => end.test(text), `the end of process ${pid}`, output);
}

/**
 * The trace once `done` accepts it; bounded, woken by each write to the file
 * (strace writes each line as the call is made).
 */
function traceShows(traceFile: string, done: (text: string) => boolean, what: string, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const watcher = watch(traceFile);
    const finish = (): void => {
      clearTimeout(timer);
      watcher.close();
    };
    const check = (): void => {
      const text = readFileSync(traceFile, 'utf8');
      if (done(text)) {
        finish();
        resolve(text);
      }
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`strace's trace did not show ${what} within ${WAIT_MS} ms${output()}`));
    }, WAIT_MS);
    watcher.on('change', check);
    watcher.on('error', (error) => {
      finish();
      reject(error);
    });
    check();
  });
}
