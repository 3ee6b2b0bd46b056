// count_tokens for one Messages request: the upstream's own count where its
// provider has a counter (./token-counters.ts), otherwise, or when that
// count fails, the gateway's estimate (../messages/token-estimate.ts). The
// answer says which, and why an upstream count was not used, for the
// response header and the access line. A count is never 0.
import { estimateMessageTokens } from '../messages/token-estimate.ts';
import { failureCauseOf } from '../upstream/failure-cause.ts';
import { ProviderKind, type ChatProvider, type UpstreamCall } from '../upstream/provider.ts';
import type { AbortSource } from '../time/abort-source.ts';
import type { ChatRequest } from '../chat/types.ts';
import { isClientAbort } from '../upstream/upstream-errors.ts';
import { TokenCountAnswerError } from './token-counters.ts';

export const TokenCountSource = {
  /** The upstream counted (Anthropic's count_tokens, vLLM's or llama.cpp's tokenizer). */
  Upstream: 'upstream',
  /** The gateway's estimate: the provider cannot count, or its count failed (see `problem`). */
  Estimate: 'estimate',
} as const;
export type TokenCountSource = (typeof TokenCountSource)[keyof typeof TokenCountSource];

export interface TokenCount {
  /** Positive. */
  inputTokens: number;
  source: TokenCountSource;
  /** The counting method asked: "anthropic", "vllm", "llamacpp", or "estimate" when the provider has none. */
  method: string;
  /** Why the upstream's count was not used, e.g. `http:503`, `timeout:total`,
   * `bad_response:not_json`, `bad_response:bad_input_tokens`; absent when it was,
   * or when none was asked. */
  problem?: string;
}

/** What count_tokens needs of the alias's first target (../upstream/dispatcher.ts UpstreamTarget). */
export interface TokenCountTarget {
  readonly provider: ChatProvider;
  /** The upstream request for the target: `model` is the upstream's. */
  readonly request: ChatRequest;
}

export interface TokenCountOptions {
  /** Aborted when the client leaves or a gateway deadline passes: the count is abandoned (ClientAbortError). */
  signal: AbortSource;
  /** Sent upstream as `x-request-id`. */
  requestId: string;
  /** Headers sent after the provider's own (trace context; for Anthropic, the client's allowed anthropic-beta values). */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** Why an upstream count failed, in the words the access line uses. */
export function tokenCountProblem(error: unknown): string {
  if (error instanceof TokenCountAnswerError) return `bad_response:${error.detail}`;
  const cause = failureCauseOf(error);
  return `${cause.kind}:${cause.detail}`;
}

/**
 * The input tokens of `body` (the client's validated Messages or count_tokens
 * body) on `target`. Never rejects for an upstream's failure (that is the
 * estimate, with `problem` set); rejects with a ClientAbortError when the
 * signal aborts.
 */
export async function countTokens(target: TokenCountTarget, body: Readonly<Record<string, unknown>>, options: TokenCountOptions): Promise<TokenCount> {
  const { provider } = target;
  const counter = provider.kind === ProviderKind.Http ? provider.tokenCounter : undefined;
  if (counter === undefined) return { inputTokens: estimateMessageTokens(body), source: TokenCountSource.Estimate, method: 'estimate' };
  const call: UpstreamCall = { request: target.request, requestId: options.requestId, signal: options.signal, traceHeaders: options.headers };
  try {
    const inputTokens = await counter.count({ body, request: target.request }, call);
    return { inputTokens, source: TokenCountSource.Upstream, method: counter.method };
  } catch (error) {
    if (isClientAbort(error)) throw error;
    return { inputTokens: estimateMessageTokens(body), source: TokenCountSource.Estimate, method: counter.method, problem: tokenCountProblem(error) };
  }
}
