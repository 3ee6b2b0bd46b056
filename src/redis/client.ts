// A Redis client over one pipelined connection (RESP2): TCP with node:net, or
// TLS with node:tls for rediss:// (see ./connection.ts).
//
//   connecting --(TCP/TLS up, AUTH/SELECT answered, or PING over TLS)--> ready
//   connecting | ready --(socket lost, handshake refused, timeout, protocol error)--> reconnecting
//   reconnecting --(backoff, TCP up, handshake answered)--> ready
//   any --(close())--> closed
//
// Policy, chosen for a gateway that must answer its own clients quickly:
// - While not ready, command() fails fast with RedisUnavailableError instead
//   of queueing: the caller (the state backend) decides between refusing and
//   falling back to local limits, and nothing grows while Redis is away. The
//   one exception is the first connect: commands issued before it are held
//   (at most maxQueued, at most connectTimeoutMs) so a gateway starting next
//   to Redis does not refuse its first requests.
// - A command in flight when the connection dies is rejected with reason
//   'connection_lost', never retried: it may have run (an INCR counted twice
//   is worse than one refused request).
// - Replies pair with commands by order. A reply missing for commandTimeoutMs,
//   or bytes that are not RESP, make that pairing untrustworthy, so the
//   connection is dropped and rebuilt.
// - command() is for request/reply commands only: SUBSCRIBE, MONITOR and
//   blocking pops (BLPOP) would break the pairing or trip the timeout. The
//   connection is shared by every caller, so MULTI/EXEC from concurrent
//   callers interleave: make multi-key updates atomic with a Lua script.
// - Over TLS the connection is ready only once the server has answered (AUTH,
//   SELECT, or else a PING): in TLS 1.3 the server checks a client certificate
//   after the client's handshake is done, so "handshake done" alone would make a
//   refused client look connected and reconnect at once, in a loop.
// - A TLS failure (an untrusted certificate, a name mismatch, a client
//   certificate refused) is logged once per outage, as an error with its code
//   and the setting that fixes it; reconnect attempts go on with the backoff.

import type { Logger } from '../log/logger.ts';
import { systemScheduler, type Scheduler, type Timer } from '../time/scheduler.ts';
import { endSocket, handshakeCommands, newConnection, openSocket, rejectInflight, takeOldest, waitingCount, write, type Connection, type PendingCommand, type RedisTlsOptions } from './connection.ts';
import { RedisProtocolError, RedisReplyError, RedisUnavailableError, type RedisUnavailableReason } from './errors.ts';
import { checkReconnectPolicy, DEFAULT_RECONNECT_POLICY, reconnectDelayMs, type ReconnectPolicy } from './reconnect-backoff.ts';
import { createRespDecoder, encodeCommand, encodeCommands, type RedisArg, type RedisReply, type RespDecoderOptions } from './resp.ts';
import type { RedisScript } from './script.ts';
import { tlsFailureOf, type RedisSettingNames } from './tls-failure.ts';

export type { RedisTlsOptions } from './connection.ts';

/** Replies saying the server is not (or not yet) a writable primary: the connection is dropped and rebuilt. */
const ROLE_CHANGE_REPLIES: ReadonlySet<string> = new Set(['READONLY', 'LOADING', 'MASTERDOWN']);

export const ClientState = {
  Connecting: 'connecting',
  Ready: 'ready',
  Reconnecting: 'reconnecting',
  Closed: 'closed',
} as const;
export type ClientState = (typeof ClientState)[keyof typeof ClientState];

export interface RedisClientOptions {
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** Database index sent with SELECT on every connect when not 0. */
  db?: number;
  /** TLS (rediss://): true for Node's defaults, or the CA, client certificate, server name and minimum version.
   * Default false: plain TCP. */
  tls?: boolean | RedisTlsOptions;
  /** Names of the URL and TLS settings in TLS failure messages. Default { url: 'url', tls: 'tls' }. */
  settingNames?: RedisSettingNames;
  /** TCP connect, the TLS handshake and AUTH/SELECT must finish within this. Default 2000. */
  connectTimeoutMs?: number;
  /** A reply must arrive within this after the command is written. Default 2000. */
  commandTimeoutMs?: number;
  /** Most commands awaiting a reply (in flight, or held during the first connect). Default 10000. */
  maxQueued?: number;
  /** Backoff between reconnect attempts. Default { baseDelayMs: 50, maxDelayMs: 2000 }. */
  reconnect?: Partial<ReconnectPolicy>;
  /** Called on every state change, after `state` has changed. */
  onStateChange?: (state: ClientState, previous: ClientState) => void;
  logger?: Logger;
  /** Limits on replies; see RespDecoderOptions. */
  replyLimits?: RespDecoderOptions;
  /** The connect, reply and reconnect timers and the clock their deadlines are read on. Default the system's. */
  scheduler?: Scheduler;
  /** The reconnect backoff's jitter, a number in [0, 1). Default Math.random. */
  random?: () => number;
}

