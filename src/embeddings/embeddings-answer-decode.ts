// An upstream's embeddings answer, decoded strictly into vectors, and the
// base64 codec of one vector. Hot path: a 2,048 x 3,072 answer is 33.5 MB of
// base64 or about 60 MB of numbers.
//
// OpenAI's answer: {"data":[{"index":i,"embedding":[...] | "base64"}, ...],
// "usage":{"prompt_tokens":n}}. Every vector the gateway passes on is checked:
// one per input, each index once, all of one width, every value finite
// (JSON cannot carry NaN or infinities). Anything else is the upstream's 502
// bad_upstream_response, whose message gives counts, widths and positions,
// never the upstream's content.
//
// Base64 is OpenAI's: the standard alphabet with `=` padding, little-endian
// float32, a whole number of floats. Only the canonical encoding is taken:
// anything else (another character, missing or stray padding, bits past the
// data in the last character) is a sign of a broken encoder, and Buffer's
// lenient decoder would turn it into wrong vectors silently.
import { Buffer } from 'node:buffer';
import { endianness } from 'node:os';
import { UpstreamError } from '../errors/api-error.ts';
import { Base64Vector, type Vector } from './embeddings-types.ts';

export interface DecodedEmbeddings {
  /** vectors[i] answers input i of the call. */
  readonly vectors: Vector[];
  /** usage.prompt_tokens, or null when absent. */
  readonly promptTokens: number | null;
}

/** Typed arrays use the host's byte order; base64 vectors are little-endian. */
const BIG_ENDIAN_HOST = endianness() === 'BE';
const EQUALS = 0x3d;

/** Where base64 vectors are decoded to be checked: one buffer, grown as needed, so a
 * 2,048-vector answer makes no buffer per vector (its text is what is kept). */
let scratch = Buffer.allocUnsafeSlow(0);
let scratchWords = new Uint32Array(0);
/** The widest vector a request may ask for (MAX_DIMENSIONS float32 values). */
const MAX_SCRATCH_BYTES = 65_536 * 4;

/**
 * Decodes `s` into the scratch buffer, float32 values in the host's byte
 * order: how many, or -1 when `s` is not canonical base64 of a whole number
 * of them.
 */
function decodeIntoScratch(s: string): number {
  const n = s.length;
  if (n % 4 !== 0) return -1;
  const padding = n === 0 || s.charCodeAt(n - 1) !== EQUALS ? 0 : s.charCodeAt(n - 2) === EQUALS ? 2 : 1;
  const bytes = (n / 4) * 3 - padding;
  if (bytes % 4 !== 0) return -1;
  // It grows to the widest vector a request may ask for, no further: a longer string (a
  // broken or hostile upstream's) gets a buffer that the next decode drops.
  if (scratch.length < bytes || scratch.length > MAX_SCRATCH_BYTES) {
    // A buffer of its own (never pooled): it starts at offset 0, as the word view needs.
    scratch = Buffer.allocUnsafeSlow(Math.max(bytes, Math.min(scratch.length * 2, MAX_SCRATCH_BYTES)));
    scratchWords = new Uint32Array(scratch.buffer, scratch.byteOffset, scratch.length >>> 2);
  }
  if (scratch.write(s, 0, bytes, 'base64') !== bytes) return -1;
  // Buffer's decoder is lenient (it skips unknown characters, takes the URL-safe
  // alphabet, ignores stray bits), so the check is that the bytes encode back to
  // exactly `s`: then `s` is their canonical encoding. Native encode and compare
  // run at several times the speed of a scan or a regular expression in script.
  if (scratch.toString('base64', 0, bytes) !== s) return -1;
  if (BIG_ENDIAN_HOST) scratch.subarray(0, bytes).swap32();
  return bytes / 4;
}

/** The float32 values of `s`, or null when `s` is not canonical base64 of a whole number of them. */
export function decodeBase64Vector(s: string): Float32Array | null {
  const count = decodeIntoScratch(s);
  if (count < 0) return null;
  return new Float32Array(scratch.buffer.slice(scratch.byteOffset, scratch.byteOffset + count * 4));
}

/** The little-endian float32 bytes of `v` in base64; a double is rounded as Math.fround rounds it. */
export function encodeBase64Vector(v: Vector): string {
  if (v instanceof Base64Vector) return v.text;
  // Converting to a Float32Array rounds each value as Math.fround does.
  const floats = v instanceof Float32Array ? v : new Float32Array(v);
  const bytes = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
  return (BIG_ENDIAN_HOST ? Buffer.from(bytes).swap32() : bytes).toString('base64');
}

/** The values of `v` as numbers: a base64 vector decoded (it was checked when it arrived). */
export function vectorValues(v: Vector): Float32Array | Float64Array {
  return v instanceof Base64Vector ? (decodeBase64Vector(v.text) as Float32Array) : v;
}

