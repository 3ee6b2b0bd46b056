// The response class of the shell's listeners: it records when its headers
// went out (the access log's time to first byte), and for a listener with
// headers of its own (the admin listener's security headers) sets them on
// every answer it makes, the ones node makes without a request event included.
import http from 'node:http';
import type { RequestContext } from './request-context.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

/**
 * A response that records when its status line and headers were written (every
 * path to the socket, implicit headers and flushHeaders() included, goes
 * through writeHead): the access log's time to first byte.
 */
export class TimedResponse extends http.ServerResponse {
  /** On the listener's monotonic clock (its scheduler's). */
  headersAt = -1;
  /** When the shell began handling its request, on the same clock. */
  openedAt = -1;
  /** The request the shell is handling on it, until the response closes. */
  context: RequestContext | null = null;
  /** The clock headersAt is read on; a listener with a scheduler of its own overrides it. */
  monotonic(): number {
    return performance.now();
  }
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    if (this.headersAt < 0) this.headersAt = this.monotonic();
    return (super.writeHead as (this: TimedResponse, code: number, ...more: unknown[]) => this).call(this, statusCode, ...rest);
  }
}

/** The response class of a listener whose every answer carries `headers`, timed on `scheduler`'s monotonic clock. */
export function responseClass(headers: ReadonlyArray<readonly [string, string]>, scheduler: Scheduler = systemScheduler): typeof TimedResponse {
  const timed =
    scheduler === systemScheduler
      ? TimedResponse
      : class ScheduledResponse extends TimedResponse {
          override monotonic(): number {
            return scheduler.monotonic();
          }
        };
  if (headers.length === 0) return timed;
  return class ListenerResponse extends timed {
    constructor(...args: ConstructorParameters<typeof TimedResponse>) {
      super(...args);
      for (const [name, value] of headers) this.setHeader(name, value);
    }
  };
}
