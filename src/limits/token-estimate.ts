// The token estimate a request is admitted with, before the upstream reports usage.
//
// estimate = prompt estimate + maxOutputTokens, where the prompt estimate is the one
// service-auto uses (src/routing/token-estimate.ts, kept in one place):
//   3 + Σ messages (4 + ⌈chars / 4⌉ + 85 per image) + ⌈tool definitions' JSON chars / 4⌉
// and maxOutputTokens is the most the reply may use (the request's max_completion_tokens
// or max_tokens after the alias cap, or the cap/default the gateway sends upstream).
// Counting the whole output allowance up front keeps concurrent requests from
// overrunning a bucket; settlement gives back what the reply did not use.
import type { ChatRequest } from '../chat/types.ts';
import { estimatePromptTokens } from '../routing/token-estimate.ts';

export function estimateRequestTokens(request: Pick<ChatRequest, 'messages' | 'tools'>, maxOutputTokens: number): number {
  if (!Number.isSafeInteger(maxOutputTokens) || maxOutputTokens < 0) {
    throw new RangeError(`maxOutputTokens must be a non-negative integer; got ${maxOutputTokens}.`);
  }
  return estimatePromptTokens(request) + maxOutputTokens;
}
