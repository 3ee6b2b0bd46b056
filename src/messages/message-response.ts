// A normalised chat completion (../chat/types.ts) → the body of Anthropic's
// Messages answer. Pure. Shapes: ./message-types.ts (with their sources).
//
// Content: the message's text as one text block, then its refusal (if any) as
// a text block, then one tool_use block per tool call, in the upstream's order
// (Anthropic puts text before the calls it announces). Empty text makes no block.
// A tool call keeps the upstream's id, so the `tool_use_id` a client sends back
// is the `tool_call_id` the upstream gave.

import { randomBytes } from 'node:crypto';
import type { ChatCompletion, FinishReason, Usage } from '../chat/types.ts';
import { UpstreamError } from '../errors/api-error.ts';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicStopReason, AnthropicUsage } from './message-types.ts';
import { isWholeObject } from '../chat/tool-arguments.ts';

export interface MessageOptions {
  /** The answer's id; default `msg_` and 24 random hex digits. */
  id?: string;
}

/** `msg_` and 24 hex digits: Anthropic's prefix, the gateway's own randomness
 * (the upstream's completion id says nothing a Messages client could use). */
export function generateMessageId(): string {
  return `msg_${randomBytes(12).toString('hex')}`;
}

/**
 * OpenAI's finish_reason → Anthropic's stop_reason.
 * - stop → end_turn. OpenAI does not say whether a stop sequence ended the
 *   answer (it reports `stop` for both and leaves the sequence out of the text),
 *   so `stop_sequence` is never produced and the stop_sequence field stays null.
 * - length → max_tokens.
 * - tool_calls → tool_use; so is `stop` (or no reason) when the answer holds
 *   tool calls: Anthropic's tool_use means "the model invoked tools", and
 *   clients run the tools on it.
 * - content_filter → refusal: the upstream's filter withheld the answer, which
 *   is what Anthropic's refusal ("streaming classifiers intervene") reports.
 *   A model refusal (OpenAI's `refusal` text) is reported as refusal too.
 * - no reason (null) in a whole answer → end_turn: the upstream gave the answer
 *   as complete.
 */
export function stopReasonOf(finishReason: FinishReason | null, hasToolCalls: boolean, refused: boolean): AnthropicStopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
      return 'tool_use';
    default:
      if (refused) return 'refusal';
      return hasToolCalls ? 'tool_use' : 'end_turn';
  }
}

/** OpenAI usage → Anthropic usage. OpenAI's prompt_tokens includes the cached
 * tokens; Anthropic's input_tokens does not. OpenAI-compatible upstreams report
 * no cache writes (their caching has no write price), so that count is 0. */
export function usageOf(usage: Usage | null | undefined): AnthropicUsage {
  if (usage === undefined || usage === null) {
    return { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  }
  const cached = Math.min(usage.prompt_tokens_details.cached_tokens, usage.prompt_tokens);
  return {
    input_tokens: usage.prompt_tokens - cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: usage.completion_tokens,
  };
}

/**
 * A tool call's OpenAI `arguments` string → the tool_use `input` object.
 * Empty arguments are `{}`: upstreams (vLLM, llama.cpp) send "" for a call of
 * a tool without parameters. Anything else but a JSON object (malformed or cut
 * JSON, an array, a string) is the upstream's fault and a 502 naming where it
 * was: a client must never run a tool on an `input` the model did not give.
 */
export function toolInputOf(args: string, path: string): Record<string, unknown> {
  if (args === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw toolArgumentsError(path, 'are not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw toolArgumentsError(path, 'are not a JSON object');
  }
  return value as Record<string, unknown>;
}


export function toolArgumentsError(path: string, what: string): UpstreamError {
  return new UpstreamError(
    'bad_upstream_response',
    `The upstream provider returned tool call arguments that ${what} (at ${path}); a tool_use input must be a JSON object.`,
  );
}

/** A whole chat completion → Anthropic's Message, `model` the client's alias.
 * Throws UpstreamError 502 when a tool call's arguments are not a JSON object,
 * except when the output limit cut the answer (finish_reason "length"): the
 * call cut short is left out (its input was never given; an `input: {}` would
 * make a client run the tool on nothing) and stop_reason says max_tokens. */
export function toAnthropicMessage(completion: ChatCompletion, alias: string, options: MessageOptions = {}): AnthropicMessage {
  const choice = completion.choices[0];
  const content: AnthropicContentBlock[] = [];
  let refused = false;
  let toolCallCount = 0;
  if (choice !== undefined) {
    const message = choice.message;
    if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
    if (typeof message.refusal === 'string' && message.refusal !== '') {
      content.push({ type: 'text', text: message.refusal });
      refused = true;
    }
    const calls = message.tool_calls;
    const cut = choice.finish_reason === 'length';
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as (typeof calls)[number];
      const args = call.function.arguments;
      if (cut && !isWholeObject(args)) continue;
      const input = toolInputOf(args, `choices[0].message.tool_calls[${i}].function.arguments`);
      content.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
      toolCallCount++;
    }
  }
  return {
    id: options.id ?? generateMessageId(),
    type: 'message',
    role: 'assistant',
    model: alias,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason ?? null, toolCallCount > 0, refused),
    stop_sequence: null,
    usage: usageOf(completion.usage),
  };
}
