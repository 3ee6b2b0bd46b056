// An Anthropic Messages API response → the spec's chat-completion shape. Pure.
// Wire format: https://docs.anthropic.com/en/api/messages (response) and
// https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (usage).
//
// Same rule as ../chat/completion-response.ts: absent takes its default,
// present with the wrong type is a malformed response (502) naming the field
// path, never the upstream's content. Content blocks other than text and
// tool_use (thinking, redacted_thinking, server tool blocks, and any type added
// later) carry nothing a chat-completions client can read and are skipped.

import { generateCompletionId, malformedResponseError } from '../chat/completion-response.ts';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../chat/types.ts';
import { fromAnthropicToolId } from './anthropic-tool-ids.ts';

/**
 * Anthropic's stop_reason → OpenAI's finish_reason.
 * - end_turn, stop_sequence: the model stopped by itself or on a stop sequence.
 * - pause_turn: a server tool paused a long turn; what came so far is complete
 *   text, and the client may continue it by sending it back, so `stop`.
 * - max_tokens, model_context_window_exceeded: cut by a limit, so `length`.
 * - tool_use: `tool_calls`. refusal: the model declined, `content_filter`.
 * Any other string is `stop` (the generation ended; stream clients need a
 * terminal reason), as ../chat/completion-response.ts does for OpenAI upstreams.
 */
const STOP_REASONS: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** Maps a stop_reason; null and undefined mean "not stopped yet". */
export function finishReasonOf(raw: unknown, path: string): FinishReason | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') throw malformedResponseError(path);
  return Object.hasOwn(STOP_REASONS, raw) ? (STOP_REASONS[raw] as FinishReason) : 'stop';
}

/** Anthropic's token counts. Its `input_tokens` excludes the tokens read from
 * or written to the prompt cache; OpenAI's prompt_tokens includes cached ones. */
export interface AnthropicTokenCounts {
  input: number;
  cacheRead: number;
  cacheCreation: number;
  output: number;
}

/** The counts present in an Anthropic `usage` object, over `into` (a
 * message_delta carries cumulative counts that replace earlier ones). */
export function readTokenCounts(raw: unknown, path: string, into: AnthropicTokenCounts): AnthropicTokenCounts {
  const usage = objectAt(raw, path);
  return {
    input: countAt(usage['input_tokens'], `${path}.input_tokens`) ?? into.input,
    cacheRead: countAt(usage['cache_read_input_tokens'], `${path}.cache_read_input_tokens`) ?? into.cacheRead,
    cacheCreation: countAt(usage['cache_creation_input_tokens'], `${path}.cache_creation_input_tokens`) ?? into.cacheCreation,
    output: countAt(usage['output_tokens'], `${path}.output_tokens`) ?? into.output,
  };
}

export const NO_TOKENS: AnthropicTokenCounts = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0 };

export function toUsage(counts: AnthropicTokenCounts): Usage {
  const prompt = counts.input + counts.cacheRead + counts.cacheCreation;
  return {
    prompt_tokens: prompt,
    completion_tokens: counts.output,
    total_tokens: prompt + counts.output,
    prompt_tokens_details: { cached_tokens: counts.cacheRead },
  };
}

/** A non-stream Anthropic message → ChatCompletion. `created` defaults to now
 * (Anthropic sends no timestamp). Throws UpstreamError 502 when malformed. */
export function fromAnthropicResponse(raw: unknown, created: number = Math.floor(Date.now() / 1000)): ChatCompletion {
  const body = objectAt(raw, '');
  const rawContent = body['content'];
  if (!Array.isArray(rawContent)) throw malformedResponseError('content');

  let text = '';
  let sawText = false;
  const toolCalls: ToolCall[] = [];
  for (let i = 0; i < rawContent.length; i++) {
    const path = `content[${i}]`;
    const block = objectAt(rawContent[i], path);
    const type = block['type'];
    if (typeof type !== 'string') throw malformedResponseError(`${path}.type`);
    if (type === 'text') {
      const blockText = block['text'];
      if (typeof blockText !== 'string') throw malformedResponseError(`${path}.text`);
      text += blockText;
      sawText = true;
    } else if (type === 'tool_use') {
      toolCalls.push(toolCallOf(block, path));
    }
  }

  const completion: ChatCompletion = {
    id: optionalStringAt(body['id'], 'id') || generateCompletionId(),
    object: 'chat.completion',
    created,
    model: optionalStringAt(body['model'], 'model') ?? '',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: !sawText && toolCalls.length > 0 ? null : text, refusal: null, tool_calls: toolCalls },
        logprobs: null,
        finish_reason: finishReasonOf(body['stop_reason'], 'stop_reason'),
      },
    ],
  };
  const usage = body['usage'];
  if (usage !== undefined && usage !== null) completion.usage = toUsage(readTokenCounts(usage, 'usage', NO_TOKENS));
  return completion;
}

function toolCallOf(block: Record<string, unknown>, path: string): ToolCall {
  const id = optionalStringAt(block['id'], `${path}.id`);
  if (id === undefined || id === '') throw malformedResponseError(`${path}.id`);
  const name = optionalStringAt(block['name'], `${path}.name`);
  if (name === undefined || name === '') throw malformedResponseError(`${path}.name`);
  const input = block['input'];
  if (input !== undefined && input !== null) objectAt(input, `${path}.input`);
  // An id the gateway encoded on the way out reads as the client's own again.
  return { id: fromAnthropicToolId(id), type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } };
}

export function objectAt(raw: unknown, path: string): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw malformedResponseError(path);
  return raw as Record<string, unknown>;
}

export function optionalStringAt(raw: unknown, path: string): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw malformedResponseError(path);
  return raw;
}

function countAt(raw: unknown, path: string): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) throw malformedResponseError(path);
  return raw;
}
