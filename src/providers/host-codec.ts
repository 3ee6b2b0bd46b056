// A host's codec (../api/providers.ts) as the request path's codec: what it
// returns is checked like an upstream's own JSON (../chat/completion-response.ts
// normalises it, so a malformed answer is the same 502 naming the field), a
// refusal becomes the client's 400 naming the parameter, and a stream in which
// no chunk finished is truncated. Anything the host's code throws that is not
// the gateway's own ApiError becomes a 502 with a generic message; its cause
// names the provider type, the codec's step and the thrown value's class, but
// never its text, which may quote the upstream's body.
import type { ChatMessage as HostMessage, ChatRequest as HostRequest, ProviderCodec as HostCodec, ServerSentEvent, StreamDecoder as HostStreamDecoder, ChatCompletionChunk as HostChunk } from '../api/providers.ts';
import { normalizeChunk, normalizeCompletion } from '../chat/completion-response.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatRequest } from '../chat/types.ts';
import { ApiError, InvalidRequestError } from '../errors/api-error.ts';
import type { ProviderCodec, StreamDecoder } from '../upstream/provider.ts';
import { badUpstreamResponseError, upstreamStreamTruncatedError } from '../upstream/upstream-errors.ts';
import { FailureKind, noteFailureCause } from '../upstream/failure-cause.ts';

/** The named keys of T, without its index signature. */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// A host codec is written against the public request: every field the gateway
// may hand it (a new optional request field included) must be declared there,
// or a codec built from the declared fields would drop it unseen. A field
// missing from the public type fails the build here.
const requestFieldsDeclared: Same<Exclude<NamedKeys<ChatRequest>, keyof HostRequest>, never> = true;
const messageFieldsDeclared: Same<Exclude<NamedKeys<ChatMessage>, keyof HostMessage>, never> = true;
void requestFieldsDeclared;
void messageFieldsDeclared;

const CODEC_FAILED = "The upstream provider's answer could not be translated.";

/** The cause logged with a host codec's failure: where it failed and the class of what was thrown. */
export class HostCodecError extends Error {
  override name = 'HostCodecError';
  /** The class of what was thrown ("TypeError", or its typeof for a non-Error), or "wrong_return". */
  readonly thrownClass: string;
  /** `expected`: set when the step returned something other than it, rather than throwing. */
  constructor(type: string, step: string, thrown: unknown, expected?: string) {
    const what = expected !== undefined ? 'wrong_return' : thrown instanceof Error ? thrown.name : thrown === null ? 'null' : typeof thrown;
    super(expected !== undefined ? `provider type "${type}": the codec's ${step} did not return ${expected}` : `provider type "${type}": the codec's ${step} threw ${what}`);
    this.thrownClass = what;
  }
}

/** The 502 for what a host codec threw; the operator's "upstream failed" line
 * says bad_response with the step and the thrown class, e.g. "codec.decode:TypeError". */
function failure(type: string, step: string, thrown: unknown, expected?: string): ApiError {
  if (thrown instanceof ApiError) return thrown;
  const cause = new HostCodecError(type, step, thrown, expected);
  const error = badUpstreamResponseError(CODEC_FAILED, cause);
  noteFailureCause(error, { kind: FailureKind.BadResponse, detail: `codec.${step}:${cause.thrownClass}`, address: null });
  return error;
}

/** What the host's `step` returned; what it threw becomes that step's 502. */
function ask<T>(type: string, step: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw failure(type, step, error);
  }
}

function wrongReturn(type: string, step: string, expected: string): ApiError {
  return failure(type, step, undefined, expected);
}

/** The codec a host adapter's create returned, checked for its parts; throws a TypeError naming what is missing. */
export function checkHostCodec(type: string, name: string, codec: unknown): HostCodec {
  const where = `provider "${name}" (type "${type}"): the adapter's create`;
  if (typeof codec !== 'object' || codec === null) throw new TypeError(`${where} must return a codec object ({ encode, decode, streamDecoder }).`);
  const c = codec as Record<string, unknown>;
  for (const part of ['encode', 'decode', 'streamDecoder']) {
    if (typeof c[part] !== 'function') throw new TypeError(`${where} returned a codec without ${part}: it must be a function.`);
  }
  for (const part of ['requestHeaders', 'refusal', 'endpoint']) {
    if (c[part] !== undefined && typeof c[part] !== 'function') throw new TypeError(`${where} returned a codec whose ${part} is not a function: leave it out or make it one.`);
  }
  return codec as HostCodec;
}

