// A fake upstream on loopback, port 0, for a host's own tests and the provider
// adapter table: it reads each request's body whole, records what arrived,
// hands the request to the test's handler and tells, as events rather than
// polls, when a request arrived and when its response closed. http, or https
// with the given server options; 127.0.0.1 unless another host is asked for.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type https from 'node:https';
import { startTestUpstream } from './fake-upstream-server.ts';

/** What the upstream received, in arrival order; `n` counts from 1. */
export interface ReceivedRequest {
  n: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body, decoded as UTF-8. */
  text: string;
}

/** Answers one request; a throw (or a rejection) cuts the connection. */
export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, received: ReceivedRequest) => void | Promise<void>;

export interface FakeUpstreamOptions {
  /** Serve https with these server options (key, cert, ...). */
  tls?: https.ServerOptions;
  /** Default 127.0.0.1; '::1' for an IPv6 literal. */
  host?: string;
}

export interface FakeUpstream {
  /** e.g. http://127.0.0.1:40123/v1 */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request so far; a test may empty it (`received.length = 0`) between cases. */
  readonly received: ReceivedRequest[];
  /** Requests so far, whether or not `received` was emptied since. */
  readonly count: number;
  /** TCP connections accepted so far (for https: those that completed the handshake). */
  readonly connections: number;
  /** Replaceable between requests. */
  handle: UpstreamHandler;
  /** Resolves when request `n` (1-based, counted from the start) has arrived whole, before the handler runs. */
  arrived(n: number): Promise<ReceivedRequest>;
  /** arrived() of the request after those so far: ask before sending it. */
  nextArrival(): Promise<ReceivedRequest>;
  /** Resolves when the response of request `n` closes (finished or cut); default the latest request. */
  closed(n?: number): Promise<void>;
  /** Ends every open connection now and keeps listening: the next request needs a new one. */
  closeConnections(): void;
  close(): Promise<void>;
}

/** Starts a fake upstream answering with `handle`; close() it when done. */
export function startFakeUpstream(handle: UpstreamHandler, options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  return startTestUpstream(handle, options);
}

/** A JSON answer with its content-length; a string body is sent as it is (for bodies that are not JSON). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** The headers of an event stream, sent now; the events follow with res.write. */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
}