export interface RedisClient {
  readonly state: ClientState;
  /** Sends one command, pipelined behind any others. Resolves with the reply;
   * rejects with RedisReplyError for an error reply, RedisUnavailableError
   * when Redis cannot answer, TypeError for an unencodable argument. */
  command(args: readonly RedisArg[]): Promise<RedisReply>;
  /** EVALSHA, and EVAL when the server answers NOSCRIPT (a NOSCRIPT reply
   * means the script did not run, so sending it again is safe). The EVAL
   * leaves only after the NOSCRIPT reply, so in that case commands issued
   * after evalScript without awaiting it may run before the script. */
  evalScript(script: RedisScript, keys: readonly string[], args: readonly (string | number)[]): Promise<RedisReply>;
  /** Ends the connection, rejects everything pending with reason 'closed' and
   * stops reconnecting. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 2000;
const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
const DEFAULT_MAX_QUEUED = 10_000;

interface HeldCommand {
  bytes: Buffer;
  resolve(reply: RedisReply): void;
  reject(error: unknown): void;
}

export function createRedisClient(options: RedisClientOptions): RedisClient {
  const { host, port } = options;
  if (typeof host !== 'string' || host === '') throw new TypeError('Redis host must be a non-empty string');
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError('Redis port must be 1-65535');
  const db = options.db ?? 0;
  if (!Number.isSafeInteger(db) || db < 0) throw new RangeError('Redis db must be a non-negative integer');
  if (options.username !== undefined && options.password === undefined) throw new TypeError('Redis username needs a password');
  const connectTimeoutMs = positive(options.connectTimeoutMs, DEFAULT_REDIS_CONNECT_TIMEOUT_MS, 'connectTimeoutMs');
  const commandTimeoutMs = positive(options.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS, 'commandTimeoutMs');
  const maxQueued = positive(options.maxQueued, DEFAULT_MAX_QUEUED, 'maxQueued');
  const policy = checkReconnectPolicy({ ...DEFAULT_RECONNECT_POLICY, ...options.reconnect });
  const scheduler = options.scheduler ?? systemScheduler;
  const random = options.random ?? Math.random;
  const logger = options.logger;
  const tls = options.tls === true ? {} : options.tls === false ? undefined : options.tls;
  const settingNames = options.settingNames ?? { url: 'url', tls: 'tls' };
  const where = `${host}:${port}`;

  const handshake = handshakeCommands(options.username, options.password, db, tls !== undefined);
  const handshakeBytes = handshake.length === 0 ? undefined : encodeCommands(handshake);

  let state: ClientState = ClientState.Connecting;
  let connection: Connection | undefined = undefined;
  /** Consecutive failed connect attempts, for the backoff. */
  let attempt = 0;
  let reconnectTimer: Timer | undefined = undefined;
  /** Why the last connection failed or ended, for fail-fast messages. */
  let lastFailure: unknown = undefined;
  let unavailableSince = 0;
  /** Commands issued during the first connect only. */
  let held: HeldCommand[] = [];
  let closing: Promise<void> | undefined = undefined;
  /** A TLS failure was logged in this outage; the next ones go to debug. */
  let tlsFailureLogged = false;

  function setState(next: ClientState): void {
    if (next === state) return;
    const previous = state;
    state = next;
    try {
      options.onStateChange?.(next, previous);
    } catch (error) {
      logger?.error('redis onStateChange callback threw', { error: describe(error) });
    }
  }

  function connect(): void {
    const socket = openSocket(host, port, tls, () => onConnect(conn));
    const conn = newConnection(socket, createRespDecoder({ onReply: (reply) => onReply(conn, reply) }, options.replyLimits), handshake.length);
    connection = conn;
    conn.connectTimer = scheduler.setTimeout(() => {
      // A plain Redis port takes a TLS hello as the start of an inline command and waits: say so.
      const message = tls !== undefined && !conn.connected
        ? `TLS handshake not finished within connectTimeoutMs (${connectTimeoutMs} ms): is port ${port} the server's tls-port?`
        : `no ready connection within connectTimeoutMs (${connectTimeoutMs} ms)`;
      drop(conn, new Error(message));
    }, connectTimeoutMs);
    socket.on('data', (chunk: Buffer) => onData(conn, chunk));
    socket.on('error', (error) => {
      conn.socketError = error;
    });
    socket.on('close', () => drop(conn, conn.socketError ?? new Error('connection closed by the server')));
  }

