// A cheap, documented estimate of a request's prompt tokens, used before the
// call (service-auto context-window checks; later, token rate limits). It is
// deliberately simple: about four characters per token, plus a fixed overhead.
import type { ChatRequest } from '../chat/types.ts';

/** Characters per token assumed for text. */
const CHARS_PER_TOKEN = 4;
/** Tokens charged per message for role and framing. */
const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens charged per image part (a low-detail image in OpenAI's accounting). */
const IMAGE_TOKENS = 85;
/** Tokens charged once per request for the reply's priming. */
const REQUEST_OVERHEAD_TOKENS = 3;

/**
 * estimate = 3 + Σ messages (4 + ⌈chars/4⌉ + 85 per image) + ⌈tool JSON chars/4⌉
 * where chars counts message text, names, tool-call names and arguments.
 */
export function estimatePromptTokens(request: Pick<ChatRequest, 'messages' | 'tools'>): number {
  let tokens = REQUEST_OVERHEAD_TOKENS;
  for (const message of request.messages) {
    let chars = message.name?.length ?? 0;
    let images = 0;
    const content = message.content;
    if (typeof content === 'string') chars += content.length;
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part.type === 'text') chars += part.text.length;
        else images++;
      }
    }
    for (const call of message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
    if (typeof message.refusal === 'string') chars += message.refusal.length;
    tokens += MESSAGE_OVERHEAD_TOKENS + Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    tokens += Math.ceil(JSON.stringify(request.tools).length / CHARS_PER_TOKEN);
  }
  return tokens;
}
