// Building the value of one JSON string from its raw runs (bytes between escapes)
// and its escapes, with one decoder call per string where possible.
//
// Why not decode each run and concatenate: a string with an escape every few bytes
// (source code, or text a Python client sent with ensure_ascii) would make one
// decoder call and one rope node per escape, and the garbage dominated the parse.
// Short runs and escapes are copied into a scratch instead and decoded once; only
// long runs, where a native decode pays off, are decoded on their own.

import { Buffer } from 'node:buffer';
import { findStringContentFault, type StringContentFault } from './string-content.ts';

/** Runs longer than this are decoded natively instead of copied byte by byte. */
const SHORT_RUN_BYTES = 64;

/**
 * Decoded text that needs a second look: a control character (RFC 8259 section 7
 * says they must be escaped) or U+FFFD (what the decoder substitutes for invalid
 * UTF-8, though the input may hold a real one).
 */
const SUSPECT_TEXT = /[\u0000-\u001f\ufffd]/;

/**
 * Decodes raw string bytes[start, end), or returns the first fault in them. The
 * decoder never fails, so only suspect text gets the byte-level check.
 */
export function decodeStringBytes(bytes: Buffer, start: number, end: number): string | StringContentFault {
  if (start === end) return '';
  // An undefined encoding means UTF-8 and skips Buffer's encoding-name lookup.
  const text = bytes.toString(undefined, start, end);
  if (SUSPECT_TEXT.test(text)) {
    const fault = findStringContentFault(bytes, start, end);
    if (fault !== undefined) return fault;
  }
  return text;
}

/** Whether a Uint16Array stores its units little-endian here, as 'utf16le' decoding expects. */
const PLATFORM_LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** The string of `count` UTF-16 code units stored in `unitBytes` in the given byte order. */
export function unitsToString(unitBytes: Buffer, count: number, littleEndian: boolean = PLATFORM_LITTLE_ENDIAN): string {
  if (littleEndian) return unitBytes.toString('utf16le', 0, count * 2);
  return Buffer.from(unitBytes.subarray(0, count * 2)).swap16().toString('utf16le');
}

/** The scratch before a string needs one: never written, so shared. */
const EMPTY_UNITS = new Uint16Array(0);
const EMPTY_UNIT_BYTES = Buffer.alloc(0);

/**
 * The scratch holds UTF-16 code units, as the string will: a \u escape is one unit
 * whatever it is (JSON.parse keeps a lone surrogate as it is, and a pair of escapes
 * makes one character), and decoding UTF-16 is a copy, where V8's UTF-8 decoder
 * is slow on non-ASCII text (a client that escapes all of it sends only \u escapes).
 * One per parser, reused for each of its strings.
 */
export class StringAssembly {
  // Allocated on first use: most strings of a small body never need it.
  private units: Uint16Array = EMPTY_UNITS;
  private unitBytes: Buffer = EMPTY_UNIT_BYTES;
  private length = 0;
  // Text decoded before the units in scratch.
  private text = '';

  private reserve(extra: number): void {
    const length = this.length;
    if (length + extra <= this.units.length) return;
    const grown = new Uint16Array(Math.max(this.units.length * 2, length + extra, 256));
    grown.set(this.units.subarray(0, length));
    this.units = grown;
    this.unitBytes = Buffer.from(grown.buffer);
  }

  private flush(): void {
    if (this.length === 0) return;
    this.text += unitsToString(this.unitBytes, this.length);
    this.length = 0;
  }