  /** AUTH and SELECT (or a PING over TLS) go first, before any caller's command. */
  function onConnect(conn: Connection): void {
    if (!conn.open) return;
    conn.connected = true;
    if (handshakeBytes === undefined) {
      becomeReady(conn);
      return;
    }
    for (const args of handshake) {
      const settle = (reply: RedisReply | Error): void => {
        if (reply instanceof RedisReplyError) {
          drop(conn, new Error(`Redis refused ${String(args[0])}: ${reply.message}`, { cause: reply }));
          return;
        }
        conn.handshakeLeft -= 1;
        if (conn.handshakeLeft === 0) becomeReady(conn);
      };
      enqueue(conn, { resolve: settle, reject: settle, deadline: scheduler.monotonic() + commandTimeoutMs, handshake: true });
    }
    write(conn, handshakeBytes);
  }

  function becomeReady(conn: Connection): void {
    if (!conn.open) return;
    scheduler.clearTimer(conn.connectTimer);
    conn.connectTimer = undefined;
    conn.ready = true;
    const wasDownMs = state === ClientState.Reconnecting ? Math.round(scheduler.monotonic() - unavailableSince) : 0;
    const attempts = attempt;
    attempt = 0;
    lastFailure = undefined;
    tlsFailureLogged = false;
    setState(ClientState.Ready);
    if (wasDownMs > 0) logger?.info('redis reconnected', { redis: where, down_ms: wasDownMs, attempts });
    else logger?.info('redis connected', { redis: where });
    const waiting = held;
    held = [];
    for (const command of waiting) send(conn, command.bytes, command.resolve, command.reject);
  }

  function onData(conn: Connection, chunk: Buffer): void {
    if (!conn.open) return;
    try {
      conn.decoder.feed(chunk);
    } catch (error) {
      logger?.error('redis protocol error; dropping the connection', {
        redis: where,
        code: error instanceof RedisProtocolError ? error.code : null,
        error: describe(error),
      });
      drop(conn, error);
    }
  }

  function onReply(conn: Connection, reply: RedisReply): void {
    if (!conn.open) return;
    const pending = takeOldest(conn);
    if (pending === undefined) {
      throw new RedisProtocolError('redis_protocol_error', 'A reply arrived with no command waiting for it', conn.socket.bytesRead);
    }
    if (reply instanceof RedisReplyError && !pending.handshake) {
      pending.reject(reply);
      // This server cannot serve writes any more (a failover made it a replica, it is
      // loading, or its primary is gone): reconnect, so a VIP or DNS name that moved to
      // the new primary is followed instead of keeping a working socket to the old one.
      if (ROLE_CHANGE_REPLIES.has(reply.code)) drop(conn, reply);
      return;
    }
    pending.resolve(reply);
  }

  function enqueue(conn: Connection, pending: PendingCommand): void {
    conn.inflight.push(pending);
    if (conn.replyTimer === undefined) {
      conn.replyTimer = scheduler.setTimeout(() => checkReplyDeadline(conn), commandTimeoutMs);
    }
  }

  /**
   * One timer per connection, not per command: replies come in order, so only
   * the oldest command's deadline matters. When it fires early for a newer
   * head, it is re-armed for the remainder, at most once per timeout period.
   */
  function checkReplyDeadline(conn: Connection): void {
    conn.replyTimer = undefined;
    if (!conn.open) return;
    const oldest = conn.inflight[conn.head];
    if (oldest === undefined) return;
    const left = oldest.deadline - scheduler.monotonic();
    if (left > 0) {
      conn.replyTimer = scheduler.setTimeout(() => checkReplyDeadline(conn), Math.ceil(left));
      return;
    }
    const timedOut = new Error(`no reply within commandTimeoutMs (${commandTimeoutMs} ms)`);
    if (!oldest.handshake) {
      takeOldest(conn);
      oldest.reject(
        new RedisUnavailableError(
          'command_timeout',
          `Redis at ${where} sent no reply within ${commandTimeoutMs} ms; the connection is dropped and the command may have run.`,
          timedOut,
        ),
      );
    }
    logger?.warn('redis command timed out; dropping the connection', { redis: where, timeout_ms: commandTimeoutMs });
    drop(conn, timedOut);
  }

  function send(conn: Connection, bytes: Buffer, resolve: (reply: RedisReply) => void, reject: (error: unknown) => void): void {
    enqueue(conn, { resolve, reject, deadline: scheduler.monotonic() + commandTimeoutMs, handshake: false });
    write(conn, bytes);
  }

