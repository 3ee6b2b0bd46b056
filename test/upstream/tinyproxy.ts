// A real forward proxy for tests: Debian's tinyproxy, on 127.0.0.1, with a
// generated config file and its log in a temporary directory. tinyproxy
// cannot listen on port 0, so a free port is found by binding a server to
// port 0 and closing it, and the start is retried on another port when
// tinyproxy exits (another process took the port in between).
// .ci/install-system-packages installs it; the tests skip, saying so, only
// when the binary is missing.

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, terminate } from '../support/processes.ts';

export interface TinyproxyOptions {
  /** Ports CONNECT may reach (tinyproxy's ConnectPort); other ports get 403. */
  connectPorts: readonly number[];
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

const BINARY = process.env['TINYPROXY_BIN'] ?? '/usr/bin/tinyproxy';
const PORT_ATTEMPTS = 5;
const READY_POLLS = 200;
const READY_POLL_MS = 25;
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

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startTinyproxy(options: TinyproxyOptions): Promise<TinyproxyHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-tinyproxy-'));
  const logFile = join(dir, 'tinyproxy.log');
  let lastError = '';
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
    const port = await freePort();
    const configFile = join(dir, `tinyproxy-${attempt}.conf`);
    writeFileSync(configFile, config(port, logFile, options));
    const started = await launch(configFile, logFile);
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
    ...options.connectPorts.map((p) => `ConnectPort ${p}`),
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
async function launch(configFile: string, logFile: string): Promise<ChildProcess | string> {
  const offset = readLog(logFile).length;
  const child = spawn(BINARY, ['-d', '-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    running.delete(child);
  });
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


