// Normalised chat-completion chunks → the Responses API's stream events, as the
// bytes to write (`event: <type>\ndata: <json>\n\n`). A pure state machine, one
// encoder per stream. Shapes and sources: ./response-types.ts. Grammar, as
// OpenAI streams it and openai-node's ResponseStream accepts it:
//
//   response.created             once, first: the response, status in_progress, output []
//   response.in_progress         once, right after
//   then per output item, one item at a time (each done before the next is added):
//     response.output_item.added   the item with status in_progress (a message with
//                                  no content; a function_call with its call_id,
//                                  name and arguments "")
//     message:  per part, one at a time:
//       response.content_part.added    the part empty (output_text "", refusal "")
//       response.output_text.delta     / response.refusal.delta, the pieces
//       response.output_text.done      / response.refusal.done, the whole text
//       response.content_part.done     the whole part
//     function_call:
//       response.function_call_arguments.delta   the pieces as they arrive
//       response.function_call_arguments.done    the whole arguments
//     response.output_item.done    the whole item, status completed (incomplete for
//                                  a message the output limit or a filter cut)
//   response.completed           once, last: the whole response with usage; or
//   response.incomplete          when the output limit (max_output_tokens) or the
//                                upstream's filter (content_filter) ended it
//
// Every event carries `sequence_number`, 0 for response.created and one more
// for each event after; item events carry `output_index` (counting the items)
// and `item_id`, part events `content_index` (counting the item's parts).
//
// A failure after the 200 (fail()) ends the stream with response.failed (the
// response, status failed, error {code, message}, output the items done so
// far), then `error` (the published flat ResponseErrorEvent with the gateway's
// own code, message and param). Codex reads response.failed (its error.code
// decides whether it retries) and ignores `error`; openai-node's stream throws
// an APIError on `error`. Nothing follows.
//
// Usage. Upstreams report it once, at the end (a final `choices: []` chunk,
// possibly after the finish reason), so the terminal event waits for end().
//
// Input: the chunks as ../chat/stream-relay.ts relays them: one choice
// (index 0), a tool call's first delta with its id and whole name, later ones
// only argument pieces. Text after a tool call opens a new message item. A
// call's arguments must be a JSON object once it is done ("" is `{}`, said by
// a delta of its own); otherwise push/end throw a 502 UpstreamError for the
// caller to hand to fail(). When the output limit or a filter cut the answer,
// the open call's arguments are partial by nature: a call cut before its
// arguments are whole gets no done events and is left out of the response
// (a client must not run it); a cut message is done with status incomplete.
// Arguments for a call after a later item began cannot be expressed (an item
// is not reopened once done) and throw like broken arguments.

import { generateToolCallId, malformedResponseError } from '../chat/completion-response.ts';
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../chat/types.ts';
import { ApiError, UpstreamError } from '../errors/api-error.ts';
import { isWholeObject } from '../chat/tool-arguments.ts';
import { errorBody } from '../errors/render.ts';
import {
  functionArgumentsOf,
  functionCallItem,
  generateResponseId,
  incompleteReasonOf,
  outputItemId,
  responseObject,
  type FunctionName,
} from './response-answer.ts';
import type {
  ItemStatus,
  ResponseContentPart,
  ResponseEcho,
  ResponseError,
  ResponseObject,
  ResponseOutputItem,
  ResponseStatus,
  ResponseStreamEventType,
} from './response-types.ts';

export interface ResponseStreamOptions {
  /** The alias the client asked for: the response's `model`. */
  alias: string;
  /** The response id; default `resp_` and 48 random hex digits. */
  id?: string;
  /** The clock, in milliseconds since the epoch; default Date.now (pass a Scheduler's now). */
  now?: () => number;
  /** What the response echoes of the client's request. */
  echo?: ResponseEcho;
  /** The upstream's function name → the name (and namespace) the client offered. */
  functionNames?: ReadonlyMap<string, FunctionName>;
}

