// One attempt of an embeddings request on one target: its inputs split into
// parts of at most the target's maxInputsPerCall, each part one upstream call
// (an HTTP exchange to {baseUrl}/embeddings, or the local provider), at most
// maxConcurrentCalls at a time, the vectors put back in input order. The
// parts are one attempt: the first part that fails aborts the others and the
// attempt fails with its error, so the dispatcher (./dispatcher.ts) retries
// the target or falls back to the next one for the whole request, as it does
// for a chat answer. Every vector of the request must have the same width
// (`dimensions` when the request gives it); a part whose vectors differ from
// an earlier part's is a bad answer like any other.
import type { DecodedEmbeddings } from '../embeddings/embeddings-answer-decode.ts';
import { decodeEmbeddingsAnswer } from '../embeddings/embeddings-answer-decode.ts';
import type { EmbeddingInput, EmbeddingsRequest, EncodingFormat, Vector } from '../embeddings/embeddings-types.ts';
import { splitInputs, upstreamEmbeddingsBody } from '../embeddings/embeddings-upstream.ts';
import type { AbortSource } from '../time/abort-source.ts';
import type { AttemptContext, DispatchTarget } from './dispatcher.ts';
import type { ExchangeSettings } from './exchange-settings.ts';
import { exchangeJsonBytes } from './json-exchange.ts';
import { ProviderKind } from './provider.ts';
import { UpstreamError } from '../errors/api-error.ts';
import { ClientAbortError } from './upstream-errors.ts';

/** An upstream that answers OpenAI's POST /embeddings. */
export interface HttpEmbedder {
  readonly kind: typeof ProviderKind.Http;
  /** The provider's exchange settings, aimed at {baseUrl}/embeddings. */
  readonly settings: ExchangeSettings;
  /** The encoding_format the gateway asks this upstream for (it decodes either answer). */
  readonly encoding: EncodingFormat;
}

/** A provider that embeds by itself (the demo). */
export interface LocalEmbedder {
  readonly kind: typeof ProviderKind.Local;
  /** One vector per input, in order; `dimensions`: their width, null for the provider's own. Rejects with the signal's reason when it aborts. */
  embed(inputs: readonly EmbeddingInput[], dimensions: number | null, signal: AbortSource): Promise<DecodedEmbeddings>;
}

export type EmbeddingsProvider = HttpEmbedder | LocalEmbedder;

/** One target of an embeddings alias, as a request's plan holds it. */
export interface EmbeddingsTarget extends DispatchTarget {
  readonly embedder: EmbeddingsProvider;
  /** The model name the upstream knows. */
  readonly model: string;
  /** The most inputs one upstream call carries. */
  readonly maxInputsPerCall: number;
  /** The request's `dimensions` is sent to this target (its model takes it). */
  readonly acceptsDimensions: boolean;
}

export interface EmbeddingsResult {
  /** One vector per input, in input order, all of one width. */
  readonly vectors: Vector[];
  /** The sum of the parts' usage.prompt_tokens; null when any part reported none. */
  readonly promptTokens: number | null;
  /** Upstream calls made (the parts). */
  readonly calls: number;
}

/** Why the other parts of a failed attempt were stopped (never reaches a client: the first failure does). */
const PART_FAILED = new Error('Another part of this embeddings request failed.');

/**
 * Embeds every input of `request` on `target`. Throws the first failed part's
 * error (the client's ApiError, or a ClientAbortError when the caller's signal
 * aborted); tells the target's breaker of success when every part answered.
 */
