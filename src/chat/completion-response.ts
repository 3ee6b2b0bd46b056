// Normalisation of what an OpenAI-compatible upstream returns into exactly the
// shapes of ../../shared/spec/chat-completion-service.md ("Chat completion
// response") and of the stream chunks the SDKs expect (../../shared/CLIENTS.md).
//
// Every result is a fresh object holding only the fields the gateway defines, so
// that a client may send `choices[0].message` back as history unchanged
// (upstream extras such as vLLM's `reasoning_content`, `stop_reason` or
// llama.cpp's `timings` never reach the client).
//
// Rule for every field: absent (undefined or null) takes its documented default;
// present with the wrong type is a malformed response (502). The error names the
// field path, never the upstream's content.

import { randomBytes } from 'node:crypto';
import { UpstreamError } from '../errors/api-error.ts';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  FinishReason,
  ToolCall,
  ToolCallDelta,
  Usage,
} from './types.ts';

const MALFORMED_MESSAGE = 'The upstream provider returned a malformed response.';

/** The 502 for an upstream body that is not the documented shape. `path` (for
 * example `choices[0].message.content`) is named in the message; null means the
 * body as a whole. */
export function malformedResponseError(path: string | null): UpstreamError {
  const message =
    path === null || path === ''
      ? MALFORMED_MESSAGE
      : `The upstream provider returned a malformed response (at ${path}).`;
  return new UpstreamError('bad_upstream_response', message);
}

/** `chatcmpl-` and 24 hex digits, for upstreams that send no usable id. */
export function generateCompletionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

/** `call_` and 24 hex digits, for tool calls an upstream left without an id. */
export function generateToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/**
 * Upstream finish reasons the gateway understands. The legacy `function_call`
 * becomes `tool_calls` (the gateway exposes only the tools form), and the names
 * some OpenAI-compatible servers and proxies use for the same events are mapped
 * onto OpenAI's four. Any other non-empty string becomes `stop`: the upstream
 * said the generation ended, and a stream client needs a terminal reason
 * (openai-node's stream helper throws on a missing one).
 */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  function_call: 'tool_calls',
  tool_use: 'tool_calls',
  eos: 'stop',
  eos_token: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  max_length: 'length',
  model_length: 'length',
};

/** Maps an upstream finish reason; null, undefined and '' mean "not finished". */
export function normalizeFinishReason(raw: unknown, path: string): FinishReason | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') throw malformedResponseError(path);
  return Object.hasOwn(FINISH_REASONS, raw) ? (FINISH_REASONS[raw] as FinishReason) : 'stop';
}

/** An OpenAI-shaped non-stream completion → the spec's response shape. */
export function normalizeCompletion(raw: unknown): ChatCompletion {
  const body = objectAt(raw, '');
  const rawChoices = body['choices'];
  if (!Array.isArray(rawChoices) || rawChoices.length === 0) throw malformedResponseError('choices');

  const choices: ChatCompletion['choices'] = [];
  for (let i = 0; i < rawChoices.length; i++) {
    const path = `choices[${i}]`;
    const choice = objectAt(rawChoices[i], path);
    const message = objectAt(choice['message'], `${path}.message`);
    const content = contentAt(message['content'], `${path}.message.content`);
    const toolCalls = toolCallsAt(message, `${path}.message`);
    const normalizedMessage: ChatCompletion['choices'][number]['message'] = {
      role: 'assistant',
      content,
      refusal: optionalStringAt(message['refusal'], `${path}.message.refusal`) ?? null,
      tool_calls: toolCalls,
    };
    choices.push({
      index: indexAt(choice['index'], i, `${path}.index`),
      message: normalizedMessage,
      logprobs: logprobsAt(choice['logprobs'], `${path}.logprobs`),
      finish_reason: normalizeFinishReason(choice['finish_reason'], `${path}.finish_reason`),
    });
  }

  const completion: ChatCompletion = {
    id: idAt(body['id'], 'id'),
    object: 'chat.completion',
    created: createdAt(body['created'], 'created'),
    model: optionalStringAt(body['model'], 'model') ?? '',
    choices,
  };
  const usage = usageAt(body['usage'], 'usage');
  if (usage !== undefined) completion.usage = usage;
  return completion;
}

/** An OpenAI-shaped stream chunk → the chunk shape the gateway relays. A chunk
 * without `choices` (some servers omit it on the usage chunk) has `choices: []`. */
