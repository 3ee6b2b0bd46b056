// The seam between the gateway and an upstream: one adapter per provider type,
// no provider-specific branches in shared code.
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../chat/types.ts';
import type { InvalidRequestError } from '../errors/api-error.ts';

export interface UpstreamCall {
  /** The validated request, already rewritten for the upstream: `model` is the
   * upstream model name, exactly one of max_tokens / max_completion_tokens is set. */
  request: ChatRequest;
  /** The request id the client sees; sent upstream as `x-request-id`. */
  requestId: string;
  /** Aborted when the client leaves or a gateway deadline passes. */
  signal: AbortSignal;
  /** telemetry: this attempt's `traceparent` (and `tracestate`), sent upstream. */
  traceHeaders?: Readonly<Record<string, string>> | undefined;
}

export interface ChatProvider {
  /** Non-streaming completion, normalised to the spec's response shape
   * (the gateway overwrites `model` with the resolved alias). Throws ApiError. */
  complete(call: UpstreamCall): Promise<ChatCompletion>;
  /** Streaming completion as parsed chunks, normalised. Throws ApiError
   * (before or during iteration) when the upstream fails or the stream is cut. */
  stream(call: UpstreamCall): AsyncIterable<ChatCompletionChunk>;
  /** Why this adapter cannot send `request` (already rewritten for the upstream)
   * without changing its meaning: the 400 naming the parameter; null when it can.
   * Pure and without I/O, so that a target that cannot take a request is
   * skipped before any upstream call. Absent: the adapter takes every valid request. */
  refusal?(request: ChatRequest): InvalidRequestError | null;
}