  /** Tears a connection down once; everything it carried is rejected. */
  function drop(conn: Connection, error: unknown): void {
    if (!conn.open) return;
    conn.open = false;
    scheduler.clearTimer(conn.connectTimer);
    scheduler.clearTimer(conn.replyTimer);
    conn.socket.destroy();
    if (connection === conn) connection = undefined;
    const cause = tls === undefined ? error : explainTls(error);
    lastFailure = cause;
    const lost = new RedisUnavailableError(
      'connection_lost',
      `The connection to Redis at ${where} was lost before the reply (${describe(cause)}); the command may have run.`,
      cause,
    );
    rejectInflight(conn, lost);
    if (!conn.ready) rejectHeld('not_connected');
    if (state === ClientState.Closed) return;

    if (conn.ready || state === ClientState.Connecting) {
      unavailableSince = scheduler.monotonic();
      logger?.warn(conn.ready ? 'redis connection lost' : 'redis connect failed', { redis: where, error: describe(cause) });
    } else {
      logger?.debug('redis reconnect attempt failed', { redis: where, attempt, error: describe(cause) });
    }
    setState(ClientState.Reconnecting);
    const delay = reconnectDelayMs(attempt, policy, random);
    attempt += 1;
    reconnectTimer = scheduler.setTimeout(() => {
      reconnectTimer = undefined;
      if (state !== ClientState.Closed) connect();
    }, delay);
  }

  /** A TLS failure becomes an error naming its code and the setting that fixes it,
   * logged once per outage: a gateway retrying every 2 s must not log every try. */
  function explainTls(error: unknown): unknown {
    const failure = tlsFailureOf(error, settingNames);
    if (failure === undefined) return error;
    if (!tlsFailureLogged) {
      tlsFailureLogged = true;
      logger?.error('redis TLS connection refused', { redis: where, code: failure.code, error: failure.reason, setting: failure.setting, fix: failure.fix });
    }
    return new Error(`TLS ${failure.code} (${failure.reason}): ${failure.fix}`, { cause: error });
  }

  function rejectHeld(reason: RedisUnavailableReason): void {
    const waiting = held;
    held = [];
    for (const command of waiting) command.reject(unavailable(reason));
  }

  function unavailable(reason: RedisUnavailableReason): RedisUnavailableError {
    switch (reason) {
      case 'closed':
        return new RedisUnavailableError(reason, 'The Redis client is closed.');
      case 'queue_full':
        return new RedisUnavailableError(reason, `More than ${maxQueued} Redis commands are waiting for a reply.`);
      default: {
        const why = lastFailure === undefined ? '' : `; last error: ${describe(lastFailure)}`;
        return new RedisUnavailableError(reason, `Redis at ${where} is not connected (${state}${why}).`, lastFailure);
      }
    }
  }

  function command(args: readonly RedisArg[]): Promise<RedisReply> {
    let bytes: Buffer;
    try {
      bytes = encodeCommand(args);
    } catch (error) {
      return Promise.reject(error);
    }
    const conn = connection;
    if (conn !== undefined && conn.ready) {
      if (waitingCount(conn) >= maxQueued) return Promise.reject(unavailable('queue_full'));
      return new Promise((resolve, reject) => send(conn, bytes, resolve, reject));
    }
    if (state === ClientState.Connecting) {
      if (held.length >= maxQueued) return Promise.reject(unavailable('queue_full'));
      return new Promise((resolve, reject) => held.push({ bytes, resolve, reject }));
    }
    return Promise.reject(unavailable(state === ClientState.Closed ? 'closed' : 'not_connected'));
  }

  function evalScript(script: RedisScript, keys: readonly string[], args: readonly (string | number)[]): Promise<RedisReply> {
    const tail: RedisArg[] = [keys.length, ...keys, ...args];
    return command(['EVALSHA', script.sha1, ...tail]).catch((error: unknown) => {
      if (error instanceof RedisReplyError && error.code === 'NOSCRIPT') return command(['EVAL', script.source, ...tail]);
      throw error;
    });
  }

  function close(): Promise<void> {
    if (closing !== undefined) return closing;
    setState(ClientState.Closed);
    scheduler.clearTimer(reconnectTimer);
    reconnectTimer = undefined;
    rejectHeld('closed');
    const conn = connection;
    connection = undefined;
    if (conn === undefined || !conn.open) {
      closing = Promise.resolve();
      return closing;
    }
    conn.open = false;
    scheduler.clearTimer(conn.connectTimer);
    scheduler.clearTimer(conn.replyTimer);
    rejectInflight(conn, unavailable('closed'));
    closing = endSocket(conn.socket, scheduler);
    logger?.info('redis client closed', { redis: where });
    return closing;
  }

  connect();

  return {
    get state() {
      return state;
    },
    command,
    evalScript,
    close,
  };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
