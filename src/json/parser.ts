// A streaming JSON parser over bytes, fed chunk by chunk as an HTTP body arrives.
// It accepts what JSON.parse accepts (RFC 8259; numbers out of range aside, see
// below) and builds the same value, but it never needs the whole body in memory
// as a string, it stops at the first byte past a limit, and an observer can
// reject a request from its first keys.
//
// Design: a pure closure with named states and one switch in the byte loop. The
// container stack lives in arrays, never on the JS call stack, so nesting depth is
// bounded only by `maxDepth`. Structure is read byte by byte; strings are not: the
// closing quote and the next backslash are found with indexOf, and the bytes
// between (a run) are decoded natively (see string-assembly.ts). A run cut by a
// chunk end is kept and checked whole once it ends, so every split of the input
// gives the same value or the same error at the same offset.
//
// Errors come in byte order, with one deliberate exception: a string longer than
// maxStringBytes fails as too long even if its first bytes hold another fault,
// because its runs are checked when they end and the length is checked first.
//
// A leading UTF-8 byte order mark is rejected (unexpected_byte at offset 0), as
// JSON.parse rejects U+FEFF before a value: RFC 8259 section 8.1 forbids senders
// from adding one, and no client this gateway serves sends one.
//
// One deliberate difference from JSON.parse: a number whose magnitude rounds
// beyond the largest double (1e999, -1e400) fails as number_out_of_range, with
// its path, where JSON.parse makes it Infinity. No JSON text can carry
// Infinity back out (JSON.stringify writes null), so accepting one would turn
// the sender's number into null, or into a limit without bound. RFC 8259
// section 6 lets an implementation limit the range of numbers, and I-JSON
// (RFC 7493 section 2.2) tells senders not to send numbers beyond a double
// (its example is 1E400). Underflow (1e-999 is 0) and excess digits stay as
// JSON.parse makes them: the value is as near as a double gets.

import { Buffer } from 'node:buffer';
import { Byte, HEX_VALUES, isDigit, isWhitespace, SHORT_ESCAPES, VALUE_KINDS } from './json-grammar.ts';
import { resolveLimits, type JsonParser, type JsonParserOptions, type JsonPath } from './json-options.ts';
import { JsonParseError, describeByte, type JsonLimitName, type JsonParseErrorCode } from './json-parse-error.ts';
import { numberFromBytes } from './number-value.ts';
import { createShortStringCache, createStringAssembly, decodeStringBytes, SHORT_STRING_BYTES } from './string-assembly.ts';
import type { StringContentFault } from './string-content.ts';

export { DEFAULT_JSON_LIMITS } from './json-options.ts';
export type { JsonLimits, JsonObserver, JsonParser, JsonParserOptions, JsonPath, JsonValueKind } from './json-options.ts';
export { JsonParseError, renderJsonPath } from './json-parse-error.ts';
export type { JsonLimitName, JsonParseErrorCode } from './json-parse-error.ts';

const State = {
  Value: 0,
  FirstValueOrArrayEnd: 1,
  FirstKeyOrObjectEnd: 2,
  Key: 3,
  Colon: 4,
  CommaOrObjectEnd: 5,
  CommaOrArrayEnd: 6,
  String: 7,
  Escape: 8,
  UnicodeEscape: 9,
  NumberMinus: 10,
  NumberZero: 11,
  NumberInteger: 12,
  NumberPoint: 13,
  NumberFraction: 14,
  NumberExponentMark: 15,
  NumberExponentSign: 16,
  NumberExponent: 17,
  Literal: 18,
  Done: 19,
} as const;
type State = (typeof State)[keyof typeof State];
const STATE_NAMES: readonly string[] = Object.keys(State);

const EMPTY: Buffer = Buffer.alloc(0);

/**
 * Shared by all parsers: it holds only strings equal to the bytes they were made
 * from, so no request can see another's data, and every request finds "role" and
 * "content" already there.
 */
const cachedShortString = createShortStringCache();

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

