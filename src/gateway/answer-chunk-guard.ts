// The egress guard on a chat answer (../guard/answer-guard.ts does the
// scanning, masking and restoring): the chat shapes over it.
//
// A stream's chunks, as the chunk relay gives them, pass ChunkGuard. Each
// choice has one text channel per kind of text: its content, its refusal,
// and one per tool call (by the call's index). A channel stays open until its
// choice finishes or the stream ends (end()), however the upstream
// interleaves them (call 0, call 1, call 0 ...), so a value split across a
// switch is still whole when scanned. Since a channel holds its tail until
// then, the client's order is kept by holding the later ones too: the
// choice's first channel goes out as the guard releases it; every other one's
// released text waits, and goes out after the channels before it have ended,
// in the order the upstream started them (content before the tool calls that
// followed it; a call's id and name with its first arguments). What waits is
// bounded as a channel's hold is (MAX_HELD_CHARS): past it, the channels
// before the waiting one end there and it goes out from then on (a value the
// upstream splits across that point is scanned in two parts). A choice's
// finish ends its channels in that order; a channel the guard blocks cuts its
// choice there: the channels before it end and go out, then what came before
// the finding, with finish_reason content_filter, and nothing more of that
// choice (the channels after it, its later chunks, its own finish). A tool
// call's first delta (its id and name) waits for the first of its arguments
// that goes out, so a call blocked before any of them did is dropped whole.
// What a finish releases goes out in a chunk of its own before the one with
// finish_reason (which carries the finish only): the openai SDK's stream
// helper reads a chunk's finish before its delta, and would not see a tool
// call's arguments done were they to come with it.
//
// A whole completion passes guardCompletion: each choice's content, refusal
// and tool-call arguments, in that order; a block cuts the choice there
// (the tool calls from the blocked one on are dropped) and makes its
// finish_reason content_filter.
//
// Log probabilities name the tokens as generated: they would show a value
// the stream holds back before the scan has judged it, and a masked value as
// it was. While the guard scans the answer, a choice goes out without them
// (a whole one with `logprobs: null`), changed or not; a guard that only
// restores keeps them (the tokens name the placeholders the model saw).
import { MAX_HELD_CHARS, type AnswerChannel, type AnswerGuard } from '../guard/answer-guard.ts';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, ToolCallDelta } from '../chat/types.ts';

type ChunkChoice = ChatCompletionChunk['choices'][number];
type ChunkDelta = ChunkChoice['delta'];
type CompletionChoice = ChatCompletion['choices'][number];

/** Which channel of a choice: its content, its refusal, or a tool call's arguments (the call's index). */
const CONTENT = -1;
const REFUSAL = -2;


interface Lane {
  readonly which: number;
  readonly channel: AnswerChannel;
  /** A tool call's first delta (id, type, name), until the first of its arguments goes out; null once sent, and for text. */
  header: ToolCallDelta | null;
  /** Released text waiting for the lanes before it to end (the first lane's goes out at once). */
  queued: string;
}

interface ChoiceHold {
  /** The choice's channels in the order the upstream started them. */
  readonly lanes: Lane[];
  /** Cut by a block, or finished: nothing more of it goes out. */
  done: boolean;
}

/** What one choice's delta is made of on the way out. */
interface DeltaOut {
  content: string;
  refusal: string;
  tools: ToolCallDelta[] | null;
  blocked: boolean;
}

/** A stream's chat chunks through the answer guard: per choice and channel, hold-back, flush, content_filter. */
export class ChunkGuard {
  readonly #guard: AnswerGuard;
  readonly #scanning: boolean;
  readonly #choices = new Map<number, ChoiceHold>();
  /** The envelope of the last chunk seen: the end's chunk of held text reuses it. */
  #last: ChatCompletionChunk | null = null;

  constructor(guard: AnswerGuard) {
    this.#guard = guard;
    this.#scanning = guard.scanning;
  }

