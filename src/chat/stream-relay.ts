// The chunk relay between a provider's normalised stream and the client. It
// enforces the wire rules real SDKs depend on (../../shared/CLIENTS.md,
// "Stream"), whatever the upstream's habits:
//
// - every chunk carries the same `id` and `created` (those of the first upstream
//   chunk, or generated) and `model` = the resolved alias;
// - a choice's first delta carries `role: "assistant"` (injected when missing);
// - a tool call's first delta carries `index`, `id` (generated when the upstream
//   sent none), `type: "function"` and the whole `function.name`; later deltas of
//   that call carry only `index` and `function.arguments`. LangChain concatenates
//   every string field of tool-call chunks, so repeated ids or names would corrupt
//   them; openai-node and the Vercel AI SDK take the name from the first delta.
//   To get the whole name, a call's deltas are held back until its arguments
//   begin (non-empty), another call of the same choice starts, or the choice
//   finishes: one chunk of delay for upstreams that send the name first;
// - a choice's finish_reason is sent once, on its last chunk; anything an
//   upstream sends for a choice after its finish is dropped;
// - usage never rides on a choice chunk: the last usage the upstream gave
//   (servers that report it on every chunk report running totals) is handed to
//   the pump's control once when the upstream ends, and, only with `includeUsage`, sent as
//   one `choices: []` chunk after the last choice chunk. Without upstream usage
//   no usage chunk is invented (the spec lets usage be omitted);
// - chunks with nothing left to say (keep-alives, deltas fully held back) are
//   dropped; no other buffering happens.
//
// The policy is the pure `ChunkRelay`; the one async glue is the stream
// pump, src/gateway/event-stream-pump.ts.

import { UpstreamError } from '../errors/api-error.ts';
import { generateCompletionId, generateToolCallId, malformedResponseError } from './completion-response.ts';
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from './types.ts';

export interface RelayOptions {
  /** The resolved alias every chunk names as its `model`. */
  alias: string;
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
}

type ChunkChoice = ChatCompletionChunk['choices'][number];
type ChunkDelta = ChunkChoice['delta'];

const ToolCallState = {
  /** Name may still be arriving; id, name and arguments are accumulated. */
  Buffering: 'buffering',
  /** First delta sent; only argument pieces go through. */
  Streaming: 'streaming',
} as const;
type ToolCallState = (typeof ToolCallState)[keyof typeof ToolCallState];

interface ToolCallTrack {
  state: ToolCallState;
  index: number;
  id: string;
  name: string;
  args: string;
}

interface ChoiceTrack {
  roleSent: boolean;
  finished: boolean;
  toolCalls: Map<number, ToolCallTrack>;
}

/** The relay of one stream: prototype methods, the state in fields. */
export class ChunkRelay {
  readonly #alias: string;
  readonly #includeUsage: boolean;
  #id: string | undefined;
  #created = 0;
  #usage: Usage | undefined;
  #anyFinished = false;
  #generatedBytes = 0;
  readonly #choices = new Map<number, ChoiceTrack>();

  constructor(options: Pick<RelayOptions, 'alias' | 'includeUsage'>) {
    this.#alias = options.alias;
    this.#includeUsage = options.includeUsage;
  }

  /** The last usage the upstream gave, if any. */
  get usage(): Usage | undefined {
    return this.#usage;
  }

  /** UTF-8 bytes of the text relayed so far: content, refusals, tool-call names and
   * arguments. An upper bound of the tokens generated (a byte-level tokenizer never
   * makes more tokens than bytes), for charging a cut stream. */
  get generatedBytes(): number {
    return this.#generatedBytes;
  }

