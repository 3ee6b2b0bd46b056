// RESP2, the Redis serialization protocol: an encoder for commands and an
// incremental decoder for replies. Pure over bytes: no sockets, no timers.
// Spec: https://redis.io/docs/latest/develop/reference/protocol-spec/
//
// The client never sends HELLO 3, so only the five RESP2 types arrive; a RESP3
// type byte is a protocol error like any other unknown byte.

import { RedisProtocolError, RedisReplyError } from './errors.ts';

/** One argument of a command; every argument travels as a bulk string. */
export type RedisArg = string | number | Buffer;

/**
 * A decoded reply. Simple and bulk strings are UTF-8 strings; a null bulk
 * string and a null array are null; integers are numbers, or bigints outside
 * ±(2^53 - 1) so no digit is lost; an error is a RedisReplyError value.
 */
export type RedisReply = string | number | bigint | null | RedisReplyError | RedisReply[];

const CR = 0x0d;
const LF = 0x0a;
const PLUS = 0x2b; // simple string
const MINUS = 0x2d; // error, or the sign of a number
const COLON = 0x3a; // integer
const DOLLAR = 0x24; // bulk string
const STAR = 0x2a; // array
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LETTER_O = 0x4f;
const LETTER_K = 0x4b;
const NOT_FOUND = -1;
/** Digits that always fit a double exactly (10^15 < 2^53). */
const EXACT_DIGITS = 15;

// ---------------------------------------------------------------------------
// Encoder

/**
 * "Clients send commands to a Redis server as an array of bulk strings."
 * One command as one Buffer.
 */
export function encodeCommand(args: readonly RedisArg[]): Buffer {
  return encodeCommands([args]);
}

/**
 * Several commands in one Buffer, for a pipeline written with one socket
 * write. Two passes: sizes first, so the output is allocated once and each
 * string is written straight into it.
 */
export function encodeCommands(commands: readonly (readonly RedisArg[])[]): Buffer {
  const parts: (string | Buffer)[] = [];
  const lengths: number[] = [];
  let total = 0;
  for (const args of commands) {
    if (args.length === 0) throw new TypeError('A Redis command needs at least one argument (its name).');
    total += headerLength(args.length);
    for (const arg of args) {
      const part = typeof arg === 'number' ? numberArg(arg) : arg;
      if (typeof part !== 'string' && !Buffer.isBuffer(part)) {
        throw new TypeError(`A Redis argument must be a string, a number or a Buffer, not ${typeof part}.`);
      }
      const length = typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length;
      parts.push(part);
      lengths.push(length);
      total += headerLength(length) + length + 2;
    }
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  let index = 0;
  for (const args of commands) {
    at += out.write(`*${args.length}\r\n`, at, 'latin1');
    for (let i = 0; i < args.length; i += 1) {
      const part = parts[index] as string | Buffer;
      const length = lengths[index] as number;
      index += 1;
      at += out.write(`$${length}\r\n`, at, 'latin1');
      if (typeof part === 'string') at += out.write(part, at, 'utf8');
      else at += part.copy(out, at);
      out[at] = CR;
      out[at + 1] = LF;
      at += 2;
    }
  }
  return out;
}

/** Bytes of `*N\r\n` or `$N\r\n`. */
function headerLength(n: number): number {
  return 1 + String(n).length + 2;
}

function numberArg(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`A Redis argument cannot be ${value}.`);
  return String(value);
}

// ---------------------------------------------------------------------------
// Decoder

interface RespDecoderCallbacks {
  /** One complete top-level reply, in the order the server sent them. */
  onReply(reply: RedisReply): void;
}

export interface RespDecoderOptions {
  /** Largest bulk string accepted, in bytes. Default 8 MiB. */
  maxBulkBytes?: number;
  /** Most elements one array may announce. Default 1,000,000. */
  maxArrayLength?: number;
  /** Most arrays nested inside each other (a flat array is depth 1). Default 16. */
  maxDepth?: number;
  /** Longest simple string, error or header line, without its CRLF. Default 64 KiB. */
  maxLineBytes?: number;
}

const DEFAULT_MAX_BULK_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_ARRAY_LENGTH = 1_000_000;
const DEFAULT_MAX_DEPTH = 16;
const DEFAULT_MAX_LINE_BYTES = 64 * 1024;

export interface RespDecoder {
  /** Decode the next chunk of the byte stream, cut anywhere. Throws
   * RedisProtocolError; after one, every call rethrows it. */
  feed(chunk: Buffer): void;
  /** True while a reply has started but is not complete. */
  midReply(): boolean;
}

