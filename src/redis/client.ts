// A Redis client over one pipelined TCP connection (node:net, RESP2).
//
//   connecting --(TCP up, AUTH/SELECT answered)--> ready
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

import { connect as connectTcp, type Socket } from 'node:net';
import type { Logger } from '../log/logger.ts';
import { RedisProtocolError, RedisReplyError, RedisUnavailableError, type RedisUnavailableReason } from './errors.ts';
import { checkReconnectPolicy, DEFAULT_RECONNECT_POLICY, reconnectDelayMs, type ReconnectPolicy } from './reconnect-backoff.ts';
import { createRespDecoder, encodeCommand, encodeCommands, type RedisArg, type RedisReply, type RespDecoder, type RespDecoderOptions } from './resp.ts';
import type { RedisScript } from './script.ts';

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
  /** TCP connect plus AUTH/SELECT must finish within this. Default 2000. */
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

export const DEFAULT_CONNECT_TIMEOUT_MS = 2000;
const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
const DEFAULT_MAX_QUEUED = 10_000;
/** TCP keepalive probes notice a peer gone silently (a VM paused, a NAT entry
 * dropped) on an idle connection. */
const KEEPALIVE_INITIAL_DELAY_MS = 15_000;
/** close() waits this long for the FIN exchange before destroying the socket. */
const CLOSE_GRACE_MS = 1000;
/** Compact the in-flight array once this many answered slots sit in front. */
const QUEUE_COMPACT_AT = 1024;

interface PendingCommand {
  resolve(reply: RedisReply): void;
  reject(error: unknown): void;
  /** performance.now() after which the reply is late. */
  deadline: number;
  /** AUTH or SELECT of the connect handshake, not a caller's command. */
  handshake: boolean;
}

interface HeldCommand {
  bytes: Buffer;
  resolve(reply: RedisReply): void;
  reject(error: unknown): void;
}

interface Connection {
  socket: Socket;
  decoder: RespDecoder;
  /** Commands written and not answered, oldest at `head`. */
  inflight: (PendingCommand | undefined)[];
  head: number;
  handshakeLeft: number;
  ready: boolean;
  /** False once torn down; every late event of this socket is then ignored. */
  open: boolean;
  /** Encoded commands of this event-loop turn, written as one buffer. */
  batch: Buffer[];
  flushScheduled: boolean;
  connectTimer: NodeJS.Timeout | undefined;
  replyTimer: NodeJS.Timeout | undefined;
  socketError: Error | undefined;
}

