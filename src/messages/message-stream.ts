// Normalised chat-completion chunks → Anthropic's streamed Messages events, as
// the bytes to write (`event: <type>\ndata: <json>\n\n`). A pure state machine,
// one encoder per stream. Grammar, from Anthropic's streaming reference
// (https://platform.claude.com/docs/en/build-with-claude/streaming) and what
// its SDK's parser and accumulator accept (anthropic-sdk-typescript
// src/core/streaming.ts, src/lib/MessageStream.ts):
//
//   message_start        once, first: the message with empty content, stop_reason null
//   content_block_start  once per block, before any delta of it; `index` counts
//                        every block (0, 1, ...); text starts `text: ""`, tool_use
//                        starts with `input: {}` (the SDK builds the input from the
//                        input_json_delta pieces, never from this)
//   content_block_delta  text_delta for text; input_json_delta whose partial_json
//                        is each OpenAI arguments piece as it arrives
//   content_block_stop   once per started block; a block is stopped before the next
//                        one starts (text before a tool call, one tool call before
//                        the next), and the open one when the choice finishes
//   message_delta        once, after every block: stop_reason, stop_sequence, usage
//   message_stop         once, last
//   ping                 any time (PING_EVENT), for keep-alives; SDKs skip it
//   error                for a failure after the 200 (messageErrorEvent); nothing
//                        follows it, as on Anthropic's own streams
//
// The SDK dispatches on the SSE `event:` field (streaming.ts only parses data
// whose event name it knows), so every event carries both `event:` and a data
// `type`, equal.
//
// Usage. OpenAI-compatible upstreams report usage once, at the end (a final
// `choices: []` chunk), so message_start carries the input tokens only when the
// caller knows them beforehand (`inputTokens`), else 0; message_delta carries
// all four counts from the last usage the upstream gave. The SDKs take them
// from there: their accumulators (TypeScript src/lib/MessageStream.ts, Python
// src/anthropic/lib/streaming/_messages.py accumulate_event) overwrite
// output_tokens always, and input_tokens and both cache counts whenever
// message_delta's are not null; Anthropic's own streams repeat them there too.
// Without any upstream usage, message_delta says only `output_tokens: 0`.
// That is why message_delta waits for end(): a usage-only chunk after the
// finish reason must land in it.
//
// Input: the chunks as ../chat/stream-relay.ts relays them (with includeUsage):
// one choice (index 0; a Messages request has no `n`), a tool call's first
// delta carrying its id and whole name, later ones only argument pieces. A tool
// call whose arguments, once complete, are not a JSON object is the upstream's
// fault: the block is not stopped, and push/end throw a 502 UpstreamError for
// the caller to send as an error event (a client must not run the tool on a
// broken input). Empty arguments are `{}` (a tool without parameters). When
// the output limit cuts the answer (finish_reason "length") the open tool
// call's arguments are partial by nature: its block is stopped unchecked and
// stop_reason is max_tokens, as Anthropic streams a tool call cut by
// max_tokens (the client sees the stop reason and does not run it). Arguments
// for a call after a later call began cannot be expressed (Anthropic's blocks
// do not reopen) and throw like a broken input.

import { generateToolCallId, malformedResponseError } from '../chat/completion-response.ts';
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../chat/types.ts';
import { UpstreamError } from '../errors/api-error.ts';
import { generateMessageId, stopReasonOf, toolInputOf, usageOf } from './message-response.ts';
import type { AnthropicErrorType } from './message-types.ts';

export interface MessageStreamOptions {
  /** The alias the client asked for: the message's `model`. */
  alias: string;
  /** The message id; default `msg_` and 24 random hex digits. */
  id?: string;
  /** The request's input tokens, when known before the upstream answers: for message_start. */
  inputTokens?: number;
}

/** A keep-alive event; Anthropic sends them too, and SDKs skip them. */
export const PING_EVENT = 'event: ping\ndata: {"type":"ping"}\n\n';