  /** Appends raw string bytes[start, end), or returns their first fault (then the assembly is garbage). */
  appendRun(bytes: Buffer, start: number, end: number): StringContentFault | undefined {
    if (start === end) return undefined;
    if (end - start > SHORT_RUN_BYTES) {
      const decoded = decodeStringBytes(bytes, start, end);
      if (typeof decoded !== 'string') return decoded;
      this.flush();
      this.text += decoded;
      return undefined;
    }
    // UTF-8 never takes fewer bytes than UTF-16 code units.
    this.reserve(end - start);
    const units = this.units;
    let length = this.length;
    let k = start;
    for (; k < end; k++) {
      const byte = bytes[k] as number;
      if (byte < 0x20 || byte > 0x7f) break;
      units[length++] = byte;
    }
    this.length = length;
    if (k === end) return undefined;
    // A control character or a multi-byte sequence: check the rest, then transcode it.
    const fault = findStringContentFault(bytes, k, end);
    if (fault !== undefined) return { code: fault.code, index: fault.index + (k - start) };
    this.length = transcodeUtf8(bytes, k, end, units, length);
    return undefined;
  }

  /** Appends one UTF-16 code unit: from a two-character escape or a \u escape. */
  appendCodeUnit(unit: number): void {
    this.reserve(1);
    this.units[this.length++] = unit;
  }

  /** The string built so far; resets the assembly for the next string. */
  take(): string {
    let result: string;
    if (this.text === '') result = this.length === 0 ? '' : unitsToString(this.unitBytes, this.length);
    else {
      this.flush();
      result = this.text;
    }
    this.text = '';
    this.length = 0;
    return result;
  }
}

export function createStringAssembly(): StringAssembly {
  return new StringAssembly();
}

/** Writes the code units of well-formed UTF-8 bytes[start, end) at units[at]; returns the new end. */
function transcodeUtf8(bytes: Buffer, start: number, end: number, units: Uint16Array, at: number): number {
  let k = start;
  let n = at;
  while (k < end) {
    const lead = bytes[k] as number;
    if (lead < 0x80) {
      units[n++] = lead;
      k += 1;
    } else if (lead < 0xe0) {
      units[n++] = ((lead & 0x1f) << 6) | ((bytes[k + 1] as number) & 0x3f);
      k += 2;
    } else if (lead < 0xf0) {
      units[n++] = ((lead & 0x0f) << 12) | (((bytes[k + 1] as number) & 0x3f) << 6) | ((bytes[k + 2] as number) & 0x3f);
      k += 3;
    } else {
      const codePoint = (((lead & 0x07) << 18) | (((bytes[k + 1] as number) & 0x3f) << 12) | (((bytes[k + 2] as number) & 0x3f) << 6) | ((bytes[k + 3] as number) & 0x3f)) - 0x10000;
      units[n++] = 0xd800 | (codePoint >> 10);
      units[n++] = 0xdc00 | (codePoint & 0x3ff);
      k += 4;
    }
  }
  return n;
}

/** Strings up to this many bytes are looked up in the short-string cache. */
export const SHORT_STRING_BYTES = 32;
const CACHE_SLOTS = 512;

/**
 * Keys and short values repeat ("role", "content", "user", "function"): a small
 * cache keyed by a hash of the bytes hands back the same string object, which
 * saves the decode and lets V8 reuse the key it already internalized.
 * Returns undefined for bytes that are not printable ASCII (the caller takes the
 * checked path); strings longer than SHORT_STRING_BYTES must not be passed.
 */
export function createShortStringCache(): (bytes: Buffer, start: number, end: number) => string | undefined {
  const texts: string[] = new Array<string>(CACHE_SLOTS).fill('');
  return (bytes, start, end) => {
    const length = end - start;
    let hash = length;
    for (let k = start; k < end; k++) {
      const byte = bytes[k] as number;
      if (byte < 0x20 || byte > 0x7f) return undefined;
      hash = (Math.imul(hash, 31) + byte) | 0;
    }
    const slot = hash & (CACHE_SLOTS - 1);
    const known = texts[slot] as string;
    if (known.length === length) {
      let k = 0;
      while (k < length && known.charCodeAt(k) === bytes[start + k]) k++;
      if (k === length) return known;
    }
    const text = bytes.toString('latin1', start, end);
    texts[slot] = text;
    return text;
  };
}
