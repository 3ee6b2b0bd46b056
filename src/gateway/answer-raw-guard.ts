// The answer guard (../guard/answer-guard.ts) on answers an upstream gave in
// the door's own API and the gateway passes through: Anthropic's Messages and
// OpenAI's Responses. A whole answer is guarded here (guardRawAnswer); a
// stream's events by RawEventGuard, per door (./raw-message-events.ts,
// ./raw-response-events.ts).
//
// What is scanned: Messages text blocks, tool input (as JSON text) and
// thinking (signed: never changed, but a block finding cuts it); Responses
// output text, refusals, function-call, MCP-call and MCP approval request
// arguments (JSON text), custom tool input, code interpreter code, reasoning
// summaries and reasoning text, and the texts of the items the client runs:
// shell commands, a computer's typed text, a patch's diff
// (./raw-answer-items.ts); a stream's failure event's error message. Everything else (images,
// server-tool results, redacted thinking, a reasoning item's
// encrypted_content, citations, event types the gateway does not know) goes
// as it came. While the answer scan is on, Responses output text goes
// without its logprobs (the tokens are the text as the model wrote it).
// A block finding cuts the answer before it, as a content filter would:
// Messages stop_reason "refusal", Responses status "incomplete" with
// incomplete_details.reason "content_filter"; what follows the cut (later
// blocks and items, an unfinished tool call, a reasoning item) is left out.
import type { RawEvent } from '../chat/messages-origin.ts';
import type { AnswerGuard } from '../guard/answer-guard.ts';
import { RawMessageEvents } from './raw-message-events.ts';
import { RawResponseEvents } from './raw-response-events.ts';
import { guardContentBlock, guardItem, isObject, outputTextOf, type Json, type TextGuard } from './raw-answer-items.ts';

/** A passed-through (Anthropic Messages or OpenAI Responses) non-streamed answer through the guard; the same object when unchanged. */
export function guardRawAnswer(raw: Record<string, unknown>, guard: AnswerGuard): Record<string, unknown> {
  if (Array.isArray(raw['content'])) return guardMessage(raw, raw['content'], guard);
  if (Array.isArray(raw['output'])) return guardResponse(raw, raw['output'], guard);
  return raw;
}

/** A passed-through stream's events through the guard, per door. */
export class RawEventGuard {
  readonly #door: RawMessageEvents | RawResponseEvents;

  constructor(door: 'messages' | 'responses', guard: AnswerGuard) {
    this.#door = door === 'messages' ? new RawMessageEvents(guard) : new RawResponseEvents(guard);
  }

  /** The events to send for one upstream event (zero, one, or more: held text released, a block's closing events). */
  push(event: RawEvent, out: RawEvent[]): void {
    this.#door.push(event, out);
  }

  /** The upstream ended: the closing events a block still owes. */
  end(out: RawEvent[]): void {
    this.#door.end(out);
  }

  /** The upstream failed: the held text of every open channel, as the deltas that carry it. */
  flush(out: RawEvent[]): void {
    this.#door.flush(out);
  }

  /** The upstream's own failure event as the client may get it: the texts it repeats, guarded. */
  failure(event: RawEvent): RawEvent {
    return this.#door.failure(event);
  }
}

/** A Messages answer: its content blocks in order, cut at a block finding. */
function guardMessage(raw: Json, content: unknown[], guard: AnswerGuard): Json {
  const blocks: unknown[] = [];
  let changed = false;
  let blocked = false;
  for (let i = 0; i < content.length && !blocked; i++) {
    const block = content[i];
    const guarded = isObject(block) ? guardContentBlock(block, `answer.content[${i}]`, guard) : { block, blocked: false };
    blocked = guarded.blocked;
    if (guarded.block !== block) changed = true;
    if (guarded.block !== null) blocks.push(guarded.block);
  }
  if (blocked) return { ...raw, content: blocks, stop_reason: 'refusal', stop_sequence: null };
  return changed ? { ...raw, content: blocks } : raw;
}

/** A Responses answer: its output items in order, cut at a block finding. */
function guardResponse(raw: Json, output: unknown[], guard: AnswerGuard): Json {
  const items: unknown[] = [];
  let changed = false;
  let blocked = false;
  const whole: TextGuard = (where, text) => guard.whole(where.path, where.kind, text);
  const scanning = guard.scanning;
  for (let i = 0; i < output.length && !blocked; i++) {
    const item = output[i];
    const guarded = isObject(item) ? guardItem(item, i, whole, scanning) : { item, blocked: false };
    blocked = guarded.blocked;
    if (guarded.item !== item) changed = true;
    if (guarded.item !== null) items.push(guarded.item);
  }
  if (blocked) {
    const cut: Json = { ...raw, output: items, status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    if ('completed_at' in raw) cut['completed_at'] = null;
    if ('output_text' in raw) cut['output_text'] = outputTextOf(items);
    return cut;
  }
  // The SDKs' output_text, when the upstream sends it, says the output as the client gets it.
  const text = 'output_text' in raw ? outputTextOf(items) : undefined;
  if (!changed && (text === undefined || text === raw['output_text'])) return raw;
  const answer: Json = { ...raw, output: items };
  if (text !== undefined) answer['output_text'] = text;
  return answer;
}

