// The tokens inside a value: where a value starts (its limits, the observer's
// valueStart), and how a string, number or literal whose end the byte loop
// (parser.ts) has found becomes a JS value, a key or an error.

import { Buffer } from 'node:buffer';
import { Byte, VALUE_KINDS } from './json-grammar.ts';
import { numberFromBytes } from './number-value.ts';
import { createShortStringCache, decodeStringBytes, SHORT_STRING_BYTES, StringAssembly } from './string-assembly.ts';
import type { StringContentFault } from './string-content.ts';
import { JsonContainerStack, State } from './container-stack.ts';

/**
 * Shared by all parsers: it holds only strings equal to the bytes they were made
 * from, so no request can see another's data, and every request finds "role" and
 * "content" already there.
 */
const cachedShortString = createShortStringCache();

/** Fields and steps for the token in progress; the parser extends it. */
export abstract class JsonTokenScanner extends JsonContainerStack {
  // String in progress: offset of its first content byte, text decoded up to the
  // last escape, raw bytes of the current run held from earlier chunks.
  protected stringIsKey = false;
  protected contentStart = 0;
  protected runOffset = 0;
  protected stringHasEscape = false;
  protected readonly pieces: Uint8Array[] = [];
  protected readonly assembly = new StringAssembly();
  protected unicodeValue = 0;
  protected unicodeDigits = 0;

  // Number in progress: its start in `buf` and in the whole input, its text from earlier chunks.
  protected numberStart = 0;
  protected numberOffset = 0;
  protected numberText = '';

  // Literal in progress.
  protected literalText = '';
  protected literalIndex = 0;
  protected literalValue: boolean | null = null;

  protected failStringLimit(): never {
    const maxStringBytes = this.maxStringBytes;
    this.fail('limit_exceeded', this.contentStart + maxStringBytes, `String longer than ${maxStringBytes} bytes`, 'maxStringBytes');
  }

  /** Dispatches on the first byte of a value at buf[i]; returns the next state. */
  protected beginValue(i: number): State {
    const byte = this.buf[i] as number;
    const kind = VALUE_KINDS[byte];
    if (kind === undefined) this.failUnexpected(i, this.state === State.FirstValueOrArrayEnd ? "a value or ']'" : 'a value');
    const top = this.top;
    if (this.topIsArray && (top as unknown[]).length >= this.maxMembers) {
      this.fail('limit_exceeded', this.base + i, `Array with more than ${this.maxMembers} entries`, 'maxMembers');
    }
    if ((byte === Byte.OpenBrace || byte === Byte.OpenBracket) && this.containers.length >= this.maxDepth) {
      this.fail('limit_exceeded', this.base + i, `Nesting deeper than ${this.maxDepth}`, 'maxDepth');
    }
    const observer = this.observer;
    if (observer !== undefined) {
      if (top !== undefined) this.path.push(this.topIsArray ? (top as unknown[]).length : this.pendingKey);
      observer.valueStart?.(this.path, kind);
    }

    switch (byte) {
      case Byte.Quote:
        this.beginString(i, false);
        return State.String;
      case Byte.OpenBrace:
        this.open({}, false);
        return State.FirstKeyOrObjectEnd;
      case Byte.OpenBracket:
        this.open([], true);
        return State.FirstValueOrArrayEnd;
      case Byte.LowerT:
        return this.beginLiteral('true', true);
      case Byte.LowerF:
        return this.beginLiteral('false', false);
      case Byte.LowerN:
        return this.beginLiteral('null', null);
      default:
        this.numberStart = i;
        this.numberOffset = this.base + i;
        this.numberText = '';
        return byte === Byte.Minus ? State.NumberMinus : byte === Byte.Zero ? State.NumberZero : State.NumberInteger;
    }
  }

  protected beginLiteral(text: string, value: boolean | null): State {
    this.literalText = text;
    this.literalIndex = 1;
    this.literalValue = value;
    return State.Literal;
  }

  /** A key's opening quote at buf[i]. */
  protected beginKey(i: number): State {
    const memberCounts = this.memberCounts;
    const depth = this.containers.length;
    const count = (memberCounts[depth - 1] as number) + 1;
    if (count > this.maxMembers) this.fail('limit_exceeded', this.base + i, `Object with more than ${this.maxMembers} members`, 'maxMembers');
    memberCounts[depth - 1] = count;
    this.beginString(i, true);
    return State.String;
  }

  protected beginString(quote: number, isKey: boolean): void {
    this.stringIsKey = isKey;
    const contentStart = this.base + quote + 1;
    this.contentStart = contentStart;
    this.runOffset = contentStart;
    this.stringHasEscape = false;
  }

  protected failStringContent(fault: StringContentFault): never {
    const offset = this.runOffset + fault.index;
    if (fault.code === 'control_character') this.fail('unexpected_byte', offset, 'Unescaped control character in string');
    this.fail('invalid_utf8', offset, 'Invalid UTF-8 in string');
  }

  /** The raw run buf[from, to) with the pieces held from earlier chunks in front. */
  protected joinRun(from: number, to: number): Buffer {
    const pieces = this.pieces;
    pieces.push(this.buf.subarray(from, to));
    const joined = Buffer.concat(pieces);
    pieces.length = 0;
    return joined;
  }

  /** The text of a string that had no escape: its one run, buf[from, to). */
  protected decodeOnlyRun(from: number, to: number): string {
    let decoded: string | StringContentFault | undefined;
    if (this.pieces.length === 0) {
      const buf = this.buf;
      if (to - from <= SHORT_STRING_BYTES) decoded = cachedShortString(buf, from, to);
      if (decoded === undefined) decoded = decodeStringBytes(buf, from, to);
    } else {
      const joined = this.joinRun(from, to);
      decoded = decodeStringBytes(joined, 0, joined.length);
    }
    return typeof decoded === 'string' ? decoded : this.failStringContent(decoded);
  }

  /** Adds the run buf[from, to) to the string being assembled. */
  protected appendRun(from: number, to: number): void {
    let fault: StringContentFault | undefined;
    if (this.pieces.length === 0) fault = this.assembly.appendRun(this.buf, from, to);
    else {
      const joined = this.joinRun(from, to);
      fault = this.assembly.appendRun(joined, 0, joined.length);
    }
    if (fault !== undefined) this.failStringContent(fault);
  }

  protected completeString(text: string): State {
    if (!this.stringIsKey) return this.completeScalar(text);
    if (this.rejectDuplicateKeys && Object.hasOwn(this.top as Record<string, unknown>, text)) {
      this.fail('duplicate_key', this.contentStart - 1, 'Duplicate object key');
    }
    this.pendingKey = text;
    this.observer?.key?.(this.path, text);
    return State.Colon;
  }

  /** The number ends before buf[i]. */
  protected completeNumber(i: number): State {
    let value: number;
    if (this.numberText === '') value = numberFromBytes(this.buf, this.numberStart, i);
    else {
      const text = this.numberText + this.buf.toString('latin1', this.numberStart, i);
      this.numberText = '';
      value = numberFromBytes(Buffer.from(text, 'latin1'), 0, text.length);
    }
    if (value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY) {
      this.fail('number_out_of_range', this.numberOffset, 'Number beyond the largest double (1.7976931348623157e308)', undefined, this.currentPath());
    }
    return this.completeScalar(value);
  }
}
