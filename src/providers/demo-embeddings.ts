// The demo provider's embeddings: not a model, a deterministic stand-in so the
// embedded default answers without one. The same input (a text, or a list of
// token ids) always gives the same unit vector of the asked width: SHA-256 of
// the input seeds a small PRNG (xoshiro128**) whose draws, normalised, are
// the vector. Texts and token lists are hashed in separate domains, so "1"
// and [1] differ.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { EmbeddingInput } from '../embeddings/embeddings-types.ts';

const TEXT_DOMAIN = 0x74; // 't'
const TOKENS_DOMAIN = 0x6b; // 'k'

function seedOf(input: EmbeddingInput): Uint32Array {
  const hash = createHash('sha256');
  if (typeof input === 'string') {
    hash.update(Uint8Array.of(TEXT_DOMAIN));
    hash.update(input, 'utf8');
  } else {
    const bytes = Buffer.allocUnsafe(1 + 4 * input.length);
    bytes[0] = TOKENS_DOMAIN;
    for (let i = 0; i < input.length; i++) bytes.writeUInt32LE((input[i] as number) >>> 0, 1 + 4 * i);
    hash.update(bytes);
  }
  const digest = hash.digest();
  return Uint32Array.of(digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12));
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** xoshiro128**: the next 32-bit draw; advances `s`. */
function next(s: Uint32Array): number {
  const s0 = s[0] as number;
  const s1 = s[1] as number;
  const s2 = s[2] as number;
  const s3 = s[3] as number;
  const result = (Math.imul(rotl(Math.imul(s1, 5) >>> 0, 7), 9) >>> 0);
  const t = (s1 << 9) >>> 0;
  const n2 = (s2 ^ s0) >>> 0;
  const n3 = (s3 ^ s1) >>> 0;
  s[1] = (s1 ^ n2) >>> 0;
  s[0] = (s0 ^ n3) >>> 0;
  s[2] = (n2 ^ t) >>> 0;
  s[3] = rotl(n3, 11);
  return result;
}

/** The demo's vector width when a request gives no `dimensions`. */
export const DEMO_EMBEDDING_WIDTH = 256;
/** The widest vector the demo makes (OpenAI's widest model is 3,072): a bound on what one request costs it. */
export const DEMO_MAX_EMBEDDING_WIDTH = 4096;

/** A deterministic unit vector of `width` values for `input`: L2 norm 1 within float32 rounding. */
export function demoEmbedding(input: EmbeddingInput, width: number): Float32Array {
  if (!Number.isSafeInteger(width) || width < 1) throw new RangeError(`demoEmbedding: the width must be a positive integer; got ${width}.`);
  const state = seedOf(input);
  // An all-zero state would draw zeros for ever; SHA-256 makes it a 2^-128 chance, but it costs one test.
  if (state.every((word) => word === 0)) state[0] = 1;
  const draws = new Float64Array(width);
  let sum = 0;
  for (let i = 0; i < width; i++) {
    const x = next(state) / 2 ** 31 - 1; // [-1, 1)
    draws[i] = x;
    sum += x * x;
  }
  const vector = new Float32Array(width);
  if (sum === 0) {
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < width; i++) vector[i] = (draws[i] as number) * scale;
  return vector;
}

/** The demo's prompt-token estimate: UTF-8 bytes / 4 rounded up (at least 1) for a text; the count of a token list. */
export function demoPromptTokens(input: EmbeddingInput): number {
  if (typeof input !== 'string') return input.length;
  return Math.max(1, Math.ceil(Buffer.byteLength(input, 'utf8') / 4));
}