export function createJsonParser(options: JsonParserOptions = {}): JsonParser {
  const limits = resolveLimits(options.limits);
  const { maxBytes, maxDepth, maxStringBytes, maxMembers } = limits;
  const observer = options.observer;
  const rejectDuplicateKeys = options.rejectDuplicateKeys === true;

  let state: State = State.Value;
  let failure: { error: unknown } | undefined;
  let ended = false;
  let root: unknown;

  // The chunk being parsed and the offset of its first byte in the whole input.
  let buf: Buffer = EMPTY;
  let base = 0;
  // Positions of the next quote and backslash in `buf` at or after the current
  // string run, or buf.length: kept so a string with many escapes is not rescanned
  // to its end after each one.
  let nextQuote = -1;
  let nextBackslash = -1;

  // Open containers, innermost last, and the members each object has seen (an
  // array's length is its count); the innermost one also in `top`.
  const containers: (Record<string, unknown> | unknown[])[] = [];
  const memberCounts: number[] = [];
  let top: Record<string, unknown> | unknown[] | undefined;
  let topIsArray = false;
  // The key whose value comes next in the innermost object.
  let pendingKey = '';
  // For each open container, where it sits in its parent: the key or index
  // (the root's entry is unused). Kept always, one entry per container, so an
  // error can name a path without an observer.
  const slots: (string | number)[] = [];
  // Path of the value being read; maintained only for an observer.
  const path: (string | number)[] = [];

  // String in progress: offset of its first content byte, text decoded up to the
  // last escape, raw bytes of the current run held from earlier chunks.
  let stringIsKey = false;
  let contentStart = 0;
  let runOffset = 0;
  let stringHasEscape = false;
  const pieces: Uint8Array[] = [];
  const assembly = createStringAssembly();
  let unicodeValue = 0;
  let unicodeDigits = 0;

  // Number in progress: its start in `buf` and in the whole input, its text from earlier chunks.
  let numberStart = 0;
  let numberOffset = 0;
  let numberText = '';

  // Literal in progress.
  let literalText = '';
  let literalIndex = 0;
  let literalValue: boolean | null = null;

  function fail(code: JsonParseErrorCode, offset: number, problem: string, limit?: JsonLimitName, at?: JsonPath): never {
    const where = `at byte offset ${offset} (parser state ${STATE_NAMES[state] as string})`;
    throw new JsonParseError(code, offset, `${problem} ${where}`, limit, at);
  }

  function failUnexpected(i: number, expected: string): never {
    fail('unexpected_byte', base + i, `Unexpected byte ${describeByte(buf[i] as number)}, expected ${expected},`);
  }

  function failStringLimit(): never {
    fail('limit_exceeded', contentStart + maxStringBytes, `String longer than ${maxStringBytes} bytes`, 'maxStringBytes');
  }

  /** State after a value is complete, whatever holds it. */
  function afterValue(): State {
    if (top === undefined) return State.Done;
    if (observer !== undefined) path.pop();
    return topIsArray ? State.CommaOrArrayEnd : State.CommaOrObjectEnd;
  }

  /** Stores a value in its container, or as the root. */
  function attach(value: unknown): void {
    if (top === undefined) root = value;
    else if (topIsArray) (top as unknown[]).push(value);
    else if (pendingKey === '__proto__') {
      // Assignment would call the Object.prototype setter and swap the prototype;
      // JSON.parse makes an own data property, and so do we.
      Object.defineProperty(top, pendingKey, { value, writable: true, enumerable: true, configurable: true });
    } else (top as Record<string, unknown>)[pendingKey] = value;
  }

  function completeScalar(value: unknown): State {
    attach(value);
    return afterValue();
  }

  function open(container: Record<string, unknown> | unknown[], isArray: boolean): void {
    slots.push(top === undefined ? '' : topIsArray ? (top as unknown[]).length : pendingKey);
    attach(container);
    containers.push(container);
    memberCounts.push(0);
    top = container;
    topIsArray = isArray;
  }

  function closeContainer(): State {
    containers.pop();
    memberCounts.pop();
    slots.pop();
    top = containers[containers.length - 1];
    topIsArray = Array.isArray(top);
    return afterValue();
  }

  /** Dispatches on the first byte of a value at buf[i]; returns the next state. */
  function beginValue(i: number): State {
    const byte = buf[i] as number;
    const kind = VALUE_KINDS[byte];
    if (kind === undefined) failUnexpected(i, state === State.FirstValueOrArrayEnd ? "a value or ']'" : 'a value');
    if (topIsArray && (top as unknown[]).length >= maxMembers) {
      fail('limit_exceeded', base + i, `Array with more than ${maxMembers} entries`, 'maxMembers');
    }
    if ((byte === Byte.OpenBrace || byte === Byte.OpenBracket) && containers.length >= maxDepth) {
      fail('limit_exceeded', base + i, `Nesting deeper than ${maxDepth}`, 'maxDepth');
    }
    if (observer !== undefined) {
      if (top !== undefined) path.push(topIsArray ? (top as unknown[]).length : pendingKey);
      observer.valueStart?.(path, kind);
    }

    switch (byte) {
      case Byte.Quote:
        beginString(i, false);
        return State.String;
      case Byte.OpenBrace:
        open({}, false);
        return State.FirstKeyOrObjectEnd;
      case Byte.OpenBracket:
        open([], true);
        return State.FirstValueOrArrayEnd;
      case Byte.LowerT:
        return beginLiteral('true', true);
      case Byte.LowerF:
        return beginLiteral('false', false);
      case Byte.LowerN:
        return beginLiteral('null', null);
      default:
        numberStart = i;
        numberOffset = base + i;
        numberText = '';
        return byte === Byte.Minus ? State.NumberMinus : byte === Byte.Zero ? State.NumberZero : State.NumberInteger;
    }
  }

  function beginLiteral(text: string, value: boolean | null): State {
    literalText = text;
    literalIndex = 1;
    literalValue = value;
    return State.Literal;
  }

  /** A key's opening quote at buf[i]. */
  function beginKey(i: number): State {
    const depth = containers.length;
    const count = (memberCounts[depth - 1] as number) + 1;
    if (count > maxMembers) fail('limit_exceeded', base + i, `Object with more than ${maxMembers} members`, 'maxMembers');
    memberCounts[depth - 1] = count;
    beginString(i, true);
    return State.String;
  }

  function beginString(quote: number, isKey: boolean): void {
    stringIsKey = isKey;
    contentStart = base + quote + 1;
    runOffset = contentStart;
    stringHasEscape = false;
  }

  function failStringContent(fault: StringContentFault): never {
    const offset = runOffset + fault.index;
    if (fault.code === 'control_character') fail('unexpected_byte', offset, 'Unescaped control character in string');
    fail('invalid_utf8', offset, 'Invalid UTF-8 in string');
  }

  /** The raw run buf[from, to) with the pieces held from earlier chunks in front. */
  function joinRun(from: number, to: number): Buffer {
    pieces.push(buf.subarray(from, to));
    const joined = Buffer.concat(pieces);
    pieces.length = 0;
    return joined;
  }

  /** The text of a string that had no escape: its one run, buf[from, to). */
  function decodeOnlyRun(from: number, to: number): string {
    let decoded: string | StringContentFault | undefined;
    if (pieces.length === 0) {
      if (to - from <= SHORT_STRING_BYTES) decoded = cachedShortString(buf, from, to);
      if (decoded === undefined) decoded = decodeStringBytes(buf, from, to);
    } else {
      const joined = joinRun(from, to);
      decoded = decodeStringBytes(joined, 0, joined.length);
    }
    return typeof decoded === 'string' ? decoded : failStringContent(decoded);
  }

  /** Adds the run buf[from, to) to the string being assembled. */
  function appendRun(from: number, to: number): void {
    let fault: StringContentFault | undefined;
    if (pieces.length === 0) fault = assembly.appendRun(buf, from, to);
    else {
      const joined = joinRun(from, to);
      fault = assembly.appendRun(joined, 0, joined.length);
    }
    if (fault !== undefined) failStringContent(fault);
  }

  function completeString(text: string): State {
    if (!stringIsKey) return completeScalar(text);
    if (rejectDuplicateKeys && Object.hasOwn(top as Record<string, unknown>, text)) {
      fail('duplicate_key', contentStart - 1, 'Duplicate object key');
    }
    pendingKey = text;
    observer?.key?.(path, text);
    return State.Colon;
  }

  /** The path of the value being read (not yet attached to its container). */
  function currentPath(): (string | number)[] {
    const current = slots.slice(1);
    if (top !== undefined) current.push(topIsArray ? (top as unknown[]).length : pendingKey);
    return current;
  }

  /** The number ends before buf[i]. */
  function completeNumber(i: number): State {
    let value: number;
    if (numberText === '') value = numberFromBytes(buf, numberStart, i);
    else {
      const text = numberText + buf.toString('latin1', numberStart, i);
      numberText = '';
      value = numberFromBytes(Buffer.from(text, 'latin1'), 0, text.length);
    }
    if (value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY) {
      fail('number_out_of_range', numberOffset, 'Number beyond the largest double (1.7976931348623157e308)', undefined, currentPath());
    }
    return completeScalar(value);
  }

  /** The byte loop over bytes[0, end). */
  function consume(end: number): void {
    const bytes = buf;
    let i = 0;
    while (i < end) {
      switch (state) {
        case State.String: {
          if (nextQuote < i) {
            nextQuote = bytes.indexOf(Byte.Quote, i);
            if (nextQuote === -1) nextQuote = end;
          }
          const quote = nextQuote;
          if (nextBackslash < i) {
            nextBackslash = bytes.indexOf(Byte.Backslash, i);
            if (nextBackslash === -1) nextBackslash = end;
          }
          if (quote === end && nextBackslash === end) {
            // The run goes on in the next chunk; copy it, the caller may reuse the chunk.
            if (base + end - contentStart > maxStringBytes) failStringLimit();
            if (end > i) pieces.push(Uint8Array.prototype.slice.call(bytes, i, end));
            i = end;
          } else if (quote < nextBackslash) {
            if (base + quote - contentStart > maxStringBytes) failStringLimit();
            let text: string;
            if (stringHasEscape) {
              appendRun(i, quote);
              text = assembly.take();
            } else text = decodeOnlyRun(i, quote);
            i = quote + 1;
            state = completeString(text);
          } else {
            // The backslash is itself a content byte.
            if (base + nextBackslash - contentStart >= maxStringBytes) failStringLimit();
            appendRun(i, nextBackslash);
            stringHasEscape = true;
            i = nextBackslash + 1;
            state = State.Escape;
          }
          break;
        }
        case State.Escape: {
          if (base + i - contentStart >= maxStringBytes) failStringLimit();
          const byte = bytes[i] as number;
          const escaped = SHORT_ESCAPES[byte] as number;
          if (escaped !== 0) {
            assembly.appendCodeUnit(escaped);
            runOffset = base + i + 1;
            state = State.String;
          } else if (byte === Byte.LowerU) {
            // Fast path: all four digits in this chunk, all valid, none past the limit.
            if (i + 4 < end && base + i + 4 - contentStart < maxStringBytes) {
              const unit = (HEX_VALUES[bytes[i + 1] as number] as number) << 12 | (HEX_VALUES[bytes[i + 2] as number] as number) << 8 |
                (HEX_VALUES[bytes[i + 3] as number] as number) << 4 | (HEX_VALUES[bytes[i + 4] as number] as number);
              if (unit >= 0) {
                assembly.appendCodeUnit(unit);
                i += 5;
                runOffset = base + i;
                state = State.String;
                break;
              }
            }
            unicodeValue = 0;
            unicodeDigits = 0;
            state = State.UnicodeEscape;
          } else fail('invalid_escape', base + i, `Invalid escape ${describeByte(byte)} in string`);
          i++;
          break;
        }
        case State.UnicodeEscape: {
          if (base + i - contentStart >= maxStringBytes) failStringLimit();
          const digit = HEX_VALUES[bytes[i] as number] as number;
          if (digit < 0) fail('invalid_escape', base + i, `Invalid hex digit ${describeByte(bytes[i] as number)} in \\u escape`);
          unicodeValue = unicodeValue * 16 + digit;
          if (++unicodeDigits === 4) {
            assembly.appendCodeUnit(unicodeValue);
            runOffset = base + i + 1;
            state = State.String;
          }
          i++;
          break;
        }
        case State.Value:
        case State.FirstValueOrArrayEnd: {
          const byte = bytes[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === Byte.CloseBracket && state === State.FirstValueOrArrayEnd) {
            i++;
            state = closeContainer();
          } else {
            state = beginValue(i);
            i++;
          }
          break;
        }
        case State.FirstKeyOrObjectEnd:
        case State.Key: {
          const byte = bytes[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === Byte.Quote) {
            state = beginKey(i);
            i++;
          } else if (byte === Byte.CloseBrace && state === State.FirstKeyOrObjectEnd) {
            i++;
            state = closeContainer();
          } else failUnexpected(i, state === State.Key ? 'a key' : "a key or '}'");
          break;
        }
        case State.Colon: {
          const byte = bytes[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === Byte.Colon) {
            i++;
            state = State.Value;
          } else failUnexpected(i, "':'");
          break;
        }
        case State.CommaOrObjectEnd: {
          const byte = bytes[i] as number;
          i++;
          if (byte === Byte.Comma) state = State.Key;
          else if (byte === Byte.CloseBrace) state = closeContainer();
          else if (!isWhitespace(byte)) failUnexpected(i - 1, "',' or '}'");
          break;
        }
        case State.CommaOrArrayEnd: {
          const byte = bytes[i] as number;
          i++;
          if (byte === Byte.Comma) state = State.Value;
          else if (byte === Byte.CloseBracket) state = closeContainer();
          else if (!isWhitespace(byte)) failUnexpected(i - 1, "',' or ']'");
          break;
        }
        case State.NumberMinus: {
          const byte = bytes[i] as number;
          if (byte === Byte.Zero) state = State.NumberZero;
          else if (byte >= Byte.One && byte <= Byte.Nine) state = State.NumberInteger;
          else fail('invalid_number', base + i, `Expected a digit after '-', got ${describeByte(byte)},`);
          i++;
          break;
        }
        case State.NumberZero: {
          const byte = bytes[i] as number;
          if (byte === Byte.Point) state = State.NumberPoint;
          else if (byte === Byte.LowerE || byte === Byte.UpperE) state = State.NumberExponentMark;
          else if (isDigit(byte)) fail('invalid_number', base + i, 'Leading zero in number');
          else {
            state = completeNumber(i);
            break;
          }
          i++;
          break;
        }
        case State.NumberInteger:
        case State.NumberFraction:
        case State.NumberExponent: {
          while (i < end && isDigit(bytes[i] as number)) i++;
          if (i === end) break;
          const byte = bytes[i] as number;
          if (byte === Byte.Point && state === State.NumberInteger) state = State.NumberPoint;
          else if ((byte === Byte.LowerE || byte === Byte.UpperE) && state !== State.NumberExponent) state = State.NumberExponentMark;
          else {
            state = completeNumber(i);
            break;
          }
          i++;
          break;
        }
        case State.NumberPoint:
        case State.NumberExponentSign: {
          const byte = bytes[i] as number;
          if (!isDigit(byte)) fail('invalid_number', base + i, `Expected a digit, got ${describeByte(byte)},`);
          state = state === State.NumberPoint ? State.NumberFraction : State.NumberExponent;
          i++;
          break;
        }
        case State.NumberExponentMark: {
          const byte = bytes[i] as number;
          if (byte === Byte.Plus || byte === Byte.Minus) state = State.NumberExponentSign;
          else if (isDigit(byte)) state = State.NumberExponent;
          else fail('invalid_number', base + i, `Expected a sign or digit in exponent, got ${describeByte(byte)},`);
          i++;
          break;
        }
        case State.Literal: {
          if (bytes[i] !== literalText.charCodeAt(literalIndex)) failUnexpected(i, `'${literalText}'`);
          i++;
          if (++literalIndex === literalText.length) state = completeScalar(literalValue);
          break;
        }
        case State.Done: {
          if (!isWhitespace(bytes[i] as number)) failUnexpected(i, 'the end of input');
          i++;
          break;
        }
      }
    }
    // Carry a number cut by the chunk end into the next chunk.
    if (state >= State.NumberMinus && state <= State.NumberExponent) {
      numberText += buf.toString('latin1', numberStart, end);
      numberStart = 0;
    }
  }

  function feed(chunk: Uint8Array): void {
    if (failure !== undefined) throw failure.error;
    if (ended) throw new Error('JSON parser: feed() after end()');
    try {
      buf = asBuffer(chunk);
      const overflow = base + buf.length > maxBytes;
      if (overflow) buf = buf.subarray(0, maxBytes - base);
      nextQuote = -1;
      nextBackslash = -1;
      consume(buf.length);
      base += buf.length;
      if (overflow) fail('limit_exceeded', base, `Input longer than ${maxBytes} bytes`, 'maxBytes');
    } catch (error) {
      failure = { error };
      throw error;
    } finally {
      buf = EMPTY;
    }
  }

  function end(): unknown {
    if (failure !== undefined) throw failure.error;
    if (ended) return root;
    try {
      if (containers.length === 0 && (state === State.NumberZero || state === State.NumberInteger || state === State.NumberFraction || state === State.NumberExponent)) {
        state = completeNumber(0);
      }
      if (state !== State.Done) {
        fail('unexpected_end', base, base === 0 ? 'Empty input' : 'Input ends before the JSON value is complete');
      }
    } catch (error) {
      failure = { error };
      throw error;
    }
    ended = true;
    return root;
  }

  return { feed, end };
}

/**
 * Parses a whole document. A string is parsed as its UTF-8 encoding; a string
 * holding a lone surrogate has no such encoding and fails as invalid UTF-8.
 */
export function parseJson(input: Uint8Array | string, options?: JsonParserOptions): unknown {
  const parser = createJsonParser(options);
  if (typeof input === 'string') {
    const lone = LONE_SURROGATE.exec(input);
    if (lone !== null) {
      const offset = Buffer.byteLength(input.slice(0, lone.index), 'utf8');
      // Parse the well-formed prefix first so an earlier fault is reported first.
      parser.feed(Buffer.from(input.slice(0, lone.index), 'utf8'));
      throw new JsonParseError('invalid_utf8', offset, `Lone surrogate in input at byte offset ${offset}`);
    }
    parser.feed(Buffer.from(input, 'utf8'));
  } else parser.feed(input);
  return parser.end();
}

/** In a `u` regex surrogate pairs are single code points, so this matches only lone halves. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
