// What a request is admitted with, before the upstream reports its usage: an
// upper bound of the tokens (and the money) it can cost, so that requests in
// flight can be charged up front and a burst cannot pass a budget by more than
// one request. Settlement replaces it with the upstream's usage. The prompt
// term is the request's prompt bound (src/chat/request-prompt-bound.ts, carried
// on a validated request) at the alias's imageTokens; the reasoning behind each
// term is in docs/keys.md, "How a request's reservation is computed".
import type { Price } from '../config/config.ts';
import { promptBoundOf, promptTokensFor, type PromptSource } from '../chat/request-prompt-bound.ts';
import { costNanos } from './cost.ts';
import { MAX_CHARGE_NANOS, MAX_REQUEST_TOKENS } from './limiter.ts';

export { MESSAGE_OVERHEAD, REQUEST_OVERHEAD, TOOLS_OVERHEAD } from '../chat/request-prompt-bound.ts';

export interface Reservation {
  /** Upper bound of the prompt tokens. */
  readonly promptTokens: number;
  /** The output maximum sent upstream. */
  readonly outputTokens: number;
  /** promptTokens + outputTokens. */
  readonly tokens: number;
  /** Upper bound of the cost in nanos: promptTokens at the highest input price and outputTokens at the highest output price among the plan's targets; 0 when unpriced. */
  readonly costNanos: number;
}

/** A validated request (its carried prompt bound is used) or one built elsewhere (measured). */
export type ReservedRequest = PromptSource;

/**
 * The reservation of a validated request. `maxOutputTokens` is the output
 * maximum the gateway sends upstream; `prices` those of the targets the
 * request may go to (null: unpriced), so the cost bound holds whichever
 * target answers.
 */
export function reserveRequest(request: ReservedRequest, maxOutputTokens: number, alias: { imageTokens: number }, prices: readonly (Price | null)[]): Reservation {
  if (!Number.isSafeInteger(maxOutputTokens) || maxOutputTokens < 0) {
    throw new RangeError(`maxOutputTokens must be a non-negative integer; got ${maxOutputTokens}.`);
  }
  // Bounded by what the limiter accounts (MAX_REQUEST_TOKENS, MAX_CHARGE_NANOS): only a
  // crafted request (tens of thousands of image parts at a large imageTokens) gets near,
  // and no model takes a prompt of that size, so the clamp never undercounts a real one.
  const promptTokens = Math.min(promptTokensFor(promptBoundOf(request), alias.imageTokens), MAX_REQUEST_TOKENS - Math.min(maxOutputTokens, MAX_REQUEST_TOKENS));
  let input = 0;
  let output = 0;
  for (const price of prices) {
    if (price === null) continue;
    // cachedInput never exceeds input (src/config/price-config.ts): input is the most a prompt token costs.
    input = Math.max(input, price.input);
    output = Math.max(output, price.output);
  }
  const cost = Math.min(costNanos(promptTokens, input) + costNanos(maxOutputTokens, output), MAX_CHARGE_NANOS);
  return { promptTokens, outputTokens: maxOutputTokens, tokens: promptTokens + maxOutputTokens, costNanos: cost };
}

/**
 * The reservation of an embeddings request: its prompt bound (per input, the
 * UTF-8 bytes of a text or its token count, plus an overhead; carried on the
 * validated request) at the highest input price among `prices` (those of
 * the targets it may go to; null: unpriced). Embeddings have no output.
 */
export function reserveEmbeddings(promptBound: number, prices: readonly (Price | null)[]): Reservation {
  if (!Number.isSafeInteger(promptBound) || promptBound < 0) {
    throw new RangeError(`promptBound must be a non-negative integer; got ${promptBound}.`);
  }
  // The request bounds (embeddings.maxTotalBytes) keep a real request far below; the clamp keeps the limiter's invariant.
  const promptTokens = Math.min(promptBound, MAX_REQUEST_TOKENS);
  let input = 0;
  for (const price of prices) if (price !== null) input = Math.max(input, price.input);
  return { promptTokens, outputTokens: 0, tokens: promptTokens, costNanos: Math.min(costNanos(promptTokens, input), MAX_CHARGE_NANOS) };
}
