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
import type { Vector } from './embeddings-types.ts';

export interface DecodedEmbeddings {
  /** vectors[i] answers input i of the call. */
  readonly vectors: Vector[];
  /** usage.prompt_tokens, or null when absent. */
  readonly promptTokens: number | null;
}

/** Typed arrays use the host's byte order; base64 vectors are little-endian. */
const BIG_ENDIAN_HOST = endianness() === 'BE';
const EQUALS = 0x3d;

/** The float32 values of `s`, or null when `s` is not canonical base64 of a whole number of them. */
export function decodeBase64Vector(s: string): Float32Array | null {
  const n = s.length;
  if (n % 4 !== 0) return null;
  const padding = n === 0 || s.charCodeAt(n - 1) !== EQUALS ? 0 : s.charCodeAt(n - 2) === EQUALS ? 2 : 1;
  const bytes = (n / 4) * 3 - padding;
  if (bytes % 4 !== 0) return null;
  // A buffer of its own: pooled ones may start at an offset a Float32Array cannot take.
  const buffer = Buffer.allocUnsafeSlow(bytes);
  if (buffer.write(s, 0, bytes, 'base64') !== bytes) return null;
  // Buffer's decoder is lenient (it skips unknown characters, takes the URL-safe
  // alphabet, ignores stray bits), so the check is that the bytes encode back to
  // exactly `s`: then `s` is their canonical encoding. Native encode and compare
  // run at several times the speed of a scan or a regular expression in script.
  if (buffer.toString('base64') !== s) return null;
  if (BIG_ENDIAN_HOST) buffer.swap32();
  return new Float32Array(buffer.buffer, buffer.byteOffset, bytes / 4);
}

/** The little-endian float32 bytes of `v` in base64; a double is rounded as Math.fround rounds it. */
export function encodeBase64Vector(v: Vector): string {
  // Converting to a Float32Array rounds each value as Math.fround does.
  const floats = v instanceof Float32Array ? v : new Float32Array(v);
  const bytes = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
  return (BIG_ENDIAN_HOST ? Buffer.from(bytes).swap32() : bytes).toString('base64');
}

function fault(problem: string, cause?: unknown): UpstreamError {
  return new UpstreamError('bad_upstream_response', `The upstream provider's embeddings answer ${problem}.`, cause === undefined ? {} : { cause });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The position of the first value that is not finite, or -1. */
function firstNonFinite(v: Vector): number {
  for (let j = 0; j < v.length; j++) {
    const x = v[j] as number;
    // x - x is NaN for NaN and both infinities, 0 for every finite x.
    if (x - x !== 0) return j;
  }
  return -1;
}

function vectorOf(embedding: unknown, at: number): Vector {
  if (typeof embedding === 'string') {
    const floats = decodeBase64Vector(embedding);
    if (floats === null) throw fault(`has an 'embedding' that is not base64 of little-endian float32 values (data[${at}])`);
    const bad = firstNonFinite(floats);
    if (bad >= 0) throw fault(`has a value that is not a finite number (data[${at}].embedding[${bad}])`);
    return floats;
  }
  if (!Array.isArray(embedding)) throw fault(`has an 'embedding' that is neither an array of numbers nor a base64 string (data[${at}])`);
  const numbers: readonly unknown[] = embedding;
  const doubles = new Float64Array(numbers.length);
  for (let j = 0; j < numbers.length; j++) {
    const x = numbers[j];
    // JSON.parse reads 1e999 as Infinity.
    if (typeof x !== 'number' || x - x !== 0) throw fault(`has a value that is not a finite number (data[${at}].embedding[${j}])`);
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
export function decodeEmbeddingsAnswer(text: string, count: number, width: number | null): DecodedEmbeddings {
  let root: unknown;
  try {
    root = JSON.parse(text);
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