const Mode = {
  /** Reading a line: a type byte and what follows up to CRLF. */
  Line: 'line',
  /** Reading the payload and CRLF of a bulk string whose header was read. */
  Bulk: 'bulk',
  /** A protocol error was thrown; the stream cannot be resynchronised. */
  Failed: 'failed',
} as const;
type Mode = (typeof Mode)[keyof typeof Mode];

interface ArrayFrame {
  items: RedisReply[];
  length: number;
}

export function createRespDecoder(callbacks: RespDecoderCallbacks, options: RespDecoderOptions = {}): RespDecoder {
  const maxBulkBytes = positiveLimit(options.maxBulkBytes, DEFAULT_MAX_BULK_BYTES, 'maxBulkBytes');
  const maxArrayLength = positiveLimit(options.maxArrayLength, DEFAULT_MAX_ARRAY_LENGTH, 'maxArrayLength');
  const maxDepth = positiveLimit(options.maxDepth, DEFAULT_MAX_DEPTH, 'maxDepth');
  const maxLineBytes = positiveLimit(options.maxLineBytes, DEFAULT_MAX_LINE_BYTES, 'maxLineBytes');

  let mode: Mode = Mode.Line;
  let failure: unknown = undefined;
  /** Stream offset of the first byte of the current chunk. */
  let chunkOffset = 0;

  /** A line cut by a chunk boundary: copies of its pieces (copies, so a few
   * bytes do not pin a whole 64 KiB socket chunk). */
  let lineParts: Buffer[] = [];
  let lineBytes = 0;
  let lineStart = 0;

  /** Payload length of the bulk string being read, and what arrived of it
   * (payload and CRLF) in earlier chunks. */
  let bulkLength = 0;
  let bulkParts: Buffer[] = [];
  let bulkReceived = 0;

  /** Arrays still being filled, outermost first. */
  const stack: ArrayFrame[] = [];

  function feed(chunk: Buffer): void {
    if (mode === Mode.Failed) throw failure;
    try {
      scan(chunk);
    } catch (error) {
      mode = Mode.Failed;
      failure = error instanceof RedisProtocolError
        ? error
        : new RedisProtocolError('redis_decoder_failed', `Reply handling failed: ${String(error)}`, chunkOffset);
      throw failure;
    }
    chunkOffset += chunk.length;
  }

  function midReply(): boolean {
    return stack.length > 0 || lineParts.length > 0 || mode === Mode.Bulk;
  }

  function scan(chunk: Buffer): void {
    const length = chunk.length;
    let pos = 0;
    while (pos < length) {
      if (mode === Mode.Bulk) {
        const need = bulkLength + 2 - bulkReceived;
        const available = length - pos;
        if (available < need) {
          bulkParts.push(chunk.subarray(pos));
          bulkReceived += available;
          return;
        }
        const end = pos + need;
        let payload: string;
        if (bulkParts.length === 0) {
          // Fast path: the whole bulk string is in this chunk.
          expectCrlf(chunk, end - 2, chunkOffset + end - 2);
          payload = chunk.toString('utf8', pos, pos + bulkLength);
        } else {
          bulkParts.push(chunk.subarray(pos, end));
          const whole = Buffer.concat(bulkParts, bulkLength + 2);
          bulkParts = [];
          expectCrlf(whole, bulkLength, chunkOffset + end - 2);
          payload = whole.toString('utf8', 0, bulkLength);
        }
        bulkReceived = 0;
        mode = Mode.Line;
        pos = end;
        complete(payload);
        continue;
      }

      const lf = chunk.indexOf(LF, pos);
      if (lf === NOT_FOUND) {
        if (lineParts.length === 0) lineStart = chunkOffset + pos;
        lineBytes += length - pos;
        // +1: the CR may be the last byte held so far.
        if (lineBytes > maxLineBytes + 1) throw lineTooLong(lineStart);
        lineParts.push(Buffer.from(chunk.subarray(pos)));
        return;
      }
      if (lineParts.length === 0) {
        // Fast path: the whole line is in this chunk; parse it in place.
        if (lf - 1 - pos > maxLineBytes) throw lineTooLong(chunkOffset + pos);
        if (lf === pos || chunk[lf - 1] !== CR) throw bareLf(chunkOffset + lf);
        const start = pos;
        pos = lf + 1;
        readLine(chunk, start, lf - 1, chunkOffset + start);
      } else {
        lineBytes += lf - pos;
        if (lineBytes - 1 > maxLineBytes) throw lineTooLong(lineStart);
        lineParts.push(chunk.subarray(pos, lf));
        const line = Buffer.concat(lineParts, lineBytes);
        lineParts = [];
        lineBytes = 0;
        if (line.length === 0 || line[line.length - 1] !== CR) throw bareLf(chunkOffset + lf);
        pos = lf + 1;
        readLine(line, 0, line.length - 1, lineStart);
      }
    }
  }

  /** One line without its CRLF: `line[start, end)`; `at` is its stream offset. */
  function readLine(line: Buffer, start: number, end: number, at: number): void {
    if (end === start) throw new RedisProtocolError('redis_protocol_error', 'Empty line where a reply was expected', at);
    switch (line[start]) {
      case PLUS:
        // The most common reply of all gets no decoding.
        if (end - start === 3 && line[start + 1] === LETTER_O && line[start + 2] === LETTER_K) complete('OK');
        else complete(line.toString('utf8', start + 1, end));
        return;
      case MINUS:
        complete(new RedisReplyError(line.toString('utf8', start + 1, end)));
        return;
      case COLON:
        complete(parseInteger(line, start + 1, end, at));
        return;
      case DOLLAR: {
        const n = parseLength(line, start + 1, end, at, maxBulkBytes, 'bulk string');
        if (n === -1) {
          complete(null);
          return;
        }
        bulkLength = n;
        bulkReceived = 0;
        mode = Mode.Bulk;
        return;
      }
      case STAR: {
        const n = parseLength(line, start + 1, end, at, maxArrayLength, 'array');
        if (n === -1) complete(null);
        else if (n === 0) complete([]);
        else if (stack.length >= maxDepth) {
          throw new RedisProtocolError('redis_reply_too_deep', `Arrays nested deeper than ${maxDepth}`, at);
        } else stack.push({ items: [], length: n });
        return;
      }
      default:
        throw new RedisProtocolError(
          'redis_protocol_error',
          `Unexpected reply type byte 0x${(line[start] as number).toString(16).padStart(2, '0')}`,
          at,
        );
    }
  }

  /** A value is complete: it is a top-level reply, or the next element of the
   * innermost open array, which may complete that array in turn. */
  function complete(value: RedisReply): void {
    let current = value;
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        callbacks.onReply(current);
        return;
      }
      top.items.push(current);
      if (top.items.length < top.length) return;
      stack.pop();
      current = top.items;
    }
  }

  function lineTooLong(at: number): RedisProtocolError {
    return new RedisProtocolError('redis_reply_too_large', `A reply line is longer than ${maxLineBytes} bytes`, at);
  }

  return { feed, midReply };
}

