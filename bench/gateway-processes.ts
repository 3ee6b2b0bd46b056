// The parent side of bench/gateway.ts's child processes: starting each server
// in its own process, reading its CPU time, and making sure every one of them
// is gone at the end, on an error and on Ctrl-C.

import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import type { CpuQuery, CpuReply, ListeningMessage } from './gateway-server-child.ts';

const START_TIMEOUT_MS = 15_000;
const QUERY_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 12_000;
/** Keeps the last of a child's stderr for error messages, not all of it. */
const STDERR_KEEP_CHARS = 4_000;

export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  /** 0 for a process that serves nothing (the log sink). */
  readonly port: number;
  readonly child: ChildProcess;
  /** User + system CPU time used so far, in µs. */
  cpuMicros(): Promise<number>;
  /** The child's stderr so far (the tail), for error messages. */
  stderrTail(): string;
}

/** Every started child, so that `stopAll` and the exit hook can find them. */
const running = new Set<ChildProcess>();

process.on('exit', () => {
  // Last resort (an uncaught error, process.exit): no waiting possible here.
  for (const child of running) child.kill('SIGKILL');
});

function track(child: ChildProcess): void {
  running.add(child);
  child.on('exit', () => running.delete(child));
  // Failures to signal or message a child surface where they are made (a
  // rejected query, a start that times out); the event would only crash us.
  child.on('error', () => undefined);
}

function collectStderr(child: ChildProcess): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    tail = (tail + text).slice(-STDERR_KEEP_CHARS);
  });
  return () => tail;
}

/** Node flags the children need to load this file's siblings: under tsx they
 * carry its loader; compiled, they are whatever node was started with. */
export function childExecArgv(): string[] {
  return [...process.execArgv];
}

/** Forks one of the bench/gateway-*.ts servers and waits for its port. */
export async function forkBenchServer(name: string, moduleUrl: URL, args: string[], stdin: 'ignore' | 'pipe' = 'ignore'): Promise<BenchProcess> {
  const child = fork(moduleUrl, args, { stdio: [stdin, 'ignore', 'pipe', 'ipc'], execArgv: childExecArgv() });
  track(child);
  const stderrTail = collectStderr(child);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const onMessage = (message: unknown): void => {
      const m = message as Partial<ListeningMessage>;
      if (m.type !== 'listening' || typeof m.port !== 'number') return;
      cleanup();
      resolve(m.port);
    };
    const onExit = (code: number | null): void => fail(new Error(`${name} exited (${code}) before it was ready:\n${stderrTail()}`));
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
  const ask = createIpcAsker(child, name);
  return {
    name,
    pid: child.pid as number,
    port,
    child,
    stderrTail,
    cpuMicros: async () => {
      const reply = (await ask({ type: 'cpu' })) as Partial<CpuReply>;
      if (typeof reply.micros !== 'number') throw new Error(`${name} sent no CPU time`);
      return reply.micros;
    },
  };
}

/** Request/reply over a child's IPC channel, matched by id. */
export function createIpcAsker(child: ChildProcess, name: string): (query: { type: string }) => Promise<Record<string, unknown>> {
  let nextId = 1;
  const pending = new Map<number, (reply: Record<string, unknown>) => void>();
  child.on('message', (message: unknown) => {
    const reply = message as Record<string, unknown>;
    const resolve = typeof reply['id'] === 'number' ? pending.get(reply['id']) : undefined;
    if (resolve === undefined) return;
    pending.delete(reply['id'] as number);
    resolve(reply);
  });
  return (query) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${name} did not answer '${query.type}' within ${QUERY_TIMEOUT_MS} ms`));
      }, QUERY_TIMEOUT_MS);
      pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      const message: CpuQuery | { type: string; id: number } = { ...query, id };
      child.send(message, (error) => {
        if (error === null) return;
        clearTimeout(timer);
        pending.delete(id);
        reject(new Error(`${name} is gone (${error.message})`));
      });
    });
}

/** A key made by `cli keys create` against `configPath` (its data directory). */
export function createKey(cli: URL, configPath: string): string {
  const out = execFileSync(
    process.execPath,
    [...childExecArgv(), fileURLToPath(cli), 'keys', 'create', '--name', 'bench', '--json', '--config', configPath],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
  );
  const key = (JSON.parse(out) as { key?: unknown }).key;
  if (typeof key !== 'string') throw new Error(`keys create printed no key: ${out}`);
  return key;
}

export interface GatewayStart {
  /** The compiled (or, under tsx, source) src/cli/main. */
  mainModule: URL;
  configPath: string;
  /** Where the gateway's stdout (its JSON log lines) goes: a pipe to the log sink. */
  stdout: Writable;
  /** Extra node flags for the gateway only (e.g. --cpu-prof). */
  nodeFlags: string[];
  /** The target's name, in errors and on the BenchProcess: 'gateway' (the
   * default) or 'baseline' (another build's CLI, BENCH_BASELINE). */
  name?: string;
}

const LISTENING_LINE = /Portcullis listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/;

/** `portcullis serve --config FILE --port 0 --host 127.0.0.1`, waiting for its banner. */
export async function startGateway(options: GatewayStart): Promise<BenchProcess> {
  const name = options.name ?? 'gateway';
  const label = name === 'gateway' ? 'the gateway' : `the ${name} gateway (${fileURLToPath(options.mainModule)})`;
  const args = [...childExecArgv(), ...options.nodeFlags, fileURLToPath(options.mainModule), 'serve', '--config', options.configPath, '--port', '0', '--host', '127.0.0.1'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', options.stdout, 'pipe'] });
  track(child);
  const stderrTail = collectStderr(child);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms:\n${stderrTail()}`)), START_TIMEOUT_MS);
    const onData = (): void => {
      const match = LISTENING_LINE.exec(stderrTail());
      if (match === null) return;
      cleanup();
      resolve(Number(match[1]));
    };
    const onExit = (code: number | null): void => fail(new Error(`${label} exited (${code}) before it was ready:\n${stderrTail()}`));
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    };
    child.stderr?.on('data', onData);
    child.on('exit', onExit);
  });
  const pid = child.pid as number;
  const ticks = clockTicksPerSecond();
  return {
    name,
    pid,
    port,
    child,
    stderrTail,
    // The gateway has no IPC channel (it is the real CLI, unchanged): read the
    // kernel's account of it. Resolution is one clock tick (10 ms at 100 Hz).
    cpuMicros: async () => procCpuMicros(pid, ticks),
  };
}

/** utime + stime of a process from /proc/PID/stat (Linux), in µs. */
export function procCpuMicros(pid: number, ticksPerSecond: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces:
  // state(3) ... utime(14) stime(15), counted from 1 over the whole line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read CPU time from /proc/${pid}/stat`);
  return ((utime + stime) * 1e6) / ticksPerSecond;
}

let cachedTicks: number | undefined;
function clockTicksPerSecond(): number {
  if (cachedTicks !== undefined) return cachedTicks;
  try {
    cachedTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    cachedTicks = 100;
  }
  return cachedTicks;
}

/** Stops one child: SIGTERM, then SIGKILL when it lingers. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
  });
  if ((await Promise.race([exited, late])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

/** Stops every child still running, in the order given first (the gateway
 * before its upstream, so that it can shut down cleanly), then the rest. */
export async function stopAll(first: readonly BenchProcess[] = []): Promise<void> {
  for (const p of first) await stopProcess(p.child);
  await Promise.all([...running].map((child) => stopProcess(child)));
}

/** A numeric BENCH_* setting from the environment: `fallback` when unset; a value outside [min, max] stops the run. */
export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number from ${min} to ${max}`);
  return value;
}