/** The event for a failure once the 200 has gone: Anthropic's error shape. */
export function messageErrorEvent(type: AnthropicErrorType, message: string): string {
  return sseEvent('error', JSON.stringify({ type: 'error', error: { type, message } }));
}

const State = {
  /** Nothing written yet. */
  Idle: 'idle',
  /** message_start written; blocks may come. */
  Streaming: 'streaming',
  /** The choice finished: every block stopped; waiting for end() (usage may still come). */
  Finished: 'finished',
  /** message_stop written. */
  Ended: 'ended',
  /** push or end threw; every later call rethrows it. */
  Failed: 'failed',
} as const;
type State = (typeof State)[keyof typeof State];

const BlockKind = {
  Text: 'text',
  Tool: 'tool',
} as const;
type BlockKind = (typeof BlockKind)[keyof typeof BlockKind];

interface OpenBlock {
  kind: BlockKind;
  /** Anthropic's block index. */
  index: number;
  /** The OpenAI tool-call index (Tool blocks). */
  toolIndex: number;
  /** The arguments so far (Tool blocks), checked when the block stops. */
  args: string;
}

export function createMessageStreamEncoder(options: MessageStreamOptions): MessageStreamEncoder {
  return new MessageStreamEncoder(options);
}

/** The encoder of one stream: prototype methods, the state in fields. */
export class MessageStreamEncoder {
  readonly #alias: string;
  readonly #id: string;
  readonly #inputTokens: number;
  #state: State = State.Idle;
  #failure: unknown;
  #nextIndex = 0;
  #open: OpenBlock | null = null;
  /** OpenAI tool-call index → its block, for every call begun. */
  readonly #tools = new Map<number, OpenBlock>();
  #finishReason: FinishReason | null = null;
  #refused = false;
  #usage: Usage | undefined;

  constructor(options: MessageStreamOptions) {
    this.#alias = options.alias;
    this.#id = options.id ?? generateMessageId();
    this.#inputTokens = options.inputTokens ?? 0;
  }

  /** True once message_stop was written. */
  get ended(): boolean {
    return this.#state === State.Ended;
  }

