// The access log's line: one per request (and per answer to bytes that never
// became a request), every field always present, null when not known, so a
// log shipper sees one shape. The HTTP shell writes it when a response
// closes; a handler's own facts reach it through the request's context.
import type { LogFields, Logger } from './logger.ts';

/**
 * One access-log line: every field always present (null when not known), so a
 * log shipper sees one shape. Handlers add to it through `ctx.log`.
 */
export interface AccessLine extends LogFields {
  requestId: string;
  /** null (with path and totalMs) for an answer to bytes that never became a request: node's parser refused them (400, 408, 431). */
  method: string | null;
  path: string | null;
  /** The client's address (ctx.clientAddress); for bytes that never became a request, the connection's peer. */
  client: string | null;
  /** null when the client left before any answer was written. */
  status: number | null;
  keyId: string | null;
  alias: string | null;
  /** The upstream target that answered, `provider/model`. */
  target: string | null;
  /** Why the alias was chosen (service-auto rules); the alias name when asked for directly. */
  route: string | null;
  stream: boolean | null;
  /** As the upstream reported them. */
  promptTokens: number | null;
  completionTokens: number | null;
  /** What the request was charged, on what basis (usage, reservation, prompt, partial, none), and its cost in nanos and in currency units. */
  charge: string | null;
  chargedTokens: number | null;
  costNanos: number | null;
  cost: number | null;
  /** Time to the status line and headers (the first bytes of the answer). */
  ttfbMs: number | null;
  totalMs: number | null;
  /** The whole answer was handed to the socket. */
  completed: boolean;
  /** The error code of a failed request. */
  error: string | null;
}

/** The access-log `outcome` of a response ended because its client stopped reading. */
export const CLIENT_WRITE_STALLED = 'client_write_stalled';

/** The fields of an access-log line the caller knows; the rest are null. */
export type AccessFields = Partial<AccessLine> & Pick<AccessLine, 'requestId' | 'status' | 'completed'>;

/** Writes access-log lines: every field present, null where not known; `onLine` sees each (metrics). */
export function accessLogWriter(logger: Logger, onLine: ((line: AccessLine) => void) | undefined): (fields: AccessFields) => void {
  return (fields) => {
    const line: AccessLine = {
      method: null,
      path: null,
      client: null,
      keyId: null,
      alias: null,
      target: null,
      route: null,
      stream: null,
      promptTokens: null,
      completionTokens: null,
      charge: null,
      chargedTokens: null,
      costNanos: null,
      cost: null,
      ttfbMs: null,
      totalMs: null,
      error: null,
      ...fields,
    };
    logger.info('request', line);
    onLine?.(line);
  };
}

