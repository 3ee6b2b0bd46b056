// One connection of the Redis client: the socket (node:net for redis://,
// node:tls for rediss://) and the commands waiting on it in order. The
// client (./client.ts) owns the state machine and the timers; this file owns
// how a socket is opened and how the in-flight queue is kept.

import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls, type SecureVersion } from 'node:tls';
import type { Scheduler, Timer } from '../time/scheduler.ts';
import type { RedisArg, RedisReply, RespDecoder } from './resp.ts';

/** TLS for a rediss:// connection. Every field is optional: {} means Node's
 * built-in CA roots, no client certificate, the host as server name. */
export interface RedisTlsOptions {
  /** Trust exactly these CA certificates (PEM) instead of Node's roots. */
  ca?: Buffer | undefined;
  /** Client certificate chain and key (PEM), for a server with tls-auth-clients. */
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  /** Checked against the server's certificate and sent as SNI. Default: the host, when it is a DNS name. */
  servername?: string | undefined;
  minVersion?: SecureVersion | undefined;
}

/** TCP keepalive probes notice a peer gone silently (a VM paused, a NAT entry
 * dropped) on an idle connection. */
const KEEPALIVE_INITIAL_DELAY_MS = 15_000;
/** Compact the in-flight array once this many answered slots sit in front. */
const QUEUE_COMPACT_AT = 1024;
/** endSocket() waits this long for the FIN exchange before destroying the socket. */
const CLOSE_GRACE_MS = 1000;

/**
 * The name checked against the server's certificate. An IP address is never
 * sent as SNI (RFC 6066 section 3: "Literal IPv4 and IPv6 addresses are not
 * permitted in HostName"); without a name node:tls checks the certificate's
 * IP entries against the host instead.
 */
export function tlsServerName(host: string, tls: RedisTlsOptions): string | undefined {
  if (tls.servername !== undefined) return tls.servername;
  return isIP(host) === 0 ? host : undefined;
}

/** Opens a socket to host:port; `onOpen` runs once TCP is up (plain) or the TLS handshake is done (tls). */
export function openSocket(host: string, port: number, tls: RedisTlsOptions | undefined, onOpen: () => void): Socket {
  let socket: Socket;
  if (tls === undefined) {
    socket = connectTcp({ host, port });
    socket.once('connect', onOpen);
  } else {
    socket = connectTls({
      host,
      port,
      servername: tlsServerName(host, tls),
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      minVersion: tls.minVersion,
      rejectUnauthorized: true,
    });
    socket.once('secureConnect', onOpen);
  }
  socket.setNoDelay(true);
  socket.setKeepAlive(true, KEEPALIVE_INITIAL_DELAY_MS);
  return socket;
}

/**
 * What goes first on every connection, before any caller's command: AUTH, then
 * SELECT. Over TLS, a PING when neither is needed, so that readiness waits for
 * the server's first answer (see the header of ./client.ts).
 */
export function handshakeCommands(username: string | undefined, password: string | undefined, db: number, tls: boolean): RedisArg[][] {
  const commands: RedisArg[][] = [];
  if (password !== undefined) commands.push(username === undefined ? ['AUTH', password] : ['AUTH', username, password]);
  if (db !== 0) commands.push(['SELECT', db]);
  if (tls && commands.length === 0) commands.push(['PING']);
  return commands;
}

/** Ends the socket politely; destroys it if the peer does not close within CLOSE_GRACE_MS. */
export function endSocket(socket: Socket, scheduler: Scheduler): Promise<void> {
  return new Promise((resolve) => {
    const force = scheduler.setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
    socket.once('close', () => {
      scheduler.clearTimer(force);
      resolve();
    });
    socket.end();
  });
}

export interface PendingCommand {
  resolve(reply: RedisReply): void;
  reject(error: unknown): void;
  /** The client's scheduler.monotonic() after which the reply is late. */
  deadline: number;
  /** AUTH, SELECT or PING of the connect handshake, not a caller's command. */
  handshake: boolean;
}

export interface Connection {
  socket: Socket;
  decoder: RespDecoder;
  /** Commands written and not answered, oldest at `head`. */
  inflight: (PendingCommand | undefined)[];
  head: number;
  handshakeLeft: number;
  /** TCP up (plain) or the TLS handshake done. */
  connected: boolean;
  ready: boolean;
  /** False once torn down; every late event of this socket is then ignored. */
  open: boolean;
  /** Encoded commands of this event-loop turn, written as one buffer. */
  batch: Buffer[];
  flushScheduled: boolean;
  connectTimer: Timer | undefined;
  replyTimer: Timer | undefined;
  socketError: Error | undefined;
}

export function newConnection(socket: Socket, decoder: RespDecoder, handshakeLeft: number): Connection {
  return {
    socket,
    decoder,
    inflight: [],
    head: 0,
    handshakeLeft,
    connected: false,
    ready: false,
    open: true,
    batch: [],
    flushScheduled: false,
    connectTimer: undefined,
    replyTimer: undefined,
    socketError: undefined,
  };
}

/** The oldest command still waiting, taken off the queue; undefined when none waits. */
export function takeOldest(conn: Connection): PendingCommand | undefined {
  const pending = conn.inflight[conn.head];
  if (pending === undefined) return undefined;
  conn.inflight[conn.head] = undefined;
  conn.head += 1;
  if (conn.head === conn.inflight.length) {
    conn.inflight.length = 0;
    conn.head = 0;
  } else if (conn.head >= QUEUE_COMPACT_AT && conn.head * 2 >= conn.inflight.length) {
    conn.inflight = conn.inflight.slice(conn.head);
    conn.head = 0;
  }
  return pending;
}

export function waitingCount(conn: Connection): number {
  return conn.inflight.length - conn.head;
}

/** Empties the queue; every caller's command is rejected with `error`. */
export function rejectInflight(conn: Connection, error: unknown): void {
  const inflight = conn.inflight;
  const head = conn.head;
  conn.inflight = [];
  conn.head = 0;
  for (let i = head; i < inflight.length; i += 1) {
    const pending = inflight[i];
    if (pending !== undefined && !pending.handshake) pending.reject(error);
  }
}

/** Queues bytes for the socket; the commands of one event-loop turn leave together. */
export function write(conn: Connection, bytes: Buffer): void {
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