  /** Appends the events for one chunk to `out` (default a new array) and returns it. */
  push(chunk: ChatCompletionChunk, out: string[] = []): string[] {
    if (this.#state === State.Failed) throw this.#failure;
    if (this.#state === State.Ended) return out;
    try {
      this.#start(out);
      if (chunk.usage !== undefined && chunk.usage !== null) this.#usage = chunk.usage;
      for (let i = 0; i < chunk.choices.length; i++) this.#choice(chunk.choices[i] as ChatCompletionChunk['choices'][number], i, out);
      return out;
    } catch (error) {
      return this.#fail(error);
    }
  }

  /** The upstream ended: appends message_delta and message_stop. Throws 502
   * `upstream_stream_truncated` when the choice never finished. */
  end(out: string[] = []): string[] {
    if (this.#state === State.Failed) throw this.#failure;
    if (this.#state === State.Ended) return out;
    if (this.#state !== State.Finished) {
      return this.#fail(new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.'));
    }
    const delta = { stop_reason: stopReasonOf(this.#finishReason, this.#tools.size > 0, this.#refused), stop_sequence: null };
    const usage = this.#usage === undefined ? { output_tokens: 0 } : usageOf(this.#usage);
    out.push(sseEvent('message_delta', JSON.stringify({ type: 'message_delta', delta, usage })));
    out.push('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    this.#state = State.Ended;
    return out;
  }

  #fail(error: unknown): never {
    this.#state = State.Failed;
    this.#failure = error;
    throw error;
  }

  #start(out: string[]): void {
    if (this.#state !== State.Idle) return;
    const message = {
      id: this.#id,
      type: 'message',
      role: 'assistant',
      model: this.#alias,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: this.#inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    };
    out.push(sseEvent('message_start', JSON.stringify({ type: 'message_start', message })));
    this.#state = State.Streaming;
  }

  #choice(choice: ChatCompletionChunk['choices'][number], position: number, out: string[]): void {
    if (choice.index !== 0) throw malformedResponseError(`choices[${position}].index`);
    // Like the relay: nothing of a choice counts after its finish reason.
    if (this.#state === State.Finished) return;
    const delta = choice.delta;
    if (typeof delta.content === 'string' && delta.content !== '') this.#text(delta.content, out);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      this.#refused = true;
      this.#text(delta.refusal, out);
    }
    const calls = delta.tool_calls;
    if (calls !== undefined) for (let i = 0; i < calls.length; i++) this.#toolPiece(calls[i] as ToolCallDelta, position, i, out);
    if (choice.finish_reason !== null) {
      this.#stopOpen(out, choice.finish_reason !== 'length');
      this.#finishReason = choice.finish_reason;
      this.#state = State.Finished;
    }
  }

  #text(text: string, out: string[]): void {
    let block = this.#open;
    if (block === null || block.kind !== BlockKind.Text) {
      this.#stopOpen(out);
      block = this.#begin(BlockKind.Text, -1);
      out.push(sseEvent('content_block_start', `{"type":"content_block_start","index":${block.index},"content_block":{"type":"text","text":""}}`));
    }
    const data = JSON.stringify({ type: 'content_block_delta', index: block.index, delta: { type: 'text_delta', text } });
    out.push(sseEvent('content_block_delta', data));
  }

  #toolPiece(piece: ToolCallDelta, position: number, i: number, out: string[]): void {
    let block = this.#tools.get(piece.index);
    if (block === undefined) {
      const name = piece.function?.name;
      if (name === undefined || name === '') throw malformedResponseError(`choices[${position}].delta.tool_calls[${i}].function.name`);
      const id = piece.id === undefined || piece.id === '' ? generateToolCallId() : piece.id;
      this.#stopOpen(out);
      block = this.#begin(BlockKind.Tool, piece.index);
      this.#tools.set(piece.index, block);
      const start = { type: 'content_block_start', index: block.index, content_block: { type: 'tool_use', id, name, input: {} } };
      out.push(sseEvent('content_block_start', JSON.stringify(start)));
    } else if (block !== this.#open) {
      const current = this.#open === null ? 'the answer went on' : `tool call ${this.#open.toolIndex} began`;
      throw new UpstreamError(
        'bad_upstream_response',
        `The upstream provider sent arguments for tool call ${piece.index} after ${current}; a Messages stream cannot reopen a content block.`,
      );
    }
    const args = piece.function?.arguments;
    if (args === undefined || args === '') return;
    block.args += args;
    const data = JSON.stringify({ type: 'content_block_delta', index: block.index, delta: { type: 'input_json_delta', partial_json: args } });
    out.push(sseEvent('content_block_delta', data));
  }

  #begin(kind: BlockKind, toolIndex: number): OpenBlock {
    const block: OpenBlock = { kind, index: this.#nextIndex++, toolIndex, args: '' };
    this.#open = block;
    return block;
  }

  /** Stops the open block, if any; a tool call's input must be a JSON object by
   * then, unless the output limit cut it (`check` false). */
  #stopOpen(out: string[], check = true): void {
    const block = this.#open;
    if (block === null) return;
    if (check && block.kind === BlockKind.Tool) {
      const path = `tool_calls[${block.toolIndex}].function.arguments`;
      toolInputOf(block.args, path);
      // A call without arguments: its input is said, not left to the start's placeholder.
      if (block.args === '') out.push(sseEvent('content_block_delta', `{"type":"content_block_delta","index":${block.index},"delta":{"type":"input_json_delta","partial_json":"{}"}}`));
    }
    this.#open = null;
    out.push(sseEvent('content_block_stop', `{"type":"content_block_stop","index":${block.index}}`));
  }
}

function sseEvent(type: string, data: string): string {
  return `event: ${type}\ndata: ${data}\n\n`;
}