export function createRedisClient(options: RedisClientOptions): RedisClient {
  const { host, port } = options;
  if (typeof host !== 'string' || host === '') throw new TypeError('Redis host must be a non-empty string');
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError('Redis port must be 1-65535');
  const db = options.db ?? 0;
  if (!Number.isSafeInteger(db) || db < 0) throw new RangeError('Redis db must be a non-negative integer');
  if (options.username !== undefined && options.password === undefined) throw new TypeError('Redis username needs a password');
  const connectTimeoutMs = positive(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs');
  const commandTimeoutMs = positive(options.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS, 'commandTimeoutMs');
  const maxQueued = positive(options.maxQueued, DEFAULT_MAX_QUEUED, 'maxQueued');
  const policy = checkReconnectPolicy({ ...DEFAULT_RECONNECT_POLICY, ...options.reconnect });
  const logger = options.logger;
  const where = `${host}:${port}`;

  const handshake: RedisArg[][] = [];
  if (options.password !== undefined) {
    handshake.push(options.username === undefined ? ['AUTH', options.password] : ['AUTH', options.username, options.password]);
  }
  if (db !== 0) handshake.push(['SELECT', db]);
  const handshakeBytes = handshake.length === 0 ? undefined : encodeCommands(handshake);

  let state: ClientState = ClientState.Connecting;
  let connection: Connection | undefined = undefined;
  /** Consecutive failed connect attempts, for the backoff. */
  let attempt = 0;
  let reconnectTimer: NodeJS.Timeout | undefined = undefined;
  /** Why the last connection failed or ended, for fail-fast messages. */
  let lastFailure: unknown = undefined;
  let unavailableSince = 0;
  /** Commands issued during the first connect only. */
  let held: HeldCommand[] = [];
  let closing: Promise<void> | undefined = undefined;

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
    const socket = connectTcp({ host, port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_INITIAL_DELAY_MS);
    const conn: Connection = {
      socket,
      decoder: createRespDecoder({ onReply: (reply) => onReply(conn, reply) }, options.replyLimits),
      inflight: [],
      head: 0,
      handshakeLeft: handshake.length,
      ready: false,
      open: true,
      batch: [],
      flushScheduled: false,
      connectTimer: undefined,
      replyTimer: undefined,
      socketError: undefined,
    };
    connection = conn;
    conn.connectTimer = setTimeout(() => {
      drop(conn, new Error(`no ready connection within connectTimeoutMs (${connectTimeoutMs} ms)`));
    }, connectTimeoutMs);
    socket.on('connect', () => onConnect(conn));
    socket.on('data', (chunk: Buffer) => onData(conn, chunk));
    socket.on('error', (error) => {
      conn.socketError = error;
    });
    socket.on('close', () => drop(conn, conn.socketError ?? new Error('connection closed by the server')));
  }

  /** AUTH and SELECT go first, before any caller's command. */
  function onConnect(conn: Connection): void {
    if (!conn.open) return;
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
      enqueue(conn, { resolve: settle, reject: settle, deadline: performance.now() + commandTimeoutMs, handshake: true });
    }
    write(conn, handshakeBytes);
  }

  function becomeReady(conn: Connection): void {
    if (!conn.open) return;
    clearTimeout(conn.connectTimer);
    conn.connectTimer = undefined;
    conn.ready = true;
    const wasDownMs = state === ClientState.Reconnecting ? Math.round(performance.now() - unavailableSince) : 0;
    const attempts = attempt;
    attempt = 0;
    lastFailure = undefined;
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
    const pending = conn.inflight[conn.head];
    if (pending === undefined) {
      throw new RedisProtocolError('redis_protocol_error', 'A reply arrived with no command waiting for it', conn.socket.bytesRead);
    }
    conn.inflight[conn.head] = undefined;
    conn.head += 1;
    if (conn.head === conn.inflight.length) {
      conn.inflight.length = 0;
      conn.head = 0;
    } else if (conn.head >= QUEUE_COMPACT_AT && conn.head * 2 >= conn.inflight.length) {
      conn.inflight = conn.inflight.slice(conn.head);
      conn.head = 0;
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
      conn.replyTimer = setTimeout(checkReplyDeadline, commandTimeoutMs, conn);
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
    const left = oldest.deadline - performance.now();
    if (left > 0) {
      conn.replyTimer = setTimeout(checkReplyDeadline, Math.ceil(left), conn);
      return;
    }
    const timedOut = new Error(`no reply within commandTimeoutMs (${commandTimeoutMs} ms)`);
    if (!oldest.handshake) {
      conn.inflight[conn.head] = undefined;
      conn.head += 1;
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
    enqueue(conn, { resolve, reject, deadline: performance.now() + commandTimeoutMs, handshake: false });
    write(conn, bytes);
  }

  function write(conn: Connection, bytes: Buffer): void {
    conn.batch.push(bytes);
    if (!conn.flushScheduled) {
      conn.flushScheduled = true;
      process.nextTick(flush, conn);
    }
  }

  /** Commands of one turn leave in one write: one syscall, one TCP segment
   * when they fit, instead of one per command. */
  function flush(conn: Connection): void {
    conn.flushScheduled = false;
    const batch = conn.batch;
    conn.batch = [];
    if (!conn.open || batch.length === 0) return;
    conn.socket.write(batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch));
  }

  /** Tears a connection down once; everything it carried is rejected. */
  function drop(conn: Connection, cause: unknown): void {
    if (!conn.open) return;
    conn.open = false;
    clearTimeout(conn.connectTimer);
    clearTimeout(conn.replyTimer);
    conn.socket.destroy();
    if (connection === conn) connection = undefined;
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
      unavailableSince = performance.now();
      logger?.warn(conn.ready ? 'redis connection lost' : 'redis connect failed', { redis: where, error: describe(cause) });
    } else {
      logger?.debug('redis reconnect attempt failed', { redis: where, attempt, error: describe(cause) });
    }
    setState(ClientState.Reconnecting);
    const delay = reconnectDelayMs(attempt, policy);
    attempt += 1;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (state !== ClientState.Closed) connect();
    }, delay);
  }

  function rejectInflight(conn: Connection, error: unknown): void {
    const inflight = conn.inflight;
    const head = conn.head;
    conn.inflight = [];
    conn.head = 0;
    for (let i = head; i < inflight.length; i += 1) {
      const pending = inflight[i];
      if (pending !== undefined && !pending.handshake) pending.reject(error);
    }
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
      if (conn.inflight.length - conn.head >= maxQueued) return Promise.reject(unavailable('queue_full'));
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
    clearTimeout(reconnectTimer);
    reconnectTimer = undefined;
    rejectHeld('closed');
    const conn = connection;
    connection = undefined;
    if (conn === undefined || !conn.open) {
      closing = Promise.resolve();
      return closing;
    }
    conn.open = false;
    clearTimeout(conn.connectTimer);
    clearTimeout(conn.replyTimer);
    rejectInflight(conn, unavailable('closed'));
    const socket = conn.socket;
    closing = new Promise((resolve) => {
      const force = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
      socket.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      socket.end();
    });
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
