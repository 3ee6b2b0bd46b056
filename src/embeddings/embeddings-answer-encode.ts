// The client's embeddings answer, written in pieces so a 33.5 MB answer is
// never one string: the writer sends each piece and waits for `drain`.
// Keys in OpenAI's order:
// {"object":"list","data":[{"object":"embedding","index":0,"embedding":...}],
//  "model":"<alias>","usage":{"prompt_tokens":N,"total_tokens":N}}
//
// Float output prints each value with JSON.stringify: a float32 widened to a
// double parses back to the same float32, a double to the same double; -0
// keeps its sign.
// Printing numbers is the cost of this path (about 250 ns a value, mostly the
// shortest-digits conversion); JSON.stringify of a plain array measured about
// twice as fast as a typed array's join, which prints the same digits.
// Base64 output is the float32 bytes, little-endian (encodeBase64Vector).
import { encodeBase64Vector, vectorValues } from './embeddings-answer-decode.ts';
import type { EncodingFormat, Vector } from './embeddings-types.ts';

/** About this many characters a piece: large enough to cost few writes, small enough to bound the memory a slow client pins. */
export const PIECE_CHARS = 64 * 1024;

function embeddingJson(vector: Vector, encoding: EncodingFormat): string {
  if (encoding === 'base64') return `"${encodeBase64Vector(vector)}"`;
  const v = vectorValues(vector);
  return hasNegativeZero(v) ? `[${Array.from(v, numberJson).join(',')}]` : JSON.stringify(Array.from(v));
}

/** JSON.stringify prints -0 as 0: the sign bit would be lost, so such a vector is printed value by value. */
function hasNegativeZero(v: Float32Array | Float64Array): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] === 0 && 1 / (v[i] as number) < 0) return true;
  return false;
}

function numberJson(x: number): string {
  return Object.is(x, -0) ? '-0' : JSON.stringify(x);
}

/** The client's answer, in pieces of about PIECE_CHARS, keys in OpenAI's order. */
export function* embeddingsAnswerPieces(vectors: readonly Vector[], encoding: EncodingFormat, model: string, promptTokens: number): Generator<string> {
  let piece = '{"object":"list","data":[';
  for (let i = 0; i < vectors.length; i++) {
    piece += `${i === 0 ? '' : ','}{"object":"embedding","index":${i},"embedding":${embeddingJson(vectors[i] as Vector, encoding)}}`;
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}],"model":${JSON.stringify(model)},"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens}}}`;
}