export function normalizeChunk(raw: unknown): ChatCompletionChunk {
  const body = objectAt(raw, '');
  const rawChoices = body['choices'];
  if (rawChoices !== undefined && rawChoices !== null && !Array.isArray(rawChoices)) {
    throw malformedResponseError('choices');
  }

  const choices: ChatCompletionChunk['choices'] = [];
  const list: unknown[] = rawChoices ?? [];
  for (let i = 0; i < list.length; i++) {
    const path = `choices[${i}]`;
    const choice = objectAt(list[i], path);
    const rawDelta = choice['delta'];
    const delta: ChatCompletionChunk['choices'][number]['delta'] = {};
    if (rawDelta !== undefined && rawDelta !== null) {
      const source = objectAt(rawDelta, `${path}.delta`);
      // Later deltas of some servers carry `role: null` or repeat the role; only
      // the assistant role is meaningful, anything else is dropped.
      if (source['role'] === 'assistant') delta.role = 'assistant';
      const content = contentAt(source['content'], `${path}.delta.content`);
      if (content !== null) delta.content = content;
      const toolCalls = toolCallDeltasAt(source, `${path}.delta`);
      if (toolCalls.length > 0) delta.tool_calls = toolCalls;
      const refusal = optionalStringAt(source['refusal'], `${path}.delta.refusal`);
      if (refusal !== undefined) delta.refusal = refusal;
    }
    choices.push({
      index: indexAt(choice['index'], i, `${path}.index`),
      delta,
      finish_reason: normalizeFinishReason(choice['finish_reason'], `${path}.finish_reason`),
    });
  }

  const chunk: ChatCompletionChunk = {
    id: idAt(body['id'], 'id'),
    object: 'chat.completion.chunk',
    created: createdAt(body['created'], 'created'),
    model: optionalStringAt(body['model'], 'model') ?? '',
    choices,
  };
  const usage = usageAt(body['usage'], 'usage');
  if (usage !== undefined) chunk.usage = usage;
  return chunk;
}

/** Usage with every field the spec lists; absent counts are 0, an absent total
 * is the sum. `undefined` when the upstream gave none. */
export function normalizeUsage(raw: unknown, path = 'usage'): Usage | undefined {
  return usageAt(raw, path);
}

function usageAt(raw: unknown, path: string): Usage | undefined {
  if (raw === undefined || raw === null) return undefined;
  const usage = objectAt(raw, path);
  const promptTokens = countAt(usage['prompt_tokens'], `${path}.prompt_tokens`) ?? 0;
  const completionTokens = countAt(usage['completion_tokens'], `${path}.completion_tokens`) ?? 0;
  const totalTokens = countAt(usage['total_tokens'], `${path}.total_tokens`) ?? promptTokens + completionTokens;
  let cachedTokens = 0;
  const details = usage['prompt_tokens_details'];
  if (details !== undefined && details !== null) {
    const detailsPath = `${path}.prompt_tokens_details`;
    cachedTokens = countAt(objectAt(details, detailsPath)['cached_tokens'], `${detailsPath}.cached_tokens`) ?? 0;
  }
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: totalTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  };
}

/** A choice's log probabilities: the upstream's object as it is, null when absent. */
function logprobsAt(raw: unknown, path: string): Record<string, unknown> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw malformedResponseError(path);
  return raw as Record<string, unknown>;
}

function toolCallsAt(message: Record<string, unknown>, path: string): ToolCall[] {
  const raw = message['tool_calls'];
  const calls: ToolCall[] = [];
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) throw malformedResponseError(`${path}.tool_calls`);
    for (let i = 0; i < raw.length; i++) {
      const entryPath = `${path}.tool_calls[${i}]`;
      const entry = objectAt(raw[i], entryPath);
      functionTypeAt(entry['type'], `${entryPath}.type`);
      const fn = objectAt(entry['function'], `${entryPath}.function`);
      calls.push({
        id: nonEmptyStringAt(entry['id'], `${entryPath}.id`) ?? generateToolCallId(),
        type: 'function',
        function: {
          name: requiredNameAt(fn['name'], `${entryPath}.function.name`),
          arguments: argumentsAt(fn['arguments'], `${entryPath}.function.arguments`) ?? '{}',
        },
      });
    }
  }
  // The legacy single `function_call` is exposed as the one tool call it is.
  const legacy = message['function_call'];
  if (calls.length === 0 && legacy !== undefined && legacy !== null) {
    const legacyPath = `${path}.function_call`;
    const fn = objectAt(legacy, legacyPath);
    calls.push({
      id: generateToolCallId(),
      type: 'function',
      function: {
        name: requiredNameAt(fn['name'], `${legacyPath}.name`),
        arguments: argumentsAt(fn['arguments'], `${legacyPath}.arguments`) ?? '{}',
      },
    });
  }
  return calls;
}

