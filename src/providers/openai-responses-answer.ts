// What an upstream's Responses answer says in the gateway's chat shapes, for
// counting only: the client of the Responses door receives the upstream's own
// answer and events (./openai-responses-passthrough.ts), and the gateway reads
// usage, text and function calls from this translation. Lenient where the
// count does not depend on it: output items other than messages and function
// calls (reasoning, hosted tools' calls, and any type added later) and events
// other than those below carry nothing to count and are skipped, never a
// failure. A count of the wrong type is a malformed answer (502), as usage is
// what a key is charged by. Pure.
// Wire format: https://platform.openai.com/docs/api-reference/responses/object
// and https://platform.openai.com/docs/api-reference/responses-streaming
//
//   response.created                          → role chunk (id, model, created)
//   response.output_text.delta                → content delta
//   response.refusal.delta                    → refusal delta
//   response.output_item.added function_call  → tool-call delta: index, call_id, name, arguments ''
//   response.function_call_arguments.delta    → arguments delta, same index
//   response.output_item.done function_call   → the whole call when no delta said it
//   response.completed, response.incomplete   → finish chunk, then usage chunk (choices [])
//   response.failed, error                    → UpstreamError 502 with the upstream's message
//
// A tool call's chat index counts function calls (0, 1, ...), not the
// Responses output_index, which also counts messages and reasoning items.

import { generateCompletionId, malformedResponseError } from '../chat/completion-response.ts';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, ToolCallDelta, Usage } from '../chat/types.ts';
import { upstreamStreamError, upstreamStreamTruncatedError } from '../upstream/upstream-errors.ts';
import { objectAt, optionalStringAt } from './anthropic-response.ts';

type Obj = Record<string, unknown>;

/** A whole Responses answer → a ChatCompletion. Throws UpstreamError 502 for
 * a body that is not an object, a failed response, or a malformed count. */
export function fromResponsesAnswer(raw: unknown): ChatCompletion {
  const body = objectAt(raw, '');
  if (body['status'] === 'failed') throw upstreamStreamError(body['error']);
  const output = body['output'];
  if (output !== undefined && output !== null && !Array.isArray(output)) throw malformedResponseError('output');
  let text = '';
  let refusal: string | null = null;
  const toolCalls: ToolCall[] = [];
  for (const item of (output as unknown[] | null | undefined) ?? []) {
    if (!isObject(item)) continue;
    if (item['type'] === 'message' && Array.isArray(item['content'])) {
      for (const part of item['content'] as unknown[]) {
        if (!isObject(part)) continue;
        if (part['type'] === 'output_text' && typeof part['text'] === 'string') text += part['text'];
        else if (part['type'] === 'refusal' && typeof part['refusal'] === 'string') refusal = (refusal ?? '') + part['refusal'];
      }
    } else if (item['type'] === 'function_call') {
      toolCalls.push({ id: stringOr(item['call_id'], ''), type: 'function', function: { name: stringOr(item['name'], ''), arguments: stringOr(item['arguments'], '') } });
    }
  }
  const completion: ChatCompletion = {
    id: optionalStringAt(body['id'], 'id') || generateCompletionId(),
    object: 'chat.completion',
    created: typeof body['created_at'] === 'number' ? Math.floor(body['created_at']) : Math.floor(Date.now() / 1000),
    model: optionalStringAt(body['model'], 'model') ?? '',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, refusal, tool_calls: toolCalls },
        logprobs: null,
        finish_reason: finishReasonOf(body, toolCalls.length > 0),
      },
    ],
  };
  const usage = usageOf(body['usage'], 'usage');
  if (usage !== undefined) completion.usage = usage;
  return completion;
}

/**
 * The finish reason of a finished response: `incomplete` for the output cap
 * is `length`, for the content filter `content_filter`; a completed one with
 * function calls is `tool_calls`; anything else that ended is `stop`.
 */
function finishReasonOf(response: Obj, calledTools: boolean): FinishReason {
  if (response['status'] === 'incomplete') {
    const details = response['incomplete_details'];
    const reason = isObject(details) ? details['reason'] : undefined;
    if (reason === 'max_output_tokens') return 'length';
    if (reason === 'content_filter') return 'content_filter';
  }
  return calledTools ? 'tool_calls' : 'stop';
}

/** Responses usage → chat usage: input tokens include the cached ones, as
 * prompt_tokens does; output tokens include the reasoning ones. */
function usageOf(raw: unknown, path: string): Usage | undefined {
  if (raw === undefined || raw === null) return undefined;
  const usage = objectAt(raw, path);
  const input = countAt(usage['input_tokens'], `${path}.input_tokens`) ?? 0;
  const output = countAt(usage['output_tokens'], `${path}.output_tokens`) ?? 0;
  const cached = countAt(detailAt(usage, 'input_tokens_details', path)?.['cached_tokens'], `${path}.input_tokens_details.cached_tokens`) ?? 0;
  const reasoning = countAt(detailAt(usage, 'output_tokens_details', path)?.['reasoning_tokens'], `${path}.output_tokens_details.reasoning_tokens`);
  const result: Usage = {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: countAt(usage['total_tokens'], `${path}.total_tokens`) ?? input + output,
    prompt_tokens_details: { cached_tokens: cached },
  };
  if (reasoning !== undefined) result.completion_tokens_details = { reasoning_tokens: reasoning };
  return result;
}

