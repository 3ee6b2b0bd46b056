// The request one upstream target receives, built from a validated client
// request. Pure.
import { DEFAULT_MAX_OUTPUT_TOKENS, type MaxTokensParam } from '../config/config.ts';
import type { ChatRequest } from './types.ts';

interface UpstreamRequestPlan {
  request: ChatRequest;
  /** The output-token maximum sent upstream. */
  maxOutputTokens: number;
  /** True when the alias cap lowered the client's (or the default) maximum. */
  clamped: boolean;
}

interface UpstreamRequestTarget {
  /** Model name the upstream knows. */
  model: string;
  /** The alias's cap on output tokens, or null. */
  maxOutputTokens: number | null;
  /** The field this upstream reads the maximum from. */
  maxTokensParam: MaxTokensParam;
}

/**
 * Spec: "when neither max_tokens nor max_completion_tokens is set, the
 * effective maximum output is 4096 tokens; server-side caps still apply."
 * The effective maximum is min(requested ?? 4096, alias cap). Exactly one of
 * the two fields reaches the upstream: the one the upstream understands,
 * whichever the client used.
 */
export function buildUpstreamRequest(request: ChatRequest, target: UpstreamRequestTarget): UpstreamRequestPlan {
  const requested = request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const cap = target.maxOutputTokens;
  const clamped = cap !== null && requested > cap;
  const maxOutputTokens = clamped ? cap : requested;

  const { max_tokens: _a, max_completion_tokens: _b, ...rest } = request;
  const upstream: ChatRequest = { ...rest, model: target.model };
  upstream[target.maxTokensParam] = maxOutputTokens;
  return { request: upstream, maxOutputTokens, clamped };
}