const State = {
  /** Nothing written yet. */
  Idle: 'idle',
  /** response.created and response.in_progress written; items may come. */
  Streaming: 'streaming',
  /** The choice finished: every item done; waiting for end() (usage may still come). */
  Finished: 'finished',
  /** A terminal event written; nothing more. */
  Ended: 'ended',
  /** push or end threw; they rethrow it, and fail() may still end the stream. */
  Failed: 'failed',
} as const;
type State = (typeof State)[keyof typeof State];

const PartKind = {
  Text: 'output_text',
  Refusal: 'refusal',
} as const;
type PartKind = (typeof PartKind)[keyof typeof PartKind];

interface OpenPart {
  kind: PartKind;
  index: number;
  text: string;
}

interface OpenMessage {
  type: 'message';
  outputIndex: number;
  id: string;
  parts: ResponseContentPart[];
  part: OpenPart | null;
}

interface OpenCall {
  type: 'function_call';
  outputIndex: number;
  id: string;
  /** The OpenAI tool-call index. */
  toolIndex: number;
  callId: string;
  name: string;
  args: string;
}

type OpenItem = OpenMessage | OpenCall;

export function createResponseStreamEncoder(options: ResponseStreamOptions): ResponseStreamEncoder {
  return new ResponseStreamEncoder(options);
}

/** The encoder of one stream: prototype methods, the state in fields. */
export class ResponseStreamEncoder {
  readonly #alias: string;
  readonly #id: string;
  readonly #now: () => number;
  readonly #echo: ResponseEcho | undefined;
  readonly #functionNames: ReadonlyMap<string, FunctionName> | undefined;
  #state: State = State.Idle;
  #failure: unknown;
  #sequence = 0;
  #createdAt = 0;
  /** Output indexes handed out, including a call left out. */
  #nextIndex = 0;
  #open: OpenItem | null = null;
  /** The items done, in order: the response's output. */
  readonly #output: ResponseOutputItem[] = [];
  /** OpenAI tool-call index → its call, for every call begun. */
  readonly #calls = new Map<number, OpenCall>();
  #finishReason: FinishReason | null = null;
  #usage: Usage | undefined;

  constructor(options: ResponseStreamOptions) {
    this.#alias = options.alias;
    this.#id = options.id ?? generateResponseId();
    this.#now = options.now ?? Date.now;
    this.#echo = options.echo;
    this.#functionNames = options.functionNames;
  }

  get id(): string {
    return this.#id;
  }

  /** True once a terminal event was written. */
  get ended(): boolean {
    return this.#state === State.Ended;
  }

