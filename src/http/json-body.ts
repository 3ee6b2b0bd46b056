// Reads a JSON request body chunk by chunk into the streaming parser, so a
// request is rejected as soon as its bytes allow: a Content-Length over the
// limit before any byte is read, and a bad field (via the parser's observer)
// without reading the rest of the body.
import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors/api-error.ts';
import { createJsonParser, JsonParseError, renderJsonPath, type JsonLimits, type JsonObserver } from '../json/parser.ts';

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

/**
 * Reads and parses the body. `signal` is the request's lifetime: when it
 * aborts (the client left, a shutdown's deadline) the read fails with its
 * reason and stops.
 */
function readJsonBody(req: IncomingMessage, options: JsonBodyOptions, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > options.maxBytes) {
    return Promise.reject(new PayloadTooLargeError(options.maxBytes));
  }
  const parser = createJsonParser({
    limits: { ...options.limits, maxBytes: options.maxBytes },
    rejectDuplicateKeys: true,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  });

  return new Promise((resolve, reject) => {
    let received = 0;
    let settled = false;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      cleanup();
      // Stop reading: the rest of the body is never looked at.
      req.pause();
      reject(toRequestError(err, options.maxBytes));
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > options.maxBytes) return fail(new PayloadTooLargeError(options.maxBytes));
      try {
        parser.feed(chunk);
      } catch (err) {
        fail(err);
      }
    };
    const onEnd = (): void => {
      if (settled) return;
      let value: unknown;
      try {
        value = parser.end();
      } catch (err) {
        return fail(err);
      }
      settled = true;
      cleanup();
      resolve(value);
    };
    const onAbort = (): void => fail(signal.reason);
    req.on('data', onData);
    req.on('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
  });
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
export async function readRequestJson(ctx: { req: IncomingMessage; bodyAbandoned: boolean; signal: AbortSignal }, options: JsonBodyOptions): Promise<unknown> {
  checkJsonContentType(ctx.req.headers['content-type']);
  try {
    return await readJsonBody(ctx.req, options, ctx.signal);
  } catch (err) {
    ctx.bodyAbandoned = true;
    throw err;
  }
}
