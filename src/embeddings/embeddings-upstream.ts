// What the gateway sends an upstream for (part of) an embeddings request, and
// how a request too large for one call is split. Pure: the dispatcher sends
// the bodies and joins the answers in the parts' order.
import { InputShape, type EmbeddingsRequest, type EncodingFormat } from './embeddings-types.ts';

/** The target's side of the body: its model, the encoding it is asked for, whether it takes `dimensions`. */
export interface EmbeddingsTargetBody {
  readonly model: string;
  readonly encoding: EncodingFormat;
  readonly dimensions: boolean;
}

/**
 * The upstream body for inputs [start, end) of `request`. A single string
 * or a single token array is sent as the client gave it (one input, never
 * split); a list form stays a list, so the answer's indices are 0..end-start-1.
 * `dimensions` only to a target that takes it; `user` as the client gave it.
 */
export function upstreamEmbeddingsBody(request: EmbeddingsRequest, start: number, end: number, target: EmbeddingsTargetBody): string {
  if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start < end && end <= request.inputs.length)) {
    throw new RangeError(`upstreamEmbeddingsBody: [${start}, ${end}) is not a part of ${request.inputs.length} inputs.`);
  }
  const single = request.shape === InputShape.String || request.shape === InputShape.Tokens;
  const body: Record<string, unknown> = {
    model: target.model,
    input: single ? request.inputs[0] : request.inputs.slice(start, end),
    encoding_format: target.encoding,
  };
  if (target.dimensions && request.dimensions !== null) body['dimensions'] = request.dimensions;
  if (request.user !== null) body['user'] = request.user;
  return JSON.stringify(body);
}

/** Splits n inputs into [start, end) parts of at most `max` each, in order. */
export function splitInputs(n: number, max: number): Array<[number, number]> {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`splitInputs: the count of inputs must be a positive integer; got ${n}.`);
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`splitInputs: the inputs per call must be a positive integer; got ${max}.`);
  const parts: Array<[number, number]> = [];
  for (let start = 0; start < n; start += max) parts.push([start, Math.min(start + max, n)]);
  return parts;
}