  /** Chunks in (the relay's output, in order) -> chunks out, appended to `out` (a chunk whose delta became empty is dropped unless it carries finish_reason, usage or a role). */
  push(chunk: ChatCompletionChunk, out: ChatCompletionChunk[]): void {
    this.#last = chunk;
    let choices: ChunkChoice[] | null = null;
    let before: ChunkChoice[] | null = null;
    for (let i = 0; i < chunk.choices.length; i++) {
      const next = this.#choice(chunk.choices[i] as ChunkChoice);
      if (next === null) continue;
      const text = textBeforeFinish(next);
      if (text !== null) (before ??= []).push(text);
      (choices ??= []).push(text === null ? next : finishOnly(next));
    }
    const { usage, ...envelope } = chunk;
    if (before !== null) out.push({ ...envelope, choices: before });
    if (choices === null && (usage === undefined || usage === null)) return;
    out.push({ ...chunk, choices: choices ?? [] });
  }

  /** The upstream ended: held text out, as chunks appended to `out` (before the relay's trailing chunks). */
  end(out: ChatCompletionChunk[]): void {
    const last = this.#last;
    if (last === null) return;
    let choices: ChunkChoice[] | null = null;
    let cuts: ChunkChoice[] | null = null;
    for (const [index, hold] of this.#choices) {
      if (hold.done || hold.lanes.length === 0) continue;
      const parts = emptyDelta();
      endLanes(hold, parts, hold.lanes.length);
      hold.done = true;
      const delta = deltaOf(parts, undefined);
      if (delta !== null) (choices ??= []).push({ index, delta, finish_reason: null });
      if (parts.blocked) (cuts ??= []).push({ index, delta: {}, finish_reason: 'content_filter' });
    }
    const envelope = { id: last.id, object: last.object, created: last.created, model: last.model };
    if (choices !== null) out.push({ ...envelope, choices });
    if (cuts !== null) out.push({ ...envelope, choices: cuts });
  }

  #choice(choice: ChunkChoice): ChunkChoice | null {
    let hold = this.#choices.get(choice.index);
    if (hold === undefined) {
      hold = { lanes: [], done: false };
      this.#choices.set(choice.index, hold);
    }
    if (hold.done) return null;
    const source = choice.delta;
    const parts = emptyDelta();
    const base = `answer.choices[${choice.index}].delta`;
    if (typeof source.content === 'string' && source.content !== '') this.#text(hold, parts, CONTENT, `${base}.content`, source.content, null);
    if (!parts.blocked && typeof source.refusal === 'string' && source.refusal !== '') this.#text(hold, parts, REFUSAL, `${base}.refusal`, source.refusal, null);
    const calls = source.tool_calls;
    if (calls !== undefined) {
      for (let i = 0; i < calls.length && !parts.blocked; i++) {
        const piece = calls[i] as ToolCallDelta;
        const header = piece.id === undefined && piece.function?.name === undefined ? null : piece;
        this.#text(hold, parts, piece.index, `${base}.tool_calls[${piece.index}].function.arguments`, piece.function?.arguments ?? '', header);
      }
    }
    let finish: FinishReason | null = choice.finish_reason;
    if (!parts.blocked && finish !== null) endLanes(hold, parts, hold.lanes.length);
    if (parts.blocked) finish = 'content_filter';
    if (finish !== null) hold.done = true;
    const delta = deltaOf(parts, source.role);
    if (delta === null && finish === null) return null;
    if (this.#scanning) return { index: choice.index, delta: delta ?? {}, finish_reason: finish };
    // Restoring only: whatever else the choice carries goes with it.
    return { ...choice, delta: delta ?? {}, finish_reason: finish };
  }