export async function embedOn(target: EmbeddingsTarget, attempt: AttemptContext, request: EmbeddingsRequest, maxConcurrentCalls: number): Promise<EmbeddingsResult> {
  const parent = attempt.signal;
  if (parent.aborted) throw new ClientAbortError(parent.reason);
  const parts = splitInputs(request.inputs.length, target.maxInputsPerCall);
  const run = new PartRun(target, attempt, request, parts);
  parent.addEventListener('abort', run, { once: true });
  try {
    const workers: Promise<void>[] = [];
    for (let i = 0; i < Math.min(maxConcurrentCalls, parts.length); i++) workers.push(run.work());
    await Promise.all(workers);
  } finally {
    parent.removeEventListener('abort', run);
  }
  if (run.failure !== undefined) throw parent.aborted ? new ClientAbortError(parent.reason) : run.failure.error;
  target.breaker.onSuccess();
  return { vectors: run.vectors, promptTokens: run.promptTokens, calls: parts.length };
}

/** The parts of one attempt, shared by its workers; an abort listener (no closure per part). */
class PartRun {
  readonly vectors: Vector[];
  promptTokens: number | null = 0;
  failure: { error: unknown } | undefined = undefined;
  readonly #target: EmbeddingsTarget;
  readonly #attempt: AttemptContext;
  readonly #request: EmbeddingsRequest;
  readonly #parts: ReadonlyArray<[number, number]>;
  readonly #controller = new AbortController();
  #next = 0;
  /** The width every vector must have: the request's dimensions, else the first part's. */
  #width: number | null;

  constructor(target: EmbeddingsTarget, attempt: AttemptContext, request: EmbeddingsRequest, parts: ReadonlyArray<[number, number]>) {
    this.#target = target;
    this.#attempt = attempt;
    this.#request = request;
    this.#parts = parts;
    this.vectors = new Array<Vector>(request.inputs.length);
    this.#width = target.acceptsDimensions ? request.dimensions : null;
  }

  /** The caller's signal aborted: every part stops. */
  handleEvent(): void {
    this.#controller.abort(this.#attempt.signal.reason);
  }

  /** Takes parts until none is left or one failed. */
  async work(): Promise<void> {
    while (this.failure === undefined && this.#next < this.#parts.length) {
      const [start, end] = this.#parts[this.#next++] as [number, number];
      try {
        const decoded = await this.#call(start, end);
        this.#place(decoded, start);
      } catch (error) {
        if (this.failure !== undefined) return;
        this.failure = { error };
        this.#controller.abort(PART_FAILED);
        return;
      }
    }
  }

  #call(start: number, end: number): Promise<DecodedEmbeddings> {
    const embedder = this.#target.embedder;
    const request = this.#request;
    const signal = this.#controller.signal;
    if (embedder.kind === ProviderKind.Local) {
      const dimensions = this.#target.acceptsDimensions ? request.dimensions : null;
      return embedder.embed(request.inputs.slice(start, end), dimensions, signal);
    }
    const body = upstreamEmbeddingsBody(request, start, end, { model: this.#target.model, encoding: embedder.encoding, dimensions: this.#target.acceptsDimensions });
    const call = { requestId: this.#attempt.requestId, signal, traceHeaders: this.#attempt.traceHeaders };
    return exchangeJsonBytes(embedder.settings, call, body).then((bytes) => decodeEmbeddingsAnswer(bytes, end - start, this.#width));
  }

  #place(decoded: DecodedEmbeddings, start: number): void {
    const { vectors } = decoded;
    // An earlier part fixed the width after this one was decoded against none.
    const width = vectors[0]?.length ?? 0;
    if (this.#width === null) this.#width = width;
    else if (width !== this.#width) throw widthMismatch(width, this.#width);
    for (let i = 0; i < vectors.length; i++) this.vectors[start + i] = vectors[i] as Vector;
    this.promptTokens = this.promptTokens === null || decoded.promptTokens === null ? null : this.promptTokens + decoded.promptTokens;
  }
}

function widthMismatch(width: number, expected: number): UpstreamError {
  return new UpstreamError('bad_upstream_response', `The upstream provider's embeddings answers have embeddings of ${width} dimensions in one call and ${expected} in another; every vector of a request must have the same width.`);
}
