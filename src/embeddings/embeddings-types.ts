// The embeddings request as the gateway holds it once validated, and the
// vectors as decoded from an upstream's answer. Pure data: the validator
// (embeddings-request-validator.ts) builds a request, the codecs
// (embeddings-answer-decode.ts, embeddings-answer-encode.ts) carry vectors.

import { Buffer } from 'node:buffer';

/** One input: a text, or a list of token ids. */
export type EmbeddingInput = string | readonly number[];

/** The form the client sent `input` in; the upstream is sent the same form. */
export const InputShape = { String: 'string', Strings: 'strings', Tokens: 'tokens', TokenArrays: 'token_arrays' } as const;
export type InputShape = (typeof InputShape)[keyof typeof InputShape];

export type EncodingFormat = 'float' | 'base64';

export interface EmbeddingsRequest {
  readonly model: string;
  /** Always a list: the single forms (a string, one token array) are one input. */
  readonly inputs: readonly EmbeddingInput[];
  readonly shape: InputShape;
  /** The client's, default 'float' (OpenAI's default). */
  readonly encoding: EncodingFormat;
  readonly encodingGiven: boolean;
  readonly dimensions: number | null;
  readonly user: string | null;
  /** Upper bound of the input tokens: per input, UTF-8 bytes of a text or its token count, plus INPUT_OVERHEAD. */
  readonly promptBound: number;
}

/** The request bounds of the config's `embeddings` section. */
export interface EmbeddingLimits {
  maxInputs: number;
  maxInputBytes: number;
  maxInputTokens: number;
  maxTotalBytes: number;
}

/** Added to each input's prompt bound: a tokenizer may add a start or end token. */
export const INPUT_OVERHEAD = 4;

/** One input's share of a request's prompt bound (EmbeddingsRequest.promptBound): its UTF-8 bytes or its token count, plus INPUT_OVERHEAD. */
export function inputBound(input: EmbeddingInput): number {
  return (typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length) + INPUT_OVERHEAD;
}

/** A token id counts as many bytes towards embeddings.maxTotalBytes. */
export const TOKEN_BYTES = 4;

/** The largest token id taken: OpenAI's tokenizers fit in a signed 32-bit integer. */
export const MAX_TOKEN_ID = 2_147_483_647;

/**
 * An upstream's base64 vector, checked (canonical, finite float32 values) and
 * kept as its text: most clients ask for base64, which is then this text
 * unchanged; a client asking for floats has it decoded as it is written.
 * `length` is its width in values, as a typed array's.
 */
export class Base64Vector {
  readonly text: string;
  readonly length: number;
  constructor(text: string, length: number) {
    this.text = text;
    this.length = length;
  }
}

/**
 * A vector as decoded: the upstream's base64 (float32 bits), float32 values
 * (a local provider) or the upstream's doubles (from a float answer), so each
 * conversion to the client's encoding is exact.
 */
export type Vector = Base64Vector | Float32Array | Float64Array;