function toolCallDeltasAt(delta: Record<string, unknown>, path: string): ToolCallDelta[] {
  const raw = delta['tool_calls'];
  const deltas: ToolCallDelta[] = [];
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) throw malformedResponseError(`${path}.tool_calls`);
    for (let i = 0; i < raw.length; i++) {
      const entryPath = `${path}.tool_calls[${i}]`;
      const entry = objectAt(raw[i], entryPath);
      // Servers that send each call whole (no `index`) are read by position.
      const out: ToolCallDelta = { index: indexAt(entry['index'], i, `${entryPath}.index`) };
      const id = nonEmptyStringAt(entry['id'], `${entryPath}.id`);
      if (id !== undefined) out.id = id;
      if (functionTypeAt(entry['type'], `${entryPath}.type`)) out.type = 'function';
      const fn = functionDeltaAt(entry['function'], `${entryPath}.function`);
      if (fn !== undefined) out.function = fn;
      deltas.push(out);
    }
  }
  const legacy = delta['function_call'];
  if (deltas.length === 0 && legacy !== undefined && legacy !== null) {
    const out: ToolCallDelta = { index: 0 };
    const fn = functionDeltaAt(legacy, `${path}.function_call`);
    if (fn !== undefined) out.function = fn;
    deltas.push(out);
  }
  return deltas;
}

function functionDeltaAt(raw: unknown, path: string): ToolCallDelta['function'] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const fn = objectAt(raw, path);
  const out: NonNullable<ToolCallDelta['function']> = {};
  const name = optionalStringAt(fn['name'], `${path}.name`);
  if (name !== undefined && name !== '') out.name = name;
  const args = argumentsAt(fn['arguments'], `${path}.arguments`);
  if (args !== undefined) out.arguments = args;
  return out;
}

/** Arguments are a JSON string; a server that sends them as an object (some
 * local servers do) gets them serialised. */
function argumentsAt(raw: unknown, path: string): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'object' && !Array.isArray(raw)) return JSON.stringify(raw);
  throw malformedResponseError(path);
}

/** True when `type: "function"` is given; absent is accepted (the gateway only
 * offers function tools), any other type is malformed. */
function functionTypeAt(raw: unknown, path: string): boolean {
  if (raw === undefined || raw === null) return false;
  if (raw === 'function') return true;
  throw malformedResponseError(path);
}

/** Message content: a string, null, or (as some servers send) an array of text
 * parts, which is joined; parts of other types carry no assistant text. */
function contentAt(raw: unknown, path: string): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string') return raw;
  if (!Array.isArray(raw)) throw malformedResponseError(path);
  let text = '';
  for (let i = 0; i < raw.length; i++) {
    const part = objectAt(raw[i], `${path}[${i}]`);
    if (part['type'] !== 'text') continue;
    const partText = part['text'];
    if (typeof partText !== 'string') throw malformedResponseError(`${path}[${i}].text`);
    text += partText;
  }
  return text;
}

function objectAt(raw: unknown, path: string): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw malformedResponseError(path);
  return raw as Record<string, unknown>;
}

function optionalStringAt(raw: unknown, path: string): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw malformedResponseError(path);
  return raw;
}

function nonEmptyStringAt(raw: unknown, path: string): string | undefined {
  const value = optionalStringAt(raw, path);
  return value === '' ? undefined : value;
}

function requiredNameAt(raw: unknown, path: string): string {
  const name = nonEmptyStringAt(raw, path);
  if (name === undefined) throw malformedResponseError(path);
  return name;
}

function idAt(raw: unknown, path: string): string {
  return nonEmptyStringAt(raw, path) ?? generateCompletionId();
}

function createdAt(raw: unknown, path: string): number {
  if (raw === undefined || raw === null) return Math.floor(Date.now() / 1000);
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) throw malformedResponseError(path);
  return Math.floor(raw);
}

function indexAt(raw: unknown, fallback: number, path: string): number {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) throw malformedResponseError(path);
  return raw;
}

function countAt(raw: unknown, path: string): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) throw malformedResponseError(path);
  return raw;
}