  /** Text for channel `which` of a choice: its lane, made when the upstream starts it. */
  #text(hold: ChoiceHold, parts: DeltaOut, which: number, path: string, text: string, header: ToolCallDelta | null): void {
    const lanes = hold.lanes;
    let at = 0;
    while (at < lanes.length && (lanes[at] as Lane).which !== which) at++;
    if (at === lanes.length) {
      const kind = which >= 0 ? 'json' : 'text';
      lanes.push({ which, channel: this.#guard.channel(path, kind), header: which >= 0 ? headerOf(header, which) : null, queued: '' });
    }
    const lane = lanes[at] as Lane;
    const released = text === '' ? '' : lane.channel.push(text);
    if (!lane.channel.blocked) {
      if (at === 0) emit(lane, parts, released, false);
      else {
        lane.queued += released;
        if (queuedChars(lanes) > MAX_HELD_CHARS) unqueue(hold, parts, at);
      }
      return;
    }
    // Cut here: the lanes before this one end and go out first, then what came before the finding.
    if (at > 0) {
      endLanes(hold, parts, at);
      if (parts.blocked) return;
    }
    parts.blocked = true;
    hold.done = true;
    emit(lane, parts, lane.queued + released, false);
    lane.queued = '';
  }
}

/**
 * More text waits than a channel may hold: the lanes before `at` end now (their text out, as at the choice's
 * finish) and this one goes out from here on, so the client still gets each text whole before the next (the
 * SDKs' stream helpers take a new tool call index as the end of the one before). Should an ended lane go on
 * later, it is a new channel after the others; a value the upstream splits across that point is scanned in
 * two parts. What a choice holds stays bounded.
 */
function unqueue(hold: ChoiceHold, parts: DeltaOut, at: number): void {
  const lane = hold.lanes[at] as Lane;
  endLanes(hold, parts, at);
  if (parts.blocked) return;
  emit(lane, parts, lane.queued, false);
  lane.queued = '';
}

/** A choice that finishes with text: that text, in a choice of its own to go out first (null when there is none). */
function textBeforeFinish(choice: ChunkChoice): ChunkChoice | null {
  if (choice.finish_reason === null || Object.keys(choice.delta).length === 0) return null;
  return { ...choice, finish_reason: null };
}

/** The finish of a choice whose text went out before it. */
function finishOnly(choice: ChunkChoice): ChunkChoice {
  return { index: choice.index, delta: {}, finish_reason: choice.finish_reason };
}

function queuedChars(lanes: readonly Lane[]): number {
  let chars = 0;
  for (let i = 1; i < lanes.length; i++) chars += (lanes[i] as Lane).queued.length;
  return chars;
}

function emptyDelta(): DeltaOut {
  return { content: '', refusal: '', tools: null, blocked: false };
}

/** A tool call's first delta as the relay sent it, without its arguments (they go through the guard). */
function headerOf(piece: ToolCallDelta | null, index: number): ToolCallDelta | null {
  if (piece === null) return null;
  const header: ToolCallDelta = { index };
  if (piece.id !== undefined) header.id = piece.id;
  if (piece.type !== undefined) header.type = piece.type;
  const name = piece.function?.name;
  header.function = name === undefined ? { arguments: '' } : { name, arguments: '' };
  return header;
}

/** Ends the choice's first `count` lanes in order: each one's waiting text and rest out; a block stops there (the lanes after it are dropped). */
function endLanes(hold: ChoiceHold, parts: DeltaOut, count: number): void {
  const lanes = hold.lanes;
  for (let i = 0; i < count; i++) {
    const lane = lanes[i] as Lane;
    const text = lane.queued + lane.channel.end();
    lane.queued = '';
    if (lane.channel.blocked) {
      parts.blocked = true;
      hold.done = true;
      emit(lane, parts, text, false);
      return;
    }
    emit(lane, parts, text, true);
  }
  // The ended lanes are gone: what comes next for their channels starts no new one (the choice is done or cut).
  lanes.splice(0, count);
}

/** Released text into the delta being made; a tool call's header goes with its first arguments (or its end). */
function emit(lane: Lane, parts: DeltaOut, text: string, ending: boolean): void {
  if (lane.which === CONTENT) parts.content += text;
  else if (lane.which === REFUSAL) parts.refusal += text;
  else {
    const header = lane.header;
    if (header !== null) {
      if (text === '' && !ending) return;
      lane.header = null;
      header.function = { ...header.function, arguments: text };
      (parts.tools ??= []).push(header);
      return;
    }
    if (text === '') return;
    const tools = (parts.tools ??= []);
    const last = tools[tools.length - 1];
    if (last !== undefined && last.index === lane.which && last.function !== undefined) last.function = { ...last.function, arguments: (last.function.arguments ?? '') + text };
    else tools.push({ index: lane.which, function: { arguments: text } });
  }
}

function deltaOf(parts: DeltaOut, role: ChunkDelta['role']): ChunkDelta | null {
  const delta: ChunkDelta = {};
  if (role !== undefined) delta.role = role;
  if (parts.content !== '') delta.content = parts.content;
  if (parts.refusal !== '') delta.refusal = parts.refusal;
  if (parts.tools !== null) delta.tool_calls = parts.tools;
  return role === undefined && parts.content === '' && parts.refusal === '' && parts.tools === null ? null : delta;
}

/** A whole completion through the guard: texts masked/restored, a blocked choice cut with finish_reason content_filter. Returns the completion to answer with (the same object when nothing changed). */
export function guardCompletion(guard: AnswerGuard, completion: ChatCompletion): ChatCompletion {
  let choices: CompletionChoice[] | null = null;
  const scanning = guard.scanning;
  for (let i = 0; i < completion.choices.length; i++) {
    const choice = completion.choices[i] as CompletionChoice;
    const next = guardChoice(guard, choice, scanning);
    if (next !== choice) (choices ??= completion.choices.slice())[i] = next;
  }
  return choices === null ? completion : { ...completion, choices };
}

function guardChoice(guard: AnswerGuard, choice: CompletionChoice, scanning: boolean): CompletionChoice {
  const message = choice.message;
  const base = `answer.choices[${choice.index}].message`;
  let { content, refusal } = message;
  let calls: ToolCall[] = message.tool_calls;
  let changed = false;
  let blocked = false;
  if (typeof content === 'string' && content !== '') {
    const guarded = guard.whole(`${base}.content`, 'text', content);
    if (guarded.text !== content) {
      content = guarded.text;
      changed = true;
    }
    blocked = guarded.blocked;
  }
  if (typeof refusal === 'string' && refusal !== '') {
    if (blocked) refusal = null;
    else {
      const guarded = guard.whole(`${base}.refusal`, 'text', refusal);
      if (guarded.text !== refusal) {
        refusal = guarded.text;
        changed = true;
      }
      blocked = guarded.blocked;
    }
  }
  for (let k = 0; k < calls.length; k++) {
    if (blocked) {
      // The calls from the blocked one on did not complete: none of them goes out.
      calls = calls.slice(0, k);
      break;
    }
    const call = calls[k] as ToolCall;
    const args = call.function.arguments;
    const guarded = guard.whole(`${base}.tool_calls[${k}].function.arguments`, 'json', args);
    if (guarded.blocked) {
      blocked = true;
      calls = calls.slice(0, k);
      break;
    }
    if (guarded.text !== args) {
      if (calls === message.tool_calls) calls = calls.slice();
      calls[k] = { ...call, function: { ...call.function, arguments: guarded.text } };
    }
  }
  const logprobs = scanning ? null : choice.logprobs;
  if (!changed && !blocked && calls === message.tool_calls && logprobs === choice.logprobs) return choice;
  return {
    ...choice,
    message: { ...message, content, refusal, tool_calls: calls },
    logprobs,
    finish_reason: blocked ? 'content_filter' : choice.finish_reason,
  };
}