  /** The chunks to send for one upstream chunk (often one, sometimes none). */
  push(chunk: ChatCompletionChunk): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    this.pushInto(chunk, out);
    return out;
  }

  /** push(), appending to `out` instead of making an array. */
  pushInto(chunk: ChatCompletionChunk, out: ChatCompletionChunk[]): void {
    if (this.#id === undefined) {
      this.#id = chunk.id === '' ? generateCompletionId() : chunk.id;
      this.#created = chunk.created;
    }
    if (chunk.usage !== undefined && chunk.usage !== null) this.#usage = chunk.usage;
    let relayedChoices: ChunkChoice[] | undefined;
    for (let i = 0; i < chunk.choices.length; i++) {
      const relayed = this.#relayChoice(chunk.choices[i] as ChunkChoice);
      if (relayed !== undefined) {
        this.#generatedBytes += deltaBytes(relayed.delta);
        (relayedChoices ??= []).push(relayed);
      }
    }
    if (relayedChoices !== undefined) out.push(this.#envelope(relayedChoices));
  }

  /** The chunks to send once the upstream has ended: the usage chunk when asked
   * for. Throws `upstream_stream_truncated` when no choice ever finished. */
  end(): ChatCompletionChunk[] {
    if (!this.#anyFinished) {
      throw new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.');
    }
    const usage = this.#usage;
    if (!this.#includeUsage || usage === undefined) return [];
    return [{ ...this.#envelope([]), usage }];
  }

  #envelope(choiceList: ChunkChoice[]): ChatCompletionChunk {
    return { id: this.#id ?? '', object: 'chat.completion.chunk', created: this.#created, model: this.#alias, choices: choiceList };
  }

  #relayChoice(choice: ChunkChoice): ChunkChoice | undefined {
    let track = this.#choices.get(choice.index);
    if (track === undefined) {
      track = { roleSent: false, finished: false, toolCalls: new Map() };
      this.#choices.set(choice.index, track);
    }
    if (track.finished) return undefined;

    const source = choice.delta;
    const incoming = source.tool_calls;
    let toolDeltas: ToolCallDelta[] | undefined;
    if (incoming !== undefined) {
      toolDeltas = [];
      for (let i = 0; i < incoming.length; i++) {
        const piece = incoming[i] as ToolCallDelta;
        let call = track.toolCalls.get(piece.index);
        if (call === undefined) {
          flushBuffered(track, toolDeltas, choice.index);
          call = { state: ToolCallState.Buffering, index: piece.index, id: '', name: '', args: '' };
          track.toolCalls.set(piece.index, call);
        }
        const args = piece.function?.arguments ?? '';
        if (call.state === ToolCallState.Buffering) {
          if (call.id === '' && piece.id !== undefined) call.id = piece.id;
          call.name = mergeNamePiece(call.name, piece.function?.name ?? '');
          call.args += args;
          if (call.args !== '') toolDeltas.push(firstToolCallDelta(call, choice.index));
        } else if (args !== '') {
          toolDeltas.push({ index: call.index, function: { arguments: args } });
        }
      }
    }
    if (choice.finish_reason !== null && track.toolCalls.size > 0) flushBuffered(track, (toolDeltas ??= []), choice.index);

    const delta: ChunkDelta = {};
    if (typeof source.content === 'string') delta.content = source.content;
    if (typeof source.refusal === 'string') delta.refusal = source.refusal;
    const hasTools = toolDeltas !== undefined && toolDeltas.length > 0;
    if (hasTools) delta.tool_calls = toolDeltas;
    const empty = delta.content === undefined && delta.refusal === undefined && !hasTools;
    if (empty && choice.finish_reason === null && (track.roleSent || source.role !== 'assistant')) return undefined;

    const finishReason: FinishReason | null = choice.finish_reason;
    if (finishReason !== null) {
      track.finished = true;
      this.#anyFinished = true;
    }
    if (track.roleSent) return { index: choice.index, delta, finish_reason: finishReason };
    track.roleSent = true;
    return { index: choice.index, delta: { role: 'assistant', ...delta }, finish_reason: finishReason };
  }
}

function deltaBytes(delta: ChunkDelta): number {
  let bytes = 0;
  if (delta.content !== undefined && delta.content !== null) bytes += Buffer.byteLength(delta.content);
  if (delta.refusal !== undefined && delta.refusal !== null) bytes += Buffer.byteLength(delta.refusal);
  const calls = delta.tool_calls;
  if (calls !== undefined) {
    for (let i = 0; i < calls.length; i++) {
      const fn = (calls[i] as ToolCallDelta).function;
      if (fn?.name !== undefined) bytes += Buffer.byteLength(fn.name);
      if (fn?.arguments !== undefined) bytes += Buffer.byteLength(fn.arguments);
    }
  }
  return bytes;
}

/** Most servers send a name in pieces to be appended; a few restate the whole
 * name so far in every delta. A piece that starts with what has been gathered
 * is read as such a restatement (a real name repeating its own prefix, like
 * `abab`, split exactly there, is the price of this). */
function mergeNamePiece(gathered: string, piece: string): string {
  if (gathered !== '' && piece.startsWith(gathered)) return piece;
  return gathered + piece;
}

/** Sends every held-back call of a choice, in the order the calls began. */
function flushBuffered(track: ChoiceTrack, into: ToolCallDelta[], choiceIndex: number): void {
  for (const call of track.toolCalls.values()) {
    if (call.state === ToolCallState.Buffering) into.push(firstToolCallDelta(call, choiceIndex));
  }
}

function firstToolCallDelta(call: ToolCallTrack, choiceIndex: number): ToolCallDelta {
  // A call that never got a name cannot be used by any client.
  if (call.name === '') throw malformedResponseError(`choices[${choiceIndex}].delta.tool_calls[${call.index}].function.name`);
  call.state = ToolCallState.Streaming;
  if (call.id === '') call.id = generateToolCallId();
  return { index: call.index, id: call.id, type: 'function', function: { name: call.name, arguments: call.args } };
}
