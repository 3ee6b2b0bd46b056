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
import { inputBound, type EmbeddingInput, type EmbeddingsRequest, type EncodingFormat, type Vector } from '../embeddings/embeddings-types.ts';
import { EMBEDDING_ANSWER_BYTES_PER_INPUT } from '../config/provider-defaults.ts';
import type { Price } from '../config/config.ts';
import { setMaxListeners } from 'node:events';
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
  /** The widest vector it makes: a larger `dimensions` is refused before it is asked. */
  readonly maxDimensions: number;
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

/** The parts one attempt's target answered: at its price, as its provider bills them. */
export interface BilledAttempt {
  readonly price: Price | null;
  /** Their usage.prompt_tokens, or their inputs' bound for a part that reported none. */
  promptTokens: number;
}

/**
 * What the upstreams billed for one request, over all its attempts: every part
 * answered counts, in a failed or retried attempt too (a provider bills each
 * call it answered, whatever happened to the others), at the price of the
 * target that answered it.
 */
export class EmbeddingsBill {
  readonly attempts: BilledAttempt[] = [];
  /** Some answered part reported no usage: its tokens are its inputs' bound. */
  estimated = false;

  /** The attempt about to run on a target of price `price`. */
  open(price: Price | null): BilledAttempt {
    const attempt: BilledAttempt = { price, promptTokens: 0 };
    this.attempts.push(attempt);
    return attempt;
  }

  /** A part of `attempt` answered: inputs [start, end) of `inputs`. */
  add(attempt: BilledAttempt, decoded: DecodedEmbeddings, inputs: readonly EmbeddingInput[], start: number, end: number): void {
    if (decoded.promptTokens !== null) {
      attempt.promptTokens += decoded.promptTokens;
      return;
    }
    this.estimated = true;
    for (let i = start; i < end; i++) attempt.promptTokens += inputBound(inputs[i] as EmbeddingInput);
  }

  get promptTokens(): number {
    let sum = 0;
    for (const a of this.attempts) sum += a.promptTokens;
    return sum;
  }
}

/** Why the other parts of a failed attempt were stopped (never reaches a client: the first failure does). */
const PART_FAILED = new Error('Another part of this embeddings request failed.');

/**
 * Embeds every input of `request` on `target`. Throws the first failed part's
 * error (the client's ApiError, or a ClientAbortError when the caller's signal
 * aborted); tells the target's breaker of success when every part answered.
 */
export async function embedOn(target: EmbeddingsTarget, attempt: AttemptContext, request: EmbeddingsRequest, maxConcurrentCalls: number, bill: EmbeddingsBill): Promise<EmbeddingsResult> {
  const parent = attempt.signal;
  if (parent.aborted) throw new ClientAbortError(parent.reason);
  const parts = splitInputs(request.inputs.length, target.maxInputsPerCall);
  const run = new PartRun(target, attempt, request, parts, bill);
  // Each part's exchange listens on the attempt's signal: as many as run at once.
  setMaxListeners(maxConcurrentCalls + 1, run.signal);
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
  readonly #bill: EmbeddingsBill;
  readonly #billed: BilledAttempt;
  readonly #controller = new AbortController();
  #next = 0;
  /** The width every vector must have: the request's dimensions, else the first part's. */
  #width: number | null;

  constructor(target: EmbeddingsTarget, attempt: AttemptContext, request: EmbeddingsRequest, parts: ReadonlyArray<[number, number]>, bill: EmbeddingsBill) {
    this.#target = target;
    this.#attempt = attempt;
    this.#request = request;
    this.#parts = parts;
    this.#bill = bill;
    this.#billed = bill.open(target.price ?? null);
    this.vectors = new Array<Vector>(request.inputs.length);
    this.#width = target.acceptsDimensions ? request.dimensions : null;
  }

  /** What every part's call listens on: the caller's abort, or another part's failure. */
  get signal(): AbortSignal {
    return this.#controller.signal;
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
    const count = end - start;
    const settings = answerBound(embedder.settings, count);
    const tooLarge = (limit: number): UpstreamError => answerTooLarge(limit, count);
    return exchangeJsonBytes(settings, call, body, tooLarge).then((bytes) => decodeEmbeddingsAnswer(bytes, count, this.#width));
  }

  #place(decoded: DecodedEmbeddings, start: number): void {
    const { vectors } = decoded;
    // Answered, so billed, whatever the checks below find.
    this.#bill.add(this.#billed, decoded, this.#request.inputs, start, start + vectors.length);
    // An earlier part fixed the width after this one was decoded against none.
    const width = vectors[0]?.length ?? 0;
    if (this.#width === null) this.#width = width;
    else if (width !== this.#width) throw widthMismatch(width, this.#width);
    for (let i = 0; i < vectors.length; i++) this.vectors[start + i] = vectors[i] as Vector;
    this.promptTokens = this.promptTokens === null || decoded.promptTokens === null ? null : this.promptTokens + decoded.promptTokens;
  }
}

/**
 * An embeddings answer may be larger than a chat answer: its bound is the
 * provider's maxResponseBytes, or EMBEDDING_ANSWER_BYTES_PER_INPUT for each
 * input of the call when that is more.
 */
function answerBound(settings: ExchangeSettings, inputs: number): ExchangeSettings {
  const bound = inputs * EMBEDDING_ANSWER_BYTES_PER_INPUT;
  return bound <= settings.maxResponseBytes ? settings : { ...settings, maxResponseBytes: bound };
}

function answerTooLarge(limit: number, inputs: number): UpstreamError {
  return new UpstreamError(
    'bad_upstream_response',
    `The upstream's answer to one call of ${inputs} inputs exceeds the gateway's limit of ${limit} bytes for it (${EMBEDDING_ANSWER_BYTES_PER_INPUT / 1024} KiB an input, or the provider's 16 MiB bound when more); lower the target's maxInputsPerCall, or ask the upstream for base64 (embeddingsEncoding).`,
  );
}

function widthMismatch(width: number, expected: number): UpstreamError {
  return new UpstreamError('bad_upstream_response', `The upstream provider's embeddings answers have embeddings of ${width} dimensions in one call and ${expected} in another; every vector of a request must have the same width.`);
}