  /** Appends response.created and response.in_progress unless written already:
   * a caller may send them before the upstream's first chunk. */
  start(out: string[] = []): string[] {
    if (this.#state !== State.Idle) return out;
    this.#createdAt = Math.floor(this.#now() / 1000);
    this.#state = State.Streaming;
    const response = this.#response('in_progress');
    this.#event(out, 'response.created', { response });
    this.#event(out, 'response.in_progress', { response });
    return out;
  }

  /** Appends the events for one chunk to `out` (default a new array) and
   * returns it. When it throws, the events already appended to `out` are part
   * of the stream (their sequence numbers are spent): write them, then fail()'s. */
  push(chunk: ChatCompletionChunk, out: string[] = []): string[] {
    if (this.#state === State.Failed) throw this.#failure;
    if (this.#state === State.Ended) return out;
    try {
      this.start(out);
      if (chunk.usage !== undefined && chunk.usage !== null) this.#usage = chunk.usage;
      for (let i = 0; i < chunk.choices.length; i++) this.#choice(chunk.choices[i] as ChatCompletionChunk['choices'][number], i, out);
      return out;
    } catch (error) {
      return this.#throw(error);
    }
  }

  /** The upstream ended: appends response.completed or response.incomplete.
   * Throws 502 `upstream_stream_truncated` when the choice never finished. */
  end(out: string[] = []): string[] {
    if (this.#state === State.Failed) throw this.#failure;
    if (this.#state === State.Ended) return out;
    if (this.#state !== State.Finished) {
      return this.#throw(new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.'));
    }
    const incomplete = incompleteReasonOf(this.#finishReason);
    const status: ResponseStatus = incomplete === null ? 'completed' : 'incomplete';
    this.#event(out, incomplete === null ? 'response.completed' : 'response.incomplete', { response: this.#response(status) });
    this.#state = State.Ended;
    return out;
  }

  /**
   * A failure after the 200 (`error` as push/end threw it, or the caller's:
   * an upstream timeout, a broken connection): appends response.failed and
   * error, then nothing more is written. What reaches the client is what the
   * gateway's error envelope says (anything but an ApiError is the generic 500's).
   */
  fail(error: unknown, out: string[] = []): string[] {
    if (this.#state === State.Ended) return out;
    if (this.#state === State.Idle) this.start(out);
    this.#state = State.Ended;
    const envelope = errorBody(error).error;
    // Response.error.code is an enum: a 429 is rate_limit_exceeded, every other failure server_error.
    const code = error instanceof ApiError && error.status === 429 ? 'rate_limit_exceeded' : 'server_error';
    const responseError: ResponseError = { code, message: envelope.message };
    this.#event(out, 'response.failed', { response: this.#response('failed', responseError) });
    this.#event(out, 'error', { code: envelope.code, message: envelope.message, param: envelope.param });
    return out;
  }

  #throw(error: unknown): never {
    this.#state = State.Failed;
    this.#failure = error;
    throw error;
  }

  #response(status: ResponseStatus, error: ResponseError | null = null): ResponseObject {
    return responseObject({
      id: this.#id,
      alias: this.#alias,
      createdAt: this.#createdAt,
      status,
      completedAt: status === 'completed' ? Math.floor(this.#now() / 1000) : null,
      error,
      incomplete: status === 'incomplete' ? incompleteReasonOf(this.#finishReason) : null,
      output: this.#output.slice(),
      usage: status === 'completed' || status === 'incomplete' ? this.#usage : undefined,
      echo: this.#echo,
    });
  }

  #event(out: string[], type: ResponseStreamEventType, fields: Record<string, unknown>): void {
    const data = JSON.stringify({ type, sequence_number: this.#sequence++, ...fields });
    out.push(`event: ${type}\ndata: ${data}\n\n`);
  }

  #choice(choice: ChatCompletionChunk['choices'][number], position: number, out: string[]): void {
    if (choice.index !== 0) throw malformedResponseError(`choices[${position}].index`);
    // Like the relay: nothing of a choice counts after its finish reason.
    if (this.#state === State.Finished) return;
    const delta = choice.delta;
    if (typeof delta.content === 'string' && delta.content !== '') this.#text(PartKind.Text, delta.content, out);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') this.#text(PartKind.Refusal, delta.refusal, out);
    const calls = delta.tool_calls;
    if (calls !== undefined) for (let i = 0; i < calls.length; i++) this.#toolPiece(calls[i] as ToolCallDelta, position, i, out);
    if (choice.finish_reason !== null) {
      this.#finishReason = choice.finish_reason;
      this.#closeOpen(out, incompleteReasonOf(choice.finish_reason) !== null);
      this.#state = State.Finished;
    }
  }

  #text(kind: PartKind, text: string, out: string[]): void {
    let item = this.#open;
    if (item === null || item.type !== 'message') {
      this.#closeOpen(out, false);
      const outputIndex = this.#nextIndex++;
      const message: OpenMessage = { type: 'message', outputIndex, id: outputItemId('msg', this.#id, outputIndex), parts: [], part: null };
      this.#open = item = message;
      const added = { id: message.id, type: 'message', status: 'in_progress', content: [], role: 'assistant' };
      this.#event(out, 'response.output_item.added', { output_index: message.outputIndex, item: added });
    }
    let part = item.part;
    if (part === null || part.kind !== kind) {
      this.#closePart(item, out);
      part = item.part = { kind, index: item.parts.length, text: '' };
      this.#event(out, 'response.content_part.added', { item_id: item.id, output_index: item.outputIndex, content_index: part.index, part: wholePart(kind, '') });
    }
    part.text += text;
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: part.index };
    if (kind === PartKind.Text) this.#event(out, 'response.output_text.delta', { ...where, delta: text, logprobs: [] });
    else this.#event(out, 'response.refusal.delta', { ...where, delta: text });
  }

  #closePart(item: OpenMessage, out: string[]): void {
    const part = item.part;
    if (part === null) return;
    item.part = null;
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: part.index };
    if (part.kind === PartKind.Text) this.#event(out, 'response.output_text.done', { ...where, text: part.text, logprobs: [] });
    else this.#event(out, 'response.refusal.done', { ...where, refusal: part.text });
    const whole = wholePart(part.kind, part.text);
    item.parts.push(whole);
    this.#event(out, 'response.content_part.done', { ...where, part: whole });
  }

  #toolPiece(piece: ToolCallDelta, position: number, i: number, out: string[]): void {
    let call = this.#calls.get(piece.index);
    if (call === undefined) {
      const name = piece.function?.name;
      if (name === undefined || name === '') throw malformedResponseError(`choices[${position}].delta.tool_calls[${i}].function.name`);
      this.#closeOpen(out, false);
      const outputIndex = this.#nextIndex++;
      const callId = piece.id === undefined || piece.id === '' ? generateToolCallId() : piece.id;
      call = { type: 'function_call', outputIndex, id: outputItemId('fc', this.#id, outputIndex), toolIndex: piece.index, callId, name, args: '' };
      this.#calls.set(piece.index, call);
      this.#open = call;
      const item = functionCallItem(call.id, 'in_progress', '', callId, name, this.#functionNames);
      this.#event(out, 'response.output_item.added', { output_index: outputIndex, item });
    } else if (call !== this.#open) {
      const current = this.#open === null ? 'the answer went on' : `output item ${this.#open.outputIndex} began`;
      throw new UpstreamError(
        'bad_upstream_response',
        `The upstream provider sent arguments for tool call ${piece.index} after ${current}; a Responses stream cannot reopen an output item.`,
      );
    }
    const args = piece.function?.arguments;
    if (args === undefined || args === '') return;
    call.args += args;
    this.#event(out, 'response.function_call_arguments.delta', { item_id: call.id, output_index: call.outputIndex, delta: args });
  }

  /** Ends the open item, if any. `cut`: the output limit or a filter ended the
   * answer in it, so a message is incomplete and a call whose arguments are
   * not whole is left out. */
  #closeOpen(out: string[], cut: boolean): void {
    const item = this.#open;
    if (item === null) return;
    this.#open = null;
    if (item.type === 'message') {
      this.#closePart(item, out);
      const status: ItemStatus = cut ? 'incomplete' : 'completed';
      const done: ResponseOutputItem = { id: item.id, type: 'message', status, content: item.parts, role: 'assistant' };
      this.#output.push(done);
      this.#event(out, 'response.output_item.done', { output_index: item.outputIndex, item: done });
      return;
    }
    if (cut && !isWholeObject(item.args)) return;
    const args = functionArgumentsOf(item.args, `tool_calls[${item.toolIndex}].function.arguments`);
    const where = { item_id: item.id, output_index: item.outputIndex };
    // A call without arguments: its `{}` is said as a delta too, so the pieces add up to the whole.
    if (item.args === '') this.#event(out, 'response.function_call_arguments.delta', { ...where, delta: args });
    this.#event(out, 'response.function_call_arguments.done', { ...where, arguments: args });
    const done = functionCallItem(item.id, 'completed', args, item.callId, item.name, this.#functionNames);
    this.#output.push(done);
    this.#event(out, 'response.output_item.done', { output_index: item.outputIndex, item: done });
  }
}

function wholePart(kind: PartKind, text: string): ResponseContentPart {
  return kind === PartKind.Text ? { type: 'output_text', annotations: [], logprobs: [], text } : { type: 'refusal', refusal: text };
}
