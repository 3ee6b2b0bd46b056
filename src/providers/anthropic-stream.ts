// Anthropic's streamed message events → OpenAI chat-completion chunks: a pure
// state machine, one event in, zero or more chunks out. The event-stream
// parsing (bytes, lines, UTF-8) happens before, in ../sse/.
// Wire format: https://docs.anthropic.com/en/docs/build-with-claude/streaming
//
//   message_start                      → first chunk: role assistant, content ''
//   content_block_start text           → content delta (when it already has text)
//   content_block_delta text_delta     → content delta
//   content_block_start tool_use       → tool-call delta with index, id (decoded:
//                                        ./anthropic-tool-ids.ts), type and the
//                                        whole name, arguments ''
//   content_block_delta input_json_delta → arguments delta, same index
//   content_block_stop (tool_use)      → arguments '{}' if none came (a call
//                                        without arguments; '' is not JSON)
//   message_delta stop_reason          → chunk with finish_reason
//   message_stop                       → usage chunk (choices []), then done
//   ping, unknown event types, blocks other than text and tool_use → nothing
//   error                              → UpstreamError 502 with Anthropic's message
//
// A tool call's OpenAI index counts tool calls (0, 1, ...), not Anthropic's
// block index, which also counts text blocks: clients use it to address the
// call they are assembling.

import { malformedResponseError } from '../chat/completion-response.ts';
import type { ChatCompletionChunk, FinishReason, ToolCallDelta } from '../chat/types.ts';
import {
  type AnthropicTokenCounts,
  finishReasonOf,
  NO_TOKENS,
  objectAt,
  optionalStringAt,
  readTokenCounts,
  toUsage,
} from './anthropic-response.ts';
import { fromAnthropicToolId } from './anthropic-tool-ids.ts';
import { badUpstreamResponseError, upstreamStreamError, upstreamStreamTruncatedError } from '../upstream/upstream-errors.ts';

/** One event as the event-stream parser dispatched it. */
export interface AnthropicStreamEvent {
  event: string;
  data: string;
}

export interface AnthropicStreamTranslator {
  /** The chunks `event` produces. Throws UpstreamError (502) for an `error`
   * event or a malformed one; every later call rethrows it. */
  push(event: AnthropicStreamEvent): ChatCompletionChunk[];
  /** The upstream stream ended. Throws 502 `upstream_stream_truncated` unless
   * message_stop was seen. */
  end(): ChatCompletionChunk[];
  /** True once message_stop was seen: the message is complete. */
  readonly done: boolean;
}

export interface AnthropicStreamTranslatorOptions {
  /** `created` of every chunk; default now (Anthropic sends no timestamp). */
  created?: number;
}

const State = {
  /** Nothing but pings (or an error) before message_start. */
  AwaitingMessage: 'awaiting_message',
  Streaming: 'streaming',
  /** message_stop seen; later events are ignored. */
  Stopped: 'stopped',
  /** An error was thrown; every later call rethrows it. */
  Failed: 'failed',
} as const;
type State = (typeof State)[keyof typeof State];

const BlockKind = {
  Text: 'text',
  Tool: 'tool',
  /** thinking, server tools, anything newer: not relayed. */
  Skipped: 'skipped',
} as const;
type BlockKind = (typeof BlockKind)[keyof typeof BlockKind];

interface OpenBlock {
  kind: BlockKind;
  /** OpenAI tool-call index (Tool blocks only). */
  toolIndex: number;
  /** Arguments relayed so far, in characters. */
  argumentsLength: number;
  /** The input given whole in content_block_start, as JSON, or '' if empty. */
  initialInput: string;
}

