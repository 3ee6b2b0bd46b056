// A streaming JSON parser over bytes, fed chunk by chunk as an HTTP body arrives.
// It accepts what JSON.parse accepts (RFC 8259; numbers out of range aside, see
// below) and builds the same value, but it never needs the whole body in memory
// as a string, it stops at the first byte past a limit, and an observer can
// reject a request from its first keys.
//
// Design: named states and one switch in the byte loop, in a class whose state
// lives in fields and whose steps are on prototypes, so a parse makes one
// object and no functions (a request parses one body). The class is built in
// three layers, one file each: the container stack (container-stack.ts), the
// tokens inside a value (token-scanner.ts), and here the byte loop with feed()
// and end(). The container stack lives in arrays, never on the JS call stack,
// so nesting depth is bounded only by `maxDepth`. Structure is read byte by
// byte; strings are not: the closing quote and the next backslash are found
// with indexOf, and the bytes between (a run) are decoded natively (see
// string-assembly.ts). A run cut by a chunk end is kept and checked whole once
// it ends, so every split of the input gives the same value or the same error
// at the same offset.
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
import { Byte, HEX_VALUES, isDigit, isWhitespace, SHORT_ESCAPES } from './json-grammar.ts';
import type { JsonParser, JsonParserOptions } from './json-options.ts';
import { JsonParseError, describeByte } from './json-parse-error.ts';
import { EMPTY, State } from './container-stack.ts';
import { JsonTokenScanner } from './token-scanner.ts';

export { DEFAULT_JSON_LIMITS } from './json-options.ts';
export type { JsonLimits, JsonObserver, JsonParser, JsonParserOptions, JsonPath, JsonValueKind } from './json-options.ts';
export { JsonParseError, renderJsonPath } from './json-parse-error.ts';
export type { JsonLimitName, JsonParseErrorCode } from './json-parse-error.ts';

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

export function createJsonParser(options: JsonParserOptions = {}): JsonParser {
  return new StreamingJsonParser(options);
}

/**
 * The parser's state lives in fields and its steps on the prototypes (this
 * class and the two it extends): a parse makes this object, its stacks and its
 * string assembly, and no functions.
 */
export class StreamingJsonParser extends JsonTokenScanner implements JsonParser {
  private failure: { error: unknown } | undefined = undefined;
  private ended = false;
  // Positions of the next quote and backslash in `buf` at or after the current
  // string run, or buf.length: kept so a string with many escapes is not rescanned
  // to its end after each one.
  private nextQuote = -1;
  private nextBackslash = -1;

