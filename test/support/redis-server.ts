// Real redis-servers for tests: 127.0.0.1 only, no persistence, a free port.
//
// sharedRedis(): one server per test process, started on first use and
// killed when the process ends, and for each caller (a test file, a
// describe) a database of its own on it, so the files a process runs share
// one server without seeing each other's keys. What is global to a server
// (scripts, ACL users, CONFIG) is shared; the files of one process run one
// after another, so none changes it under another.
//
// startRedisServer(): a server of one's own, for the tests that need what a
// shared one cannot give: a password, TLS, a server that stops, restarts on
// the same port (a client loses Redis mid-traffic and finds it again where it
// was) or is killed.
//
// Tests never skip when redis-server is missing: they fail with a message
// saying how to get it. With `tls` it serves TLS only (`--port 0
// --tls-port N`; Debian's redis-server is built with TLS).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, rmSync } from 'node:fs';
import { after, before } from 'node:test';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { killWithThisProcess, unrefChild } from './child-watchdog.ts';
import { within } from './eventually.ts';
import { freePort, terminate } from './processes.ts';
import { tempDir } from './temp-dir.ts';

export interface RedisServerOptions {
  /** Sets `--requirepass`. */
  requirepass?: string;
  /** Path of the binary. Default $REDIS_SERVER_BIN or /usr/bin/redis-server. */
  binary?: string;
  /** Serve TLS only, with these files. */
  tls?: RedisServerTls;
  /** `--databases`: how many the server has (Redis's default 16). */
  databases?: number;
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
}

export interface RedisServerHandle {
  port: number;
  /** redis://127.0.0.1:<port>, rediss:// with tls (with the password when requirepass is set). */
  url: string;
  /** SIGTERM and wait for exit. Safe to call when already stopped. */
  stop(): Promise<void>;
  /** Start again on the same port (stopping first if running), with other TLS files if given; resolves once it accepts connections. */
  restart(tls?: RedisServerTls): Promise<void>;
  /** SIGKILL and wait for exit: Redis vanishing without closing its sockets cleanly. */
  kill(): Promise<void>;
}

/** A database of the process's shared server, for one caller alone. */
export interface SharedRedis {
  port: number;
  db: number;
  /** redis://127.0.0.1:<port>/<db> */
  url: string;
}

const DEFAULT_BINARY = '/usr/bin/redis-server';
const PORT_ATTEMPTS = 5;
/** Only a guard against a server that neither starts nor exits. */
const READY_BOUND_MS = 20_000;
/** What redis-server logs once its listeners accept connections ("... tcp", "... tls" since 7.0). */
const READY_LINE = 'Ready to accept connections';
/** Databases of the shared server: one per caller, never reused in a process. */
const SHARED_DATABASES = 256;

export function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  return start(options, true);
}

/** With `holdsProcess` false the server does not keep this process running: the shared one ends with the process instead. */
async function start(startOptions: RedisServerOptions, holdsProcess: boolean): Promise<RedisServerHandle> {
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

  let running: Launched | undefined;
  let port = 0;
  let lastError: unknown;
  for (let i = 0; i < PORT_ATTEMPTS && running === undefined; i += 1) {
    const candidate = await freePort();
    try {
      running = await launch(binary, candidate, options, holdsProcess);
      port = candidate;
    } catch (error) {
      // Another process may have taken the port between our probe and Redis's bind.
      lastError = error;
    }
  }
  if (running === undefined) throw new Error(`redis-server did not start: ${String(lastError)}`);

  async function stopWith(signal: NodeJS.Signals): Promise<void> {
    const current = running;
    running = undefined;
    if (current === undefined) return;
    await terminate(current.child, signal);
    rmSync(current.dir, { recursive: true, force: true });
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
      running = await launch(binary, port, options, holdsProcess);
    },
  };
}

let sharedServer: Promise<RedisServerHandle> | undefined;
let nextDb = 1;

/**
 * A database of its own (numbered from 1, so a client that forgets to
 * SELECT finds nothing) on this process's shared server, started on the
 * first call; the server ends with the process.
 */
export async function sharedRedis(): Promise<SharedRedis> {
  sharedServer ??= start({ databases: SHARED_DATABASES }, false);
  const server = await sharedServer;
  if (nextDb >= SHARED_DATABASES) throw new Error(`the shared redis-server has ${SHARED_DATABASES} databases and all are taken in this process`);
  const db = nextDb++;
  return { port: server.port, db, url: `${server.url}/${db}` };
}

export interface RedisPair {
  redis: SharedRedis;
  clientA: RedisClient;
  clientB: RedisClient;
}

/**
 * Two clients on a database of the shared server, as two gateway instances
 * would use it: made before the file's tests, closed after them. Registers
 * the file's before() and after() hooks; `ready` is given the pair.
 */
export function useRedisPair(ready: (pair: RedisPair) => void): void {
  let pair: RedisPair | undefined;
  before(async () => {
    const redis = await sharedRedis();
    const connect = (): RedisClient => createRedisClient({ host: '127.0.0.1', port: redis.port, db: redis.db });
    pair = { redis, clientA: connect(), clientB: connect() };
    ready(pair);
  });
  after(async () => {
    await pair?.clientA.close();
    await pair?.clientB.close();
  });
}

interface Launched {
  child: ChildProcess;
  dir: string;
}

/** Starts redis-server on `port`; resolves when it logs that it accepts connections, rejects if it exits first. */
async function launch(binary: string, port: number, options: RedisServerOptions, holdsProcess: boolean): Promise<Launched> {
  const { requirepass, tls, databases } = options;
  // Removed at stop, or with the process when it never stops (the shared server).
  const dir = tempDir('redis');
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
    // The log goes to stdout, read here: the ready line, and the tail for a failure message.
    '--logfile', '',
  ];
  if (requirepass !== undefined) args.push('--requirepass', requirepass);
  if (databases !== undefined) args.push('--databases', String(databases));
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  killWithThisProcess(child);
  if (!holdsProcess) unrefChild(child);
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const keep = (chunk: Buffer): void => {
      // Only the tail matters for a failure message; bounded. Read always, or a full pipe would stall Redis's logging.
      output = (output + chunk.toString('utf8')).slice(-4000);
      if (output.includes(READY_LINE)) resolve();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', (code, signal) => reject(new Error(`redis-server on port ${port} exited (${code ?? signal}) before it was ready. Output:\n${output}`)));
  });
  try {
    await within(ready, `redis-server on port ${port} to accept connections`, READY_BOUND_MS);
  } catch (error) {
    await terminate(child, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { child, dir };
}
