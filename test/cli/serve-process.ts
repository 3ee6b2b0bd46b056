// The compiled `portcullis serve` as a child process, for tests that need the
// real process: its signals, its inherited descriptors, its stdout and stderr.
// Every wait is bounded and names what it waited for, with the server's output;
// waits on the output are woken by what the server writes.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Run from dist/test/cli/ this is dist/src/cli/main.js, the compiled server;
// run from the sources (tsx) it does not exist and the tests are skipped.
export const SERVER_MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
export const skipUnlessCompiled: string | false = !existsSync(SERVER_MAIN) && 'needs the compiled server (run from the build output)';

/** How long any single wait on the server may take before the test fails. */
export const WAIT_MS = 15_000;
/** Bounds the captured output: a runaway server fails the test instead of filling memory. */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

export type LogLine = Record<string, unknown>;

export interface ServeOptions {
  /** Arguments after `serve`. */
  args: string[];
  cwd: string;
  /** Added to a minimal environment (PATH, HOME=cwd). */
  env?: Record<string, string>;
  /**
   * Listening descriptors handed over as systemd does: descriptors 3, 4, ...
   * with LISTEN_FDS and LISTEN_FDNAMES, and LISTEN_PID set to the server's own
   * PID by a shell that then `exec`s node (so the PID stays the same).
   */
  listenFds?: { fds: number[]; names: string[] };
  /** The process's limit on open descriptors (`ulimit -n` in a shell that then `exec`s node). */
  descriptorLimit?: number;
}

export interface ServeProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Complete stdout lines so far, unparsed. */
  stdoutLines(): string[];
  /** Complete stdout lines parsed as JSON; a line that is not a JSON object throws, naming it. */
  lines(): LogLine[];
  /** The first log line `match` accepts, already written or still to come; bounded. */
  line(match: (l: LogLine) => boolean, what: string): Promise<LogLine>;
  /** Every log line `match` accepts once there are `count` of them; bounded. */
  linesCount(match: (l: LogLine) => boolean, count: number, what: string): Promise<LogLine[]>;
  /** The first value `probe` returns (not undefined), checked as the server writes; bounded. */
  until<T>(probe: () => T | undefined, what: string): Promise<T>;
  /** `promise`, or a failure naming `what` with the server's output after `ms`. */
  bounded<T>(promise: Promise<T>, what: string, ms?: number): Promise<T>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL unless it has exited; for after(). */
  kill(): void;
}

export function spawnServe(options: ServeOptions): ServeProcess {
  const env = { PATH: process.env['PATH'] ?? '', HOME: options.cwd, ...options.env };
  const passed = options.listenFds;
  const limit = options.descriptorLimit;
  const child =
    limit !== undefined
      ? spawn('/bin/sh', ['-c', `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, SERVER_MAIN, 'serve', ...options.args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : passed === undefined
      ? spawn(process.execPath, [SERVER_MAIN, 'serve', ...options.args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(
          '/bin/sh',
          ['-c', `LISTEN_PID=$$ LISTEN_FDS=${passed.fds.length} LISTEN_FDNAMES=${passed.names.join(':')} exec "$0" "$@"`, process.execPath, SERVER_MAIN, 'serve', ...options.args],
          { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe', ...passed.fds] },
        );

  return watchServe(child);
}

/**
 * The waits and captured output of a `serve` child however it was started (a
 * shell, a namespace, a tracer that execs it): what spawnServe returns.
 */
export function watchServe(child: ChildProcess, waitMs = WAIT_MS): ServeProcess {
  let out = '';
  let err = '';
  let closed = false;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (text: string) => {
    if (out.length < MAX_OUTPUT_CHARS) out += text;
    wake();
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    if (err.length < MAX_OUTPUT_CHARS) err += text;
    wake();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // After 'close' no more output comes: a wait still unmet then fails at once.
  child.on('close', () => {
    closed = true;
    wake();
  });

  // A line may arrive in pieces: only complete lines count.
  const stdoutLines = (): string[] => out.split('\n').slice(0, -1);
  const lines = (): LogLine[] =>
    stdoutLines().map((text, i) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new Error(`stdout line ${i + 1} is not JSON: ${JSON.stringify(text)}`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`stdout line ${i + 1} is not a JSON object: ${text}`);
      return value as LogLine;
    });
  const output = (): string => `\nstdout:\n${out}\nstderr:\n${err}`;

  const until = <T>(probe: () => T | undefined, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      const check = (): void => {
        let found: T | undefined;
        try {
          found = probe();
        } catch (error) {
          finish();
          reject(error);
          return;
        }
        if (found !== undefined) {
          finish();
          resolve(found);
        } else if (closed) {
          finish();
          reject(new Error(`${what}: not seen before the server's output ended${output()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${what}: not seen within ${waitMs} ms${output()}`));
      }, WAIT_MS);
      waiters.add(check);
      check();
    });

  const linesCount = (match: (l: LogLine) => boolean, count: number, what: string): Promise<LogLine[]> =>
    until(() => {
      const found = lines().filter(match);
      return found.length >= count ? found : undefined;
    }, `log line: ${what}`);

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    stdoutLines,
    lines,
    line: async (match, what) => (await linesCount(match, 1, what))[0] as LogLine,
    linesCount,
    until,
    async bounded<T>(promise: Promise<T>, what: string, ms = waitMs): Promise<T> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}${output()}`)), ms);
      });
      try {
        return await Promise.race([promise, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
