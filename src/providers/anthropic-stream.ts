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
  /** Appends the chunks `event` produces to `out` (default a new array) and
   * returns it. Throws UpstreamError (502) for an `error` event or a
   * malformed one; every later call rethrows it. */
  push(event: AnthropicStreamEvent, out?: ChatCompletionChunk[]): ChatCompletionChunk[];
  /** The upstream stream ended: `out`, unchanged. Throws 502
   * `upstream_stream_truncated` unless message_stop was seen. */
  end(out?: ChatCompletionChunk[]): ChatCompletionChunk[];
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
  return new StreamTranslator(options.created ?? Math.floor(Date.now() / 1000));
}

/** The state machine of one stream: prototype methods, the state in fields. */
class StreamTranslator implements AnthropicStreamTranslator {
  readonly #created: number;
  #state: State = State.AwaitingMessage;
  #failure: unknown;
  #id = '';
  #model = '';
  #toolCount = 0;
  #finished = false;
  #counts: AnthropicTokenCounts = NO_TOKENS;
  #usageSeen = false;
  readonly #blocks = new Map<number, OpenBlock>();

  constructor(created: number) {
    this.#created = created;
  }

  get done(): boolean {
    return this.#state === State.Stopped;
  }

  push(event: AnthropicStreamEvent, out: ChatCompletionChunk[] = []): ChatCompletionChunk[] {
    if (this.#state === State.Failed) throw this.#failure;
    if (this.#state === State.Stopped) return out;
    try {
      this.#handle(event, out);
      return out;
    } catch (error) {
      return this.#fail(error);
    }
  }

  end(out: ChatCompletionChunk[] = []): ChatCompletionChunk[] {
    if (this.#state === State.Stopped) return out;
    if (this.#state === State.Failed) throw this.#failure;
    return this.#fail(upstreamStreamTruncatedError());
  }

  #chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: FinishReason | null = null): ChatCompletionChunk {
    return { id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.#model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  }

  #toolChunk(toolDelta: ToolCallDelta): ChatCompletionChunk {
    return this.#chunk({ tool_calls: [toolDelta] });
  }

  #fail(error: unknown): never {
    this.#state = State.Failed;
    this.#failure = error;
    throw error;
  }

  #handle(event: AnthropicStreamEvent, out: ChatCompletionChunk[]): void {
    const body = parseEventData(event.data);
    // Anthropic names each event twice (SSE `event:` and data `type`); the
    // data is what its SDKs read.
    const type = typeof body['type'] === 'string' ? body['type'] : event.event;
    if (type === 'error' || event.event === 'error') throw upstreamStreamError(body['error'] ?? body);
    if (type === 'ping') return;
    if (this.#state === State.AwaitingMessage) {
      if (type !== 'message_start') throw badUpstreamResponseError('The upstream stream did not begin with message_start.');
      this.#messageStart(body, out);
      return;
    }
    switch (type) {
      case 'message_start':
        throw malformedResponseError('message_start');
      case 'content_block_start':
        this.#blockStart(body, out);
        return;
      case 'content_block_delta':
        this.#blockDelta(body, out);
        return;
      case 'content_block_stop':
        this.#blockStop(body, out);
        return;
      case 'message_delta':
        this.#messageDelta(body, out);
        return;
      case 'message_stop':
        this.#messageStop(out);
        return;
      default:
        // Anthropic's versioning policy: new event types may appear.
        return;
    }
  }

  #messageStart(body: Record<string, unknown>, out: ChatCompletionChunk[]): void {
    const message = objectAt(body['message'], 'message_start.message');
    this.#id = optionalStringAt(message['id'], 'message_start.message.id') ?? '';
    if (this.#id === '') throw malformedResponseError('message_start.message.id');
    this.#model = optionalStringAt(message['model'], 'message_start.message.model') ?? '';
    const usage = message['usage'];
    if (usage !== undefined && usage !== null) {
      this.#counts = readTokenCounts(usage, 'message_start.message.usage', this.#counts);
      this.#usageSeen = true;
    }
    this.#state = State.Streaming;
    out.push(this.#chunk({ role: 'assistant', content: '' }));
  }

  #blockStart(body: Record<string, unknown>, out: ChatCompletionChunk[]): void {
    const index = blockIndexAt(body['index'], 'content_block_start.index');
    if (this.#blocks.has(index)) throw malformedResponseError('content_block_start.index');
    const block = objectAt(body['content_block'], 'content_block_start.content_block');
    const path = 'content_block_start.content_block';
    switch (block['type']) {
      case 'text': {
        this.#blocks.set(index, { kind: BlockKind.Text, toolIndex: -1, argumentsLength: 0, initialInput: '' });
        const text = optionalStringAt(block['text'], `${path}.text`) ?? '';
        if (text.length > 0) out.push(this.#chunk({ content: text }));
        return;
      }
      case 'tool_use': {
        const callId = optionalStringAt(block['id'], `${path}.id`) ?? '';
        if (callId === '') throw malformedResponseError(`${path}.id`);
        const name = optionalStringAt(block['name'], `${path}.name`) ?? '';
        if (name === '') throw malformedResponseError(`${path}.name`);
        const toolIndex = this.#toolCount++;
        this.#blocks.set(index, { kind: BlockKind.Tool, toolIndex, argumentsLength: 0, initialInput: initialInputOf(block['input'], `${path}.input`) });
        out.push(this.#toolChunk({ index: toolIndex, id: fromAnthropicToolId(callId), type: 'function', function: { name, arguments: '' } }));
        return;
      }
      default:
        this.#blocks.set(index, { kind: BlockKind.Skipped, toolIndex: -1, argumentsLength: 0, initialInput: '' });
    }
  }

  #blockDelta(body: Record<string, unknown>, out: ChatCompletionChunk[]): void {
    const block = this.#openBlockAt(body['index'], 'content_block_delta.index');
    const delta = objectAt(body['delta'], 'content_block_delta.delta');
    switch (delta['type']) {
      case 'text_delta': {
        if (block.kind === BlockKind.Skipped) return;
        if (block.kind !== BlockKind.Text) throw malformedResponseError('content_block_delta.delta.type');
        const text = optionalStringAt(delta['text'], 'content_block_delta.delta.text') ?? '';
        if (text.length > 0) out.push(this.#chunk({ content: text }));
        return;
      }
      case 'input_json_delta': {
        if (block.kind === BlockKind.Skipped) return;
        if (block.kind !== BlockKind.Tool) throw malformedResponseError('content_block_delta.delta.type');
        const json = optionalStringAt(delta['partial_json'], 'content_block_delta.delta.partial_json') ?? '';
        if (json.length === 0) return;
        block.argumentsLength += json.length;
        out.push(this.#toolChunk({ index: block.toolIndex, function: { arguments: json } }));
        return;
      }
      default:
        // thinking_delta, signature_delta, citations_delta, ...
        return;
    }
  }

  #blockStop(body: Record<string, unknown>, out: ChatCompletionChunk[]): void {
    const index = blockIndexAt(body['index'], 'content_block_stop.index');
    const block = this.#blocks.get(index);
    if (block === undefined) throw malformedResponseError('content_block_stop.index');
    this.#blocks.delete(index);
    if (block.kind !== BlockKind.Tool || block.argumentsLength > 0) return;
    const args = block.initialInput === '' ? '{}' : block.initialInput;
    out.push(this.#toolChunk({ index: block.toolIndex, function: { arguments: args } }));
  }

  #messageDelta(body: Record<string, unknown>, out: ChatCompletionChunk[]): void {
    const usage = body['usage'];
    if (usage !== undefined && usage !== null) {
      // Cumulative counts: they replace what message_start said.
      this.#counts = readTokenCounts(usage, 'message_delta.usage', this.#counts);
      this.#usageSeen = true;
    }
    const delta = body['delta'];
    if (delta === undefined || delta === null) return;
    const reason = finishReasonOf(objectAt(delta, 'message_delta.delta')['stop_reason'], 'message_delta.delta.stop_reason');
    if (reason === null || this.#finished) return;
    this.#finished = true;
    out.push(this.#chunk({}, reason));
  }

  #messageStop(out: ChatCompletionChunk[]): void {
    this.#state = State.Stopped;
    // The message is complete; a client still needs a terminal reason.
    if (!this.#finished) {
      this.#finished = true;
      out.push(this.#chunk({}, 'stop'));
    }
    if (this.#usageSeen) out.push({ id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.#model, choices: [], usage: toUsage(this.#counts) });
  }

  #openBlockAt(raw: unknown, path: string): OpenBlock {
    const block = this.#blocks.get(blockIndexAt(raw, path));
    if (block === undefined) throw malformedResponseError(path);
    return block;
  }
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