function bareLf(at: number): RedisProtocolError {
  return new RedisProtocolError('redis_protocol_error', 'Line ended by LF without CR', at);
}

function expectCrlf(bytes: Buffer, index: number, at: number): void {
  if (bytes[index] !== CR || bytes[index + 1] !== LF) {
    throw new RedisProtocolError('redis_protocol_error', 'Bulk string not followed by CRLF', at);
  }
}

/** `:` payload: an optional minus and at least one digit. */
function parseInteger(line: Buffer, start: number, end: number, at: number): number | bigint {
  const negative = line[start] === MINUS;
  const first = negative ? start + 1 : start;
  if (first === end) throw new RedisProtocolError('redis_protocol_error', 'Integer reply without digits', at);
  let value = 0;
  for (let i = first; i < end; i += 1) {
    const c = line[i] as number;
    if (c < DIGIT_0 || c > DIGIT_9) throw new RedisProtocolError('redis_protocol_error', 'Integer reply with a non-digit', at);
    value = value * 10 + (c - DIGIT_0);
  }
  if (end - first <= EXACT_DIGITS) return negative ? -value : value;
  const big = BigInt(line.toString('latin1', start, end));
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** `$` and `*` headers: -1 (null) or a length within `max`. */
function parseLength(line: Buffer, start: number, end: number, at: number, max: number, what: string): number {
  if (end - start === 2 && line[start] === MINUS && line[start + 1] === DIGIT_0 + 1) return -1;
  if (start === end) throw new RedisProtocolError('redis_protocol_error', `A ${what} header without a length`, at);
  let value = 0;
  for (let i = start; i < end; i += 1) {
    const c = line[i] as number;
    if (c < DIGIT_0 || c > DIGIT_9) throw new RedisProtocolError('redis_protocol_error', `A ${what} length that is not a number`, at);
    value = value * 10 + (c - DIGIT_0);
    if (value > max) throw new RedisProtocolError('redis_reply_too_large', `A ${what} longer than the limit of ${max}`, at);
  }
  return value;
}

function positiveLimit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
