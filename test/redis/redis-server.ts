// A real redis-server for tests: 127.0.0.1 only, no persistence, a free port,
// and stop/restart on the SAME port so a client can lose Redis mid-traffic and
// find it again where it was. Tests never skip when redis-server is missing:
// they fail with a message saying how to get it. With `tls` it serves TLS only
// (`--port 0 --tls-port N`; Debian's redis-server is built with TLS).

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, terminate } from '../support/processes.ts';

export interface RedisServerOptions {
  /** Sets `--requirepass`. */
  requirepass?: string;
  /** Path of the binary. Default $REDIS_SERVER_BIN or /usr/bin/redis-server. */
  binary?: string;
  /** Serve TLS only, with these files. */
  tls?: RedisServerTls;
}

export interface RedisServerTls {
  /** --tls-cert-file and --tls-key-file. */
  certFile: string;
  keyFile: string;
  /** --tls-ca-cert-file: the CA client certificates are checked against (required by redis-server even with authClients "no"). */
  caFile: string;
  /** --tls-auth-clients. */
  authClients: 'yes' | 'no' | 'optional';
  /** --tls-protocols, e.g. "TLSv1.2". Default Redis's ("TLSv1.2 TLSv1.3"). */
  protocols?: string;
  /** What the readiness PING presents with authClients "yes": a client certificate the server accepts. */
  probe?: { certFile: string; keyFile: string };
}

export interface RedisServerHandle {
  port: number;
  /** redis://127.0.0.1:<port>, rediss:// with tls (with the password when requirepass is set). */
  url: string;
  /** SIGTERM and wait for exit. Safe to call when already stopped. */
  stop(): Promise<void>;
  /** Start again on the same port (stopping first if running), with other TLS files if given; resolves once it answers PING. */
  restart(tls?: RedisServerTls): Promise<void>;
  /** SIGKILL and wait for exit: Redis vanishing without closing its sockets cleanly. */
  kill(): Promise<void>;
}

const DEFAULT_BINARY = '/usr/bin/redis-server';
const PORT_ATTEMPTS = 5;
const READY_POLLS = 100;
const READY_POLL_MS = 50;

/** Every server started here, killed if the test process exits without stopping it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRedisServer(startOptions: RedisServerOptions = {}): Promise<RedisServerHandle> {
  let options = startOptions;
  const binary = options.binary ?? process.env['REDIS_SERVER_BIN'] ?? DEFAULT_BINARY;
  try {
    accessSync(binary, fsConstants.X_OK);
  } catch {
    throw new Error(
      `redis-server not found at ${binary}. The Redis tests need a real server: run .ci/run, which installs ` +
        `the Debian package redis-server, or set REDIS_SERVER_BIN.`,
    );
  }

  let child: ChildProcess | undefined;
  let dir: string | undefined;
  let port = 0;
  let lastError: unknown;
  for (let i = 0; i < PORT_ATTEMPTS && child === undefined; i += 1) {
    const candidate = await freePort();
    try {
      ({ child, dir } = await launch(binary, candidate, options));
      port = candidate;
    } catch (error) {
      // Another process may have taken the port between our probe and Redis's bind.
      lastError = error;
    }
  }
  if (child === undefined) throw new Error(`redis-server did not start: ${String(lastError)}`);

  async function stopWith(signal: NodeJS.Signals): Promise<void> {
    const current = child;
    child = undefined;
    if (current !== undefined) await terminate(current, signal);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  }

  const auth = options.requirepass === undefined ? '' : `:${encodeURIComponent(options.requirepass)}@`;
  return {
    port,
    url: `${options.tls === undefined ? 'redis' : 'rediss'}://${auth}127.0.0.1:${port}`,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    async restart(tls) {
      await stopWith('SIGTERM');
      if (tls !== undefined) options = { ...options, tls };
      ({ child, dir } = await launch(binary, port, options));
    },
  };
}

async function launch(binary: string, port: number, options: RedisServerOptions): Promise<{ child: ChildProcess; dir: string }> {
  const { requirepass, tls } = options;
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-redis-'));
  const listen = tls === undefined
    ? ['--port', String(port)]
    : ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile,
        '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', tls.authClients, ...(tls.protocols === undefined ? [] : ['--tls-protocols', tls.protocols])];
  const args = [
    ...listen,
    '--bind', '127.0.0.1',
    '--protected-mode', 'yes',
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
    '--logfile', '',
  ];
  if (requirepass !== undefined) args.push('--requirepass', requirepass);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    // Only the tail matters for a failure message; bounded.
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    running.delete(child);
  });
  for (let poll = 0; poll < READY_POLLS; poll += 1) {
    if (exited) break;
    if (await answersPing(port, tls)) return { child, dir };
    await sleep(READY_POLL_MS);
  }
  if (!exited) await terminate(child, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`redis-server on port ${port} did not become ready. Output:\n${output}`);
}

/** True when something on the port answers a RESP PING (PONG, or NOAUTH when a password is set). */
function answersPing(port: number, tls: RedisServerTls | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    let socket: Socket;
    if (tls === undefined) {
      socket = createConnection({ host: '127.0.0.1', port });
    } else {
      const probe = tls.probe === undefined ? {} : { cert: readFileSync(tls.probe.certFile), key: readFileSync(tls.probe.keyFile) };
      // Readiness only: the certificate checks are what the tests themselves are about.
      socket = connectTls({ host: '127.0.0.1', port, rejectUnauthorized: false, ...probe });
    }
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on(tls === undefined ? 'connect' : 'secureConnect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
    });
  });
}



function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