export class HostCodecAdapter implements ProviderCodec {
  readonly #type: string;
  readonly #codec: HostCodec;

  constructor(type: string, codec: HostCodec) {
    this.#type = type;
    this.#codec = codec;
  }

  encode(request: ChatRequest, stream: boolean): string {
    const body: unknown = ask(this.#type, 'encode', () => this.#codec.encode(request, stream));
    if (typeof body !== 'string') throw wrongReturn(this.#type, 'encode', 'a string');
    return body;
  }

  decode(text: string, request: ChatRequest): ChatCompletion {
    const answer: unknown = ask(this.#type, 'decode', () => this.#codec.decode(text, request));
    return normalizeCompletion(answer);
  }

  streamDecoder(request: ChatRequest): StreamDecoder {
    const decoder: HostStreamDecoder = ask(this.#type, 'streamDecoder', () => this.#codec.streamDecoder(request));
    if (typeof decoder !== 'object' || decoder === null || typeof decoder.push !== 'function' || typeof decoder.end !== 'function') {
      throw wrongReturn(this.#type, 'streamDecoder', 'a decoder ({ push, end })');
    }
    return new HostStreamDecoderAdapter(this.#type, decoder);
  }

  requestHeaders(request: ChatRequest): Readonly<Record<string, string>> | undefined {
    const own = this.#codec.requestHeaders;
    if (own === undefined) return undefined;
    const headers: unknown = ask(this.#type, 'requestHeaders', () => own.call(this.#codec, request));
    if (headers === undefined) return undefined;
    if (typeof headers !== 'object' || headers === null || !Object.values(headers).every((v) => typeof v === 'string')) {
      throw wrongReturn(this.#type, 'requestHeaders', 'an object of header strings');
    }
    return headers as Readonly<Record<string, string>>;
  }

  refusal(request: ChatRequest): InvalidRequestError | null {
    const own = this.#codec.refusal;
    if (own === undefined) return null;
    const refusal: unknown = ask(this.#type, 'refusal', () => own.call(this.#codec, request));
    if (refusal === null || refusal === undefined) return null;
    const r = refusal as { param?: unknown; message?: unknown };
    if (typeof r.param !== 'string' || typeof r.message !== 'string' || r.message === '') {
      throw wrongReturn(this.#type, 'refusal', 'null or { param, message }');
    }
    return new InvalidRequestError(r.message, r.param === '' ? null : r.param, 'unsupported_parameter');
  }

  endpoint(request: ChatRequest): string | undefined {
    const own = this.#codec.endpoint;
    if (own === undefined) return undefined;
    const url: unknown = ask(this.#type, 'endpoint', () => own.call(this.#codec, request));
    if (url !== undefined && typeof url !== 'string') throw wrongReturn(this.#type, 'endpoint', 'a URL string or undefined');
    return url;
  }
}

/** The host's decoder, its chunks checked as they come; a stream that ends with no finish_reason is truncated. */
class HostStreamDecoderAdapter implements StreamDecoder {
  readonly #type: string;
  readonly #decoder: HostStreamDecoder;
  readonly #pending: HostChunk[] = [];
  #finished = false;

  constructor(type: string, decoder: HostStreamDecoder) {
    this.#type = type;
    this.#decoder = decoder;
  }

  get done(): boolean {
    return this.#decoder.done === true;
  }

  push(event: ServerSentEvent, out: ChatCompletionChunk[]): void {
    try {
      this.#decoder.push(event, this.#pending);
    } catch (error) {
      this.#pending.length = 0;
      throw failure(this.#type, 'push', error);
    }
    this.#drain(out);
  }

  end(out: ChatCompletionChunk[]): void {
    try {
      this.#decoder.end(this.#pending);
    } catch (error) {
      this.#pending.length = 0;
      throw failure(this.#type, 'end', error);
    }
    this.#drain(out);
    if (!this.#finished) throw upstreamStreamTruncatedError();
  }

  #drain(out: ChatCompletionChunk[]): void {
    try {
      for (const raw of this.#pending) {
        const chunk = normalizeChunk(raw);
        if (chunk.choices.some((choice) => choice.finish_reason !== null)) this.#finished = true;
        out.push(chunk);
      }
    } finally {
      this.#pending.length = 0;
    }
  }
}
