// A real forward proxy for tests: Debian's tinyproxy, on 127.0.0.1, with a
// generated config file and its log in a temporary directory.
//
// sharedTinyproxy(kind): one proxy of each kind per test process, started on
// first use and killed when the process ends: "open" lets CONNECT reach any
// port, "guarded" too but only with TINYPROXY_USER and TINYPROXY_PASSWORD,
// "closed" allows CONNECT to no port the tests use. Their logs are shared:
// a test looks in them for its own upstream's port.
// startTinyproxy(options): a proxy of one's own, with other rules.
//
// tinyproxy cannot listen on port 0, so a free port is found by binding a
// server to port 0 and closing it, and the start is retried on another port
// when tinyproxy exits (another process took the port in between).
// .ci/install-system-packages installs it; the tests skip, saying so, only
// when the binary is missing.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killWithThisProcess, unrefChild } from './child-watchdog.ts';
import { freePort, terminate } from './processes.ts';
import { tempDir } from './temp-dir.ts';

export interface TinyproxyOptions {
  /** Ports CONNECT may reach (tinyproxy's ConnectPort); other ports get 403. None: every port. */
  connectPorts?: readonly number[];
  /** BasicAuth: a CONNECT without these credentials gets 407. */
  basicAuth?: { user: string; password: string };
}

export interface TinyproxyHandle {
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** The proxy's log so far. */
  log(): string;
  /** SIGTERM and wait for exit; removes the temporary directory. */
  stop(): Promise<void>;
}

/** The credentials of the shared "guarded" proxy: a "-" to show percent-encoding in URLs. */
export const TINYPROXY_USER = 'gw';
export const TINYPROXY_PASSWORD = 's3cret-w0rd';

/**
 * What CONNECT may reach through each shared proxy. "closed" allows port 1
 * only: no test listens there, so any CONNECT a test makes is refused (403).
 */
const SHARED_KINDS = {
  open: {},
  guarded: { basicAuth: { user: TINYPROXY_USER, password: TINYPROXY_PASSWORD } },
  closed: { connectPorts: [1] },
} satisfies Record<string, TinyproxyOptions>;
export type SharedTinyproxyKind = keyof typeof SHARED_KINDS;

const BINARY = process.env['TINYPROXY_BIN'] ?? '/usr/bin/tinyproxy';
const PORT_ATTEMPTS = 5;
const READY_POLLS = 1000;
const READY_POLL_MS = 10;
const READY_LINE = 'Accepting connections';

/** Why the tinyproxy tests cannot run here, or false when they can. */
export function tinyproxyMissing(): string | false {
  try {
    accessSync(BINARY, fsConstants.X_OK);
    return false;
  } catch {
    return `tinyproxy not found at ${BINARY}: install the Debian package tinyproxy (.ci/install-system-packages does) or set TINYPROXY_BIN`;
  }
}

const shared = new Map<SharedTinyproxyKind, Promise<TinyproxyHandle>>();

/** This process's proxy of that kind, started on the first call; it ends with the process (stop() is a no-op). */
export async function sharedTinyproxy(kind: SharedTinyproxyKind): Promise<TinyproxyHandle> {
  let started = shared.get(kind);
  if (started === undefined) {
    started = start(SHARED_KINDS[kind], false);
    shared.set(kind, started);
  }
  const proxy = await started;
  return { ...proxy, stop: () => Promise.resolve() };
}

export function startTinyproxy(options: TinyproxyOptions): Promise<TinyproxyHandle> {
  return start(options, true);
}

/** With `holdsProcess` false the proxy does not keep this process running: a shared one ends with the process instead. */
async function start(options: TinyproxyOptions, holdsProcess: boolean): Promise<TinyproxyHandle> {
  const dir = tempDir('tinyproxy');
  const logFile = join(dir, 'tinyproxy.log');
  let lastError = '';
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
    const port = await freePort();
    const configFile = join(dir, `tinyproxy-${attempt}.conf`);
    writeFileSync(configFile, config(port, logFile, options));
    const started = await launch(configFile, logFile, holdsProcess);
    if (typeof started === 'string') {
      lastError = started;
      continue;
    }
    const child = started;
    return {
      port,
      url: `http://127.0.0.1:${port}`,
      log: () => readLog(logFile),
      async stop() {
        await terminate(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`tinyproxy did not start in ${PORT_ATTEMPTS} attempts. Last output:\n${lastError}`);
}

function config(port: number, logFile: string, options: TinyproxyOptions): string {
  const lines = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    `LogFile "${logFile}"`,
    'LogLevel Info',
    'MaxClients 20',
    'Allow 127.0.0.1',
    'DisableViaHeader Yes',
    ...(options.connectPorts ?? []).map((p) => `ConnectPort ${p}`),
  ];
  if (options.basicAuth !== undefined) {
    const { user, password } = options.basicAuth;
    // tinyproxy's config grammar takes each as a plain word (no @, :, blanks or quotes).
    if (!/^[A-Za-z0-9_-]+$/.test(user) || !/^[A-Za-z0-9_-]+$/.test(password)) throw new Error('tinyproxy BasicAuth: use letters, digits, "_" and "-" only');
    lines.push(`BasicAuth ${user} ${password}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The running child once its log says it accepts connections, or the reason it did not start. */
async function launch(configFile: string, logFile: string, holdsProcess: boolean): Promise<ChildProcess | string> {
  const offset = readLog(logFile).length;
  const child = spawn(BINARY, ['-d', '-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  killWithThisProcess(child);
  if (!holdsProcess) unrefChild(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  // Polled: tinyproxy says it is ready only in its log file. The bound guards against a hang.
  for (let poll = 0; poll < READY_POLLS && !exited; poll += 1) {
    if (readLog(logFile).slice(offset).includes(READY_LINE)) return child;
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  if (!exited) await terminate(child);
  return `${output}\n${readLog(logFile).slice(offset)}`.slice(-4000);
}

function readLog(logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8');
  } catch {
    return '';
  }
}