export function createAnthropicStreamTranslator(options: AnthropicStreamTranslatorOptions = {}): AnthropicStreamTranslator {
  const created = options.created ?? Math.floor(Date.now() / 1000);
  let state: State = State.AwaitingMessage;
  let failure: unknown;
  let id = '';
  let model = '';
  let toolCount = 0;
  let finished = false;
  let counts: AnthropicTokenCounts = NO_TOKENS;
  let usageSeen = false;
  const blocks = new Map<number, OpenBlock>();

  function chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: FinishReason | null = null): ChatCompletionChunk {
    return { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  }

  function toolChunk(toolDelta: ToolCallDelta): ChatCompletionChunk {
    return chunk({ tool_calls: [toolDelta] });
  }

  function fail(error: unknown): never {
    state = State.Failed;
    failure = error;
    throw error;
  }

  function push(event: AnthropicStreamEvent): ChatCompletionChunk[] {
    if (state === State.Failed) throw failure;
    if (state === State.Stopped) return [];
    try {
      return handle(event);
    } catch (error) {
      return fail(error);
    }
  }

  function handle(event: AnthropicStreamEvent): ChatCompletionChunk[] {
    const body = parseEventData(event.data);
    // Anthropic names each event twice (SSE `event:` and data `type`); the
    // data is what its SDKs read.
    const type = typeof body['type'] === 'string' ? body['type'] : event.event;
    if (type === 'error' || event.event === 'error') throw upstreamStreamError(body['error'] ?? body);
    if (type === 'ping') return [];
    if (state === State.AwaitingMessage) {
      if (type !== 'message_start') throw badUpstreamResponseError('The upstream stream did not begin with message_start.');
      return messageStart(body);
    }
    switch (type) {
      case 'message_start':
        throw malformedResponseError('message_start');
      case 'content_block_start':
        return blockStart(body);
      case 'content_block_delta':
        return blockDelta(body);
      case 'content_block_stop':
        return blockStop(body);
      case 'message_delta':
        return messageDelta(body);
      case 'message_stop':
        return messageStop();
      default:
        // Anthropic's versioning policy: new event types may appear.
        return [];
    }
  }

  function messageStart(body: Record<string, unknown>): ChatCompletionChunk[] {
    const message = objectAt(body['message'], 'message_start.message');
    id = optionalStringAt(message['id'], 'message_start.message.id') ?? '';
    if (id === '') throw malformedResponseError('message_start.message.id');
    model = optionalStringAt(message['model'], 'message_start.message.model') ?? '';
    const usage = message['usage'];
    if (usage !== undefined && usage !== null) {
      counts = readTokenCounts(usage, 'message_start.message.usage', counts);
      usageSeen = true;
    }
    state = State.Streaming;
    return [chunk({ role: 'assistant', content: '' })];
  }

  function blockStart(body: Record<string, unknown>): ChatCompletionChunk[] {
    const index = blockIndexAt(body['index'], 'content_block_start.index');
    if (blocks.has(index)) throw malformedResponseError('content_block_start.index');
    const block = objectAt(body['content_block'], 'content_block_start.content_block');
    const path = 'content_block_start.content_block';
    switch (block['type']) {
      case 'text': {
        blocks.set(index, { kind: BlockKind.Text, toolIndex: -1, argumentsLength: 0, initialInput: '' });
        const text = optionalStringAt(block['text'], `${path}.text`) ?? '';
        return text.length === 0 ? [] : [chunk({ content: text })];
      }
      case 'tool_use': {
        const callId = optionalStringAt(block['id'], `${path}.id`) ?? '';
        if (callId === '') throw malformedResponseError(`${path}.id`);
        const name = optionalStringAt(block['name'], `${path}.name`) ?? '';
        if (name === '') throw malformedResponseError(`${path}.name`);
        const toolIndex = toolCount++;
        blocks.set(index, { kind: BlockKind.Tool, toolIndex, argumentsLength: 0, initialInput: initialInputOf(block['input'], `${path}.input`) });
        return [toolChunk({ index: toolIndex, id: fromAnthropicToolId(callId), type: 'function', function: { name, arguments: '' } })];
      }
      default:
        blocks.set(index, { kind: BlockKind.Skipped, toolIndex: -1, argumentsLength: 0, initialInput: '' });
        return [];
    }
  }

  function blockDelta(body: Record<string, unknown>): ChatCompletionChunk[] {
    const block = openBlockAt(body['index'], 'content_block_delta.index');
    const delta = objectAt(body['delta'], 'content_block_delta.delta');
    switch (delta['type']) {
      case 'text_delta': {
        if (block.kind === BlockKind.Skipped) return [];
        if (block.kind !== BlockKind.Text) throw malformedResponseError('content_block_delta.delta.type');
        const text = optionalStringAt(delta['text'], 'content_block_delta.delta.text') ?? '';
        return text.length === 0 ? [] : [chunk({ content: text })];
      }
      case 'input_json_delta': {
        if (block.kind === BlockKind.Skipped) return [];
        if (block.kind !== BlockKind.Tool) throw malformedResponseError('content_block_delta.delta.type');
        const json = optionalStringAt(delta['partial_json'], 'content_block_delta.delta.partial_json') ?? '';
        if (json.length === 0) return [];
        block.argumentsLength += json.length;
        return [toolChunk({ index: block.toolIndex, function: { arguments: json } })];
      }
      default:
        // thinking_delta, signature_delta, citations_delta, ...
        return [];
    }
  }

  function blockStop(body: Record<string, unknown>): ChatCompletionChunk[] {
    const index = blockIndexAt(body['index'], 'content_block_stop.index');
    const block = blocks.get(index);
    if (block === undefined) throw malformedResponseError('content_block_stop.index');
    blocks.delete(index);
    if (block.kind !== BlockKind.Tool || block.argumentsLength > 0) return [];
    const args = block.initialInput === '' ? '{}' : block.initialInput;
    return [toolChunk({ index: block.toolIndex, function: { arguments: args } })];
  }

  function messageDelta(body: Record<string, unknown>): ChatCompletionChunk[] {
    const usage = body['usage'];
    if (usage !== undefined && usage !== null) {
      // Cumulative counts: they replace what message_start said.
      counts = readTokenCounts(usage, 'message_delta.usage', counts);
      usageSeen = true;
    }
    const delta = body['delta'];
    if (delta === undefined || delta === null) return [];
    const reason = finishReasonOf(objectAt(delta, 'message_delta.delta')['stop_reason'], 'message_delta.delta.stop_reason');
    if (reason === null || finished) return [];
    finished = true;
    return [chunk({}, reason)];
  }

  function messageStop(): ChatCompletionChunk[] {
    state = State.Stopped;
    const out: ChatCompletionChunk[] = [];
    // The message is complete; a client still needs a terminal reason.
    if (!finished) {
      finished = true;
      out.push(chunk({}, 'stop'));
    }
    if (usageSeen) out.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: toUsage(counts) });
    return out;
  }

  function openBlockAt(raw: unknown, path: string): OpenBlock {
    const block = blocks.get(blockIndexAt(raw, path));
    if (block === undefined) throw malformedResponseError(path);
    return block;
  }

  function end(): ChatCompletionChunk[] {
    if (state === State.Stopped) return [];
    if (state === State.Failed) throw failure;
    return fail(upstreamStreamTruncatedError());
  }

  return {
    push,
    end,
    get done() {
      return state === State.Stopped;
    },
  };
}

function parseEventData(data: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    throw badUpstreamResponseError('The upstream provider returned a response that is not valid JSON.', error);
  }
  return objectAt(parsed, '');
}

function blockIndexAt(raw: unknown, path: string): number {
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) throw malformedResponseError(path);
  return raw;
}

/** The input a tool_use block starts with; Anthropic sends `{}` and streams the
 * rest, but a whole input is kept in case no delta follows. */
function initialInputOf(raw: unknown, path: string): string {
  if (raw === undefined || raw === null) return '';
  const input = objectAt(raw, path);
  return Object.keys(input).length === 0 ? '' : JSON.stringify(input);
}