  /** The byte loop over buf[0, end). */
  private consume(end: number): void {
    const bytes = this.buf;
    // Fixed while a chunk is consumed: feed() moves `base` only afterwards.
    const base = this.base;
    const maxStringBytes = this.maxStringBytes;
    const assembly = this.assembly;
    let i = 0;
    while (i < end) {
      switch (this.state) {
        case State.String: {
          if (this.nextQuote < i) {
            const found = bytes.indexOf(Byte.Quote, i);
            this.nextQuote = found === -1 ? end : found;
          }
          const quote = this.nextQuote;
          if (this.nextBackslash < i) {
            const found = bytes.indexOf(Byte.Backslash, i);
            this.nextBackslash = found === -1 ? end : found;
          }
          const backslash = this.nextBackslash;
          if (quote === end && backslash === end) {
            // The run goes on in the next chunk; copy it, the caller may reuse the chunk.
            if (base + end - this.contentStart > maxStringBytes) this.failStringLimit();
            if (end > i) this.pieces.push(Uint8Array.prototype.slice.call(bytes, i, end));
            i = end;
          } else if (quote < backslash) {
            if (base + quote - this.contentStart > maxStringBytes) this.failStringLimit();
            let text: string;
            if (this.stringHasEscape) {
              this.appendRun(i, quote);
              text = assembly.take();
            } else text = this.decodeOnlyRun(i, quote);
            i = quote + 1;
            this.state = this.completeString(text);
          } else {
            // The backslash is itself a content byte.
            if (base + backslash - this.contentStart >= maxStringBytes) this.failStringLimit();
            this.appendRun(i, backslash);
            this.stringHasEscape = true;
            i = backslash + 1;
            this.state = State.Escape;
          }
          break;
        }
        case State.Escape: {
          if (base + i - this.contentStart >= maxStringBytes) this.failStringLimit();
          const byte = bytes[i] as number;
          const escaped = SHORT_ESCAPES[byte] as number;
          if (escaped !== 0) {
            assembly.appendCodeUnit(escaped);
            this.runOffset = base + i + 1;
            this.state = State.String;
          } else if (byte === Byte.LowerU) {
            // Fast path: all four digits in this chunk, all valid, none past the limit.
            if (i + 4 < end && base + i + 4 - this.contentStart < maxStringBytes) {
              const unit = (HEX_VALUES[bytes[i + 1] as number] as number) << 12 | (HEX_VALUES[bytes[i + 2] as number] as number) << 8 |
                (HEX_VALUES[bytes[i + 3] as number] as number) << 4 | (HEX_VALUES[bytes[i + 4] as number] as number);
              if (unit >= 0) {
                assembly.appendCodeUnit(unit);
                i += 5;
                this.runOffset = base + i;
                this.state = State.String;
                break;
              }
            }
            this.unicodeValue = 0;
            this.unicodeDigits = 0;
            this.state = State.UnicodeEscape;
          } else this.fail('invalid_escape', base + i, `Invalid escape ${describeByte(byte)} in string`);
          i++;
          break;
        }
        case State.UnicodeEscape: {
          if (base + i - this.contentStart >= maxStringBytes) this.failStringLimit();
          const digit = HEX_VALUES[bytes[i] as number] as number;
          if (digit < 0) this.fail('invalid_escape', base + i, `Invalid hex digit ${describeByte(bytes[i] as number)} in \\u escape`);
          this.unicodeValue = this.unicodeValue * 16 + digit;
          if (++this.unicodeDigits === 4) {
            assembly.appendCodeUnit(this.unicodeValue);
            this.runOffset = base + i + 1;
            this.state = State.String;
          }
          i++;
          break;
        }
        case State.Value:
        case State.FirstValueOrArrayEnd: {
          const byte = bytes[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === Byte.CloseBracket && this.state === State.FirstValueOrArrayEnd) {
            i++;
            this.state = this.closeContainer();
          } else {
            this.state = this.beginValue(i);
            i++;
          }
          break;
        }
        case State.FirstKeyOrObjectEnd:
        case State.Key: {
          const byte = bytes[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === Byte.Quote) {
            this.state = this.beginKey(i);
            i++;
          } else if (byte === Byte.CloseBrace && this.state === State.FirstKeyOrObjectEnd) {
            i++;
            this.state = this.closeContainer();
          } else this.failUnexpected(i, this.state === State.Key ? 'a key' : "a key or '}'");
          break;
        }
        case State.Colon: {
          const byte = bytes[i] as number;
          if (isWhitespace(byte)) i++;
          else if (byte === Byte.Colon) {
            i++;
            this.state = State.Value;
          } else this.failUnexpected(i, "':'");
          break;
        }
        case State.CommaOrObjectEnd: {
          const byte = bytes[i] as number;
          i++;
          if (byte === Byte.Comma) this.state = State.Key;
          else if (byte === Byte.CloseBrace) this.state = this.closeContainer();
          else if (!isWhitespace(byte)) this.failUnexpected(i - 1, "',' or '}'");
          break;
        }
        case State.CommaOrArrayEnd: {
          const byte = bytes[i] as number;
          i++;
          if (byte === Byte.Comma) this.state = State.Value;
          else if (byte === Byte.CloseBracket) this.state = this.closeContainer();
          else if (!isWhitespace(byte)) this.failUnexpected(i - 1, "',' or ']'");
          break;
        }
        case State.NumberMinus: {
          const byte = bytes[i] as number;
          if (byte === Byte.Zero) this.state = State.NumberZero;
          else if (byte >= Byte.One && byte <= Byte.Nine) this.state = State.NumberInteger;
          else this.fail('invalid_number', base + i, `Expected a digit after '-', got ${describeByte(byte)},`);
          i++;
          break;
        }
        case State.NumberZero: {
          const byte = bytes[i] as number;
          if (byte === Byte.Point) this.state = State.NumberPoint;
          else if (byte === Byte.LowerE || byte === Byte.UpperE) this.state = State.NumberExponentMark;
          else if (isDigit(byte)) this.fail('invalid_number', base + i, 'Leading zero in number');
          else {
            this.state = this.completeNumber(i);
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
          const state = this.state;
          if (byte === Byte.Point && state === State.NumberInteger) this.state = State.NumberPoint;
          else if ((byte === Byte.LowerE || byte === Byte.UpperE) && state !== State.NumberExponent) this.state = State.NumberExponentMark;
          else {
            this.state = this.completeNumber(i);
            break;
          }
          i++;
          break;
        }
        case State.NumberPoint:
        case State.NumberExponentSign: {
          const byte = bytes[i] as number;
          if (!isDigit(byte)) this.fail('invalid_number', base + i, `Expected a digit, got ${describeByte(byte)},`);
          this.state = this.state === State.NumberPoint ? State.NumberFraction : State.NumberExponent;
          i++;
          break;
        }
        case State.NumberExponentMark: {
          const byte = bytes[i] as number;
          if (byte === Byte.Plus || byte === Byte.Minus) this.state = State.NumberExponentSign;
          else if (isDigit(byte)) this.state = State.NumberExponent;
          else this.fail('invalid_number', base + i, `Expected a sign or digit in exponent, got ${describeByte(byte)},`);
          i++;
          break;
        }
        case State.Literal: {
          const literalText = this.literalText;
          if (bytes[i] !== literalText.charCodeAt(this.literalIndex)) this.failUnexpected(i, `'${literalText}'`);
          i++;
          if (++this.literalIndex === literalText.length) this.state = this.completeScalar(this.literalValue);
          break;
        }
        case State.Done: {
          if (!isWhitespace(bytes[i] as number)) this.failUnexpected(i, 'the end of input');
          i++;
          break;
        }
      }
    }
    // Carry a number cut by the chunk end into the next chunk.
    const state = this.state;
    if (state >= State.NumberMinus && state <= State.NumberExponent) {
      this.numberText += bytes.toString('latin1', this.numberStart, end);
      this.numberStart = 0;
    }
  }

  feed(chunk: Uint8Array): void {
    if (this.failure !== undefined) throw this.failure.error;
    if (this.ended) throw new Error('JSON parser: feed() after end()');
    try {
      let buf = asBuffer(chunk);
      const overflow = this.base + buf.length > this.maxBytes;
      if (overflow) buf = buf.subarray(0, this.maxBytes - this.base);
      this.buf = buf;
      this.nextQuote = -1;
      this.nextBackslash = -1;
      this.consume(buf.length);
      this.base += buf.length;
      if (overflow) this.fail('limit_exceeded', this.base, `Input longer than ${this.maxBytes} bytes`, 'maxBytes');
    } catch (error) {
      this.failure = { error };
      throw error;
    } finally {
      this.buf = EMPTY;
    }
  }

  end(): unknown {
    if (this.failure !== undefined) throw this.failure.error;
    if (this.ended) return this.root;
    try {
      const state = this.state;
      if (this.containers.length === 0 && (state === State.NumberZero || state === State.NumberInteger || state === State.NumberFraction || state === State.NumberExponent)) {
        this.state = this.completeNumber(0);
      }
      if (this.state !== State.Done) {
        const base = this.base;
        this.fail('unexpected_end', base, base === 0 ? 'Empty input' : 'Input ends before the JSON value is complete');
      }
    } catch (error) {
      this.failure = { error };
      throw error;
    }
    this.ended = true;
    return this.root;
  }
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