/** UTF-8's byte order mark, which a UTF-8 decoder drops and Latin-1 would keep (JSON.parse refuses it). */
function hasByteOrderMark(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** The least magnitude Math.fround rounds to an infinity: 2^128 - 2^103. */
const FLOAT32_BOUND = 2 ** 128 - 2 ** 103;

/** Bits 23 to 30 all set: an infinity or a NaN. */
const FLOAT32_EXPONENT = 0x7f800000;

/** The position of the first of the scratch's `count` float32 values that is not finite, or -1. */
function firstNonFiniteInScratch(count: number): number {
  const words = scratchWords;
  for (let j = 0; j < count; j++) if (((words[j] as number) & FLOAT32_EXPONENT) === FLOAT32_EXPONENT) return j;
  return -1;
}

function fault(problem: string, cause?: unknown): UpstreamError {
  return new UpstreamError('bad_upstream_response', `The upstream provider's embeddings answer ${problem}.`, cause === undefined ? {} : { cause });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function vectorOf(embedding: unknown, at: number): Vector {
  if (typeof embedding === 'string') {
    const count = decodeIntoScratch(embedding);
    if (count < 0) throw fault(`has an 'embedding' that is not base64 of little-endian float32 values (data[${at}])`);
    const bad = firstNonFiniteInScratch(count);
    if (bad >= 0) throw fault(`has a value that is not a finite number (data[${at}].embedding[${bad}])`);
    return new Base64Vector(embedding, count);
  }
  if (!Array.isArray(embedding)) throw fault(`has an 'embedding' that is neither an array of numbers nor a base64 string (data[${at}])`);
  const numbers: readonly unknown[] = embedding;
  const doubles = new Float64Array(numbers.length);
  for (let j = 0; j < numbers.length; j++) {
    const x = numbers[j];
    if (typeof x !== 'number') throw fault(`has a value that is not a finite number (data[${at}].embedding[${j}])`);
    // JSON.parse reads 1e999 as Infinity; a value past float32's range would be an infinity in
    // base64. The comparison is false for NaN and the infinities too.
    if (!(x < FLOAT32_BOUND && x > -FLOAT32_BOUND)) throw fault(`has a value outside the range of a float32 (data[${at}].embedding[${j}])`);
    doubles[j] = x;
  }
  return doubles;
}

function promptTokensOf(usage: unknown): number | null {
  if (usage === undefined || usage === null) return null;
  if (!isObject(usage)) throw fault("has a 'usage' that is not an object");
  const tokens = usage['prompt_tokens'];
  if (tokens === undefined || tokens === null) return null;
  if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens) || tokens < 0) throw fault("has a 'usage.prompt_tokens' that is not a non-negative integer");
  return tokens;
}

/**
 * One upstream answer for `count` inputs, its vectors in input order.
 * `width`: the width every vector must have (the request's dimensions, or a
 * previous part's), null: any, but all equal. Throws UpstreamError
 * bad_upstream_response naming the fault.
 */
export function decodeEmbeddingsAnswer(answer: Buffer | string, count: number, width: number | null): DecodedEmbeddings {
  let root: unknown;
  try {
    // Bytes are read as Latin-1, not UTF-8: twice as fast on tens of MB, and the
    // same JSON, since every byte of UTF-8's multi-byte characters is above
    // 0x7f, so they can only sit inside strings, which stay strings. What the
    // gateway reads (numbers, base64, indices, usage) is ASCII, so it is read
    // exactly; other text (the model's name) would be garbled, and is not read.
    root = JSON.parse(typeof answer === 'string' ? answer : answer.toString('latin1', hasByteOrderMark(answer) ? 3 : 0));
  } catch (error) {
    throw new UpstreamError('bad_upstream_response', 'The upstream provider returned a response that is not valid JSON.', { cause: error });
  }
  if (!isObject(root) || !Array.isArray(root['data'])) throw fault("has no 'data' array");
  const data: readonly unknown[] = root['data'];
  if (data.length !== count) throw fault(`holds ${data.length} embeddings for ${count} inputs`);
  const vectors: (Vector | undefined)[] = new Array<Vector | undefined>(count).fill(undefined);
  let expected = width;
  for (let i = 0; i < count; i++) {
    const entry = data[i];
    if (!isObject(entry)) throw fault(`has an entry that is not an object (data[${i}])`);
    const index = entry['index'];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) throw fault(`has an 'index' that is not an integer from 0 to ${count - 1} (data[${i}])`);
    if (vectors[index] !== undefined) throw fault(`has index ${index} more than once (data[${i}])`);
    const vector = vectorOf(entry['embedding'], i);
    if (vector.length === 0) throw fault(`has an empty 'embedding' (data[${i}])`);
    if (expected === null) expected = vector.length;
    else if (vector.length !== expected) throw fault(`has an embedding of ${vector.length} dimensions where ${expected} were expected (data[${i}])`);
    vectors[index] = vector;
  }
  // count entries, each index in 0..count-1 at most once: every slot is filled.
  return { vectors: vectors as Vector[], promptTokens: promptTokensOf(root['usage']) };
}