function detailAt(usage: Obj, name: string, path: string): Obj | undefined {
  const details = usage[name];
  return details === undefined || details === null ? undefined : objectAt(details, `${path}.${name}`);
}

function countAt(raw: unknown, path: string): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) throw malformedResponseError(path);
  return raw;
}

/** Where a Responses stream is: before its terminal event, or after it. */
const StreamState = {
  Open: 'open',
  /** response.completed or response.incomplete came: the answer is whole. */
  Finished: 'finished',
} as const;
type StreamState = (typeof StreamState)[keyof typeof StreamState];

/** One streamed Responses answer's events → chat chunks, for counting. */
export class ResponsesStreamTranslator {
  #state: StreamState = StreamState.Open;
  #id = '';
  #model = '';
  #created = 0;
  /** output_index of each function call → its chat index. */
  readonly #calls = new Map<number, { index: number; saidArguments: boolean }>();

  get finished(): boolean {
    return this.#state === StreamState.Finished;
  }

  /** Appends what `event` (its data parsed) says to `out`. Throws UpstreamError
   * 502 for response.failed and error events. */
  push(event: Obj, out: ChatCompletionChunk[]): void {
    switch (event['type']) {
      case 'response.created': {
        const response = isObject(event['response']) ? event['response'] : {};
        this.#id = stringOr(response['id'], '');
        this.#model = stringOr(response['model'], '');
        this.#created = typeof response['created_at'] === 'number' ? Math.floor(response['created_at']) : 0;
        out.push(this.#chunk({ role: 'assistant', content: '' }));
        return;
      }
      case 'response.output_text.delta':
        if (typeof event['delta'] === 'string' && event['delta'] !== '') out.push(this.#chunk({ content: event['delta'] }));
        return;
      case 'response.refusal.delta':
        if (typeof event['delta'] === 'string' && event['delta'] !== '') out.push(this.#chunk({ refusal: event['delta'] }));
        return;
      case 'response.output_item.added':
        this.#callAdded(event, out);
        return;
      case 'response.function_call_arguments.delta':
        this.#argumentsDelta(event, out);
        return;
      case 'response.output_item.done':
        this.#callDone(event, out);
        return;
      case 'response.completed':
      case 'response.incomplete':
        this.#finish(event, out);
        return;
      case 'response.failed': {
        const response = isObject(event['response']) ? event['response'] : {};
        throw upstreamStreamError(response['error']);
      }
      case 'error':
        throw upstreamStreamError(event);
      default:
        // Reasoning, hosted tools, content parts, and event types added later: nothing to count.
        return;
    }
  }

  /** The body ended: throws 502 `upstream_stream_truncated` unless the answer finished. */
  end(): void {
    if (this.#state !== StreamState.Finished) throw upstreamStreamTruncatedError();
  }

  #callAdded(event: Obj, out: ChatCompletionChunk[]): void {
    const item = event['item'];
    const at = event['output_index'];
    if (!isObject(item) || item['type'] !== 'function_call' || typeof at !== 'number' || this.#calls.has(at)) return;
    const index = this.#calls.size;
    const args = stringOr(item['arguments'], '');
    this.#calls.set(at, { index, saidArguments: args !== '' });
    const call: ToolCallDelta = { index, id: stringOr(item['call_id'], ''), type: 'function', function: { name: stringOr(item['name'], ''), arguments: args } };
    out.push(this.#chunk({ tool_calls: [call] }));
  }

  #argumentsDelta(event: Obj, out: ChatCompletionChunk[]): void {
    const call = typeof event['output_index'] === 'number' ? this.#calls.get(event['output_index']) : undefined;
    const delta = event['delta'];
    if (call === undefined || typeof delta !== 'string' || delta === '') return;
    call.saidArguments = true;
    out.push(this.#chunk({ tool_calls: [{ index: call.index, function: { arguments: delta } }] }));
  }

  /** A call no event announced is said whole; one announced without argument deltas gets its arguments. */
  #callDone(event: Obj, out: ChatCompletionChunk[]): void {
    const item = event['item'];
    const at = event['output_index'];
    if (!isObject(item) || item['type'] !== 'function_call' || typeof at !== 'number') return;
    const call = this.#calls.get(at);
    if (call === undefined) {
      this.#callAdded(event, out);
      return;
    }
    const args = stringOr(item['arguments'], '');
    if (call.saidArguments || args === '') return;
    call.saidArguments = true;
    out.push(this.#chunk({ tool_calls: [{ index: call.index, function: { arguments: args } }] }));
  }

  #finish(event: Obj, out: ChatCompletionChunk[]): void {
    this.#state = StreamState.Finished;
    const response = isObject(event['response']) ? event['response'] : {};
    const finish = this.#chunk({});
    (finish.choices[0] as { finish_reason: FinishReason | null }).finish_reason = finishReasonOf(response, this.#calls.size > 0);
    out.push(finish);
    const usage = usageOf(response['usage'], 'response.usage');
    if (usage !== undefined) out.push({ id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.#model, choices: [], usage });
  }

  #chunk(delta: ChatCompletionChunk['choices'][number]['delta']): ChatCompletionChunk {
    return { id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.#model, choices: [{ index: 0, delta, finish_reason: null }] };
  }
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
