// The compiled `portcullis serve` in a mount namespace of its own, under
// strace, for the test of every address it connects to:
//
//   unshare --mount --propagation private
//     sh: bind-mount a private hosts file over /etc/hosts and a private
//         resolv.conf over /etc/resolv.conf, then exec
//     strace -D -f -ttt -s 0 -e trace=connect,sendto,sendmsg,sendmmsg,execve
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

/** Any single wait on the server; the machine is shared and loaded. */
export const WAIT_MS = 20_000;

const STRACE_ARGS = ['-D', '-f', '-ttt', '-s', '0', '-e', 'trace=connect,sendto,sendmsg,sendmmsg,execve', '-e', 'signal=none'];

/** Why the trace cannot be taken here (a missing program), or false. */
export function tracingMissing(): string | false {
  for (const [program, pkg] of [['strace', 'strace'], ['unshare', 'util-linux']] as const) {
    if (spawnSync(program, ['--version'], { stdio: 'ignore' }).status !== 0) return `${program} not found: install the Debian package ${pkg} (.ci/install-system-packages does)`;
  }
  return false;
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
  // Nothing listens on 127.0.0.53 in the namespace's network: a lookup of any
  // other name is a datagram to port 53 in the trace, refused at once.
  writeFileSync(resolv, 'nameserver 127.0.0.53\noptions timeout:1 attempts:1\n');
  writeFileSync(traceFile, '');
  const user = process.geteuid?.() === 0 ? [] : ['--user', '--map-root-user'];
  const mount = 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"';
  const child = spawn(
    'unshare',
    [...user, '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', mount, 'sh', hosts, resolv, 'strace', ...STRACE_ARGS, '-o', traceFile, process.execPath, SERVER_MAIN, 'serve', ...options.args],
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
