// Reads a JSON request body chunk by chunk into the streaming parser, so a
// request is rejected as soon as its bytes allow: a Content-Length over the
// limit before any byte is read, and a bad field (via the parser's observer)
// without reading the rest of the body.
import type { AbortSource } from '../time/abort-source.ts';
import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors/api-error.ts';
import { createJsonParser, JsonParseError, renderJsonPath, type JsonLimits, type JsonObserver, type JsonParser } from '../json/parser.ts';

interface JsonBodyOptions {
  maxBytes: number;
  limits: Omit<JsonLimits, 'maxBytes'>;
  observer?: JsonObserver;
}

/**
 * `application/json`, optionally with `charset=utf-8`. Anything else is 415:
 * the body would not be read the way the client meant it.
 */
function checkJsonContentType(header: string | undefined): void {
  if (header === undefined) throw new UnsupportedMediaTypeError(undefined);
  const semi = header.indexOf(';');
  const mediaType = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  if (mediaType !== 'application/json') throw new UnsupportedMediaTypeError(header);
  if (semi === -1) return;
  for (const param of header.slice(semi + 1).split(';')) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    const value = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name === 'charset' && value !== 'utf-8' && value !== 'utf8') throw new UnsupportedMediaTypeError(header);
  }
}

/** The request's abandoned-body flag and lifetime, as the shell hands them over. */
interface BodyContext {
  req: IncomingMessage;
  bodyAbandoned: boolean;
  signal: AbortSource;
}

/** Where the request's listeners find the read in progress: they are shared
 * by every request, so the read cannot be in a closure. */
const BODY_READ: unique symbol = Symbol('jsonBodyRead');
interface ReadingRequest extends IncomingMessage {
  [BODY_READ]?: JsonBodyRead | undefined;
}

/** A promise's settling functions, handed out by captureSettlers: an executor
 * made once instead of one per promise (Promise.withResolvers is Node 22+). */
let capturedResolve: (value: unknown) => void = () => {};
let capturedReject: (error: unknown) => void = () => {};
function captureSettlers(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/**
 * One body being read: its state in fields, the request's 'data' and 'end'
 * listeners static, and itself the signal's abort listener (handleEvent), so
 * a read makes this object, the parser and the promise, and no functions of
 * its own.
 */
class JsonBodyRead {
  private readonly ctx: BodyContext;
  private readonly parser: JsonParser;
  private readonly maxBytes: number;
  private readonly resolve: (value: unknown) => void;
  private readonly reject: (error: unknown) => void;
  private received = 0;
  private settled = false;

  constructor(ctx: BodyContext, parser: JsonParser, maxBytes: number, resolve: (value: unknown) => void, reject: (error: unknown) => void) {
    this.ctx = ctx;
    this.parser = parser;
    this.maxBytes = maxBytes;
    this.resolve = resolve;
    this.reject = reject;
    const req = ctx.req as ReadingRequest;
    req[BODY_READ] = this;
    req.on('data', JsonBodyRead.onData);
    req.on('end', JsonBodyRead.onEnd);
    // Removed in cleanup(), which every way of settling goes through.
    ctx.signal.addEventListener('abort', this);
  }

  private static onData(this: ReadingRequest, chunk: Buffer): void {
    this[BODY_READ]?.data(chunk);
  }

  private static onEnd(this: ReadingRequest): void {
    this[BODY_READ]?.end();
  }

  /** The request's lifetime ended (the client left, a shutdown's deadline). */
  handleEvent(): void {
    this.fail(this.ctx.signal.reason);
  }

  private data(chunk: Buffer): void {
    this.received += chunk.length;
    if (this.received > this.maxBytes) return this.fail(new PayloadTooLargeError(this.maxBytes));
    try {
      this.parser.feed(chunk);
    } catch (err) {
      this.fail(err);
    }
  }

  private end(): void {
    if (this.settled) return;
    let value: unknown;
    try {
      value = this.parser.end();
    } catch (err) {
      return this.fail(err);
    }
    this.settled = true;
    this.cleanup();
    this.resolve(value);
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.cleanup();
    // Stop reading: the rest of the body is never looked at, and the shell
    // closes the connection after the answer so it is never parsed as a next request.
    this.ctx.req.pause();
    this.ctx.bodyAbandoned = true;
    this.reject(toRequestError(err, this.maxBytes));
  }

  private cleanup(): void {
    const req = this.ctx.req as ReadingRequest;
    req.off('data', JsonBodyRead.onData);
    req.off('end', JsonBodyRead.onEnd);
    req[BODY_READ] = undefined;
    this.ctx.signal.removeEventListener('abort', this);
  }
}

/**
 * Reads and parses the body. `ctx.signal` is the request's lifetime: when it
 * aborts (the client left, a shutdown's deadline) the read fails with its
 * reason and stops.
 */
function readJsonBody(ctx: BodyContext, options: JsonBodyOptions): Promise<unknown> {
  const signal = ctx.signal;
  if (signal.aborted) return abandon(ctx, signal.reason);
  const declared = ctx.req.headers['content-length'];
  if (declared !== undefined && Number(declared) > options.maxBytes) {
    return abandon(ctx, new PayloadTooLargeError(options.maxBytes));
  }
  const parser = createJsonParser({
    limits: { ...options.limits, maxBytes: options.maxBytes },
    rejectDuplicateKeys: true,
    observer: options.observer,
  });
  const promise = new Promise<unknown>(captureSettlers);
  // The read registers itself on the request and the signal; they hold it until it settles.
  new JsonBodyRead(ctx, parser, options.maxBytes, capturedResolve, capturedReject);
  return promise;
}

function abandon(ctx: BodyContext, error: unknown): Promise<never> {
  ctx.bodyAbandoned = true;
  return Promise.reject(error);
}

function toRequestError(err: unknown, maxBytes: number): unknown {
  if (!(err instanceof JsonParseError)) return err;
  if (err.code === 'limit_exceeded') {
    if (err.limit === 'maxBytes') return new PayloadTooLargeError(maxBytes);
    return new InvalidRequestError(`The request body crosses a size limit: ${err.message}`, null, 'json_limit_exceeded');
  }
  if (err.code === 'duplicate_key') {
    return new InvalidRequestError(`The request body repeats a key: ${err.message}`, null, 'duplicate_key');
  }
  if (err.code === 'number_out_of_range') {
    // Worded as the validator words a value out of its range, and named by its path
    // wherever it is (a tool's JSON schema included): JSON.parse would make it
    // Infinity, which JSON.stringify forwards as null.
    const param = err.path === undefined || err.path.length === 0 ? null : renderJsonPath(err.path);
    return new InvalidRequestError(
      `Invalid value for ${param === null ? 'the request body' : `'${param}'`}: the number is out of range. ` +
        'A JSON number must be at most 1.7976931348623157e308 in magnitude.',
      param,
      'invalid_value',
    );
  }
  return new InvalidRequestError(
    `We could not parse the JSON body of your request: ${err.message}`,
    null,
    'invalid_json',
  );
}

/**
 * A handler's JSON body: the content type checked, then the body read under
 * `options`. When reading stops early (a limit, a bad field, the client gone)
 * the request is marked so the shell closes the connection after the answer:
 * the unread rest must never be parsed as a next request.
 */
export function readRequestJson(ctx: BodyContext, options: JsonBodyOptions): Promise<unknown> {
  try {
    checkJsonContentType(ctx.req.headers['content-type']);
  } catch (err) {
    return Promise.reject(err);
  }
  return readJsonBody(ctx, options);
}
