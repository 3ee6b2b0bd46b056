// An Anthropic upstream's stream events through the answer guard (the
// Messages part of ./answer-raw-guard.ts RawEventGuard). Each content block
// with text is one channel: a text block's text_delta pieces (text), a tool
// call's input_json_delta pieces (json), a thinking block's thinking_delta
// pieces (signed: the same text goes out, re-cut where the hold-back held it,
// so the signature still holds). A text or tool input that comes whole in
// content_block_start is guarded there. A delta whose text the guard holds goes out
// later (empty: not at all); the held rest goes out before the block's
// content_block_stop (and before a thinking block's signature_delta).
// Events that carry no text go as they came, and so do events of a type the
// gateway does not know. A citations_delta's cited text goes as the upstream
// sent it: it quotes the client's own documents, not text the model wrote.
//
// A block finding cuts the answer before it: what came before goes out, then
// content_block_stop for the block it was in, and nothing more of the content.
// The upstream is still read to its end (its usage is the charge): its
// message_delta goes out with stop_reason "refusal" (stop_sequence null, its
// usage as it came), then its message_stop; an upstream that ends without them
// has them made at the end.
import type { RawEvent } from '../chat/messages-origin.ts';
import type { AnswerChannel, AnswerGuard, ChannelKind } from '../guard/answer-guard.ts';
import { isObject, type Json } from './raw-answer-items.ts';

interface OpenBlock {
  readonly index: number;
  readonly channel: AnswerChannel;
  /** The delta type its text goes in (text_delta, input_json_delta, thinking_delta) and the field of it. */
  readonly deltaType: string;
  readonly field: string;
}

/** The delta types that carry a block's text, their field and the channel kind. */
const DELTAS: Readonly<Record<string, { field: string; kind: ChannelKind; part: string }>> = {
  text_delta: { field: 'text', kind: 'text', part: 'text' },
  input_json_delta: { field: 'partial_json', kind: 'json', part: 'input' },
  thinking_delta: { field: 'thinking', kind: 'signed', part: 'thinking' },
};

/** The delta type of a started block's text, by the block's type. */
const BLOCK_DELTAS: Readonly<Record<string, string>> = {
  text: 'text_delta',
  tool_use: 'input_json_delta',
  server_tool_use: 'input_json_delta',
  mcp_tool_use: 'input_json_delta',
  thinking: 'thinking_delta',
};

export class RawMessageEvents {
  readonly #guard: AnswerGuard;
  /** Content block index -> its channel, while the block is open. */
  readonly #open = new Map<number, OpenBlock>();
  #blocked = false;
  #deltaSent = false;
  #stopSent = false;

  constructor(guard: AnswerGuard) {
    this.#guard = guard;
  }

  push(event: RawEvent, out: RawEvent[]): void {
    if (this.#blocked) return this.#afterBlock(event, out);
    switch (event.event) {
      case 'content_block_start':
        return this.#start(event, out);
      case 'content_block_delta':
        return this.#delta(event, out);
      case 'content_block_stop':
        return this.#stop(event, out);
      default:
        out.push(event);
    }
  }

  end(out: RawEvent[]): void {
    if (!this.#blocked) return;
    if (!this.#deltaSent) out.push(made('message_delta', { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 0 } }));
    if (!this.#stopSent) out.push(made('message_stop', { type: 'message_stop' }));
    this.#deltaSent = this.#stopSent = true;
  }

  flush(out: RawEvent[]): void {
    for (const open of this.#open.values()) {
      if (this.#blocked) break;
      this.#give(open, open.channel.end(), out);
    }
    this.#open.clear();
  }

  /** Anthropic's error events repeat no text. */
  failure(event: RawEvent): RawEvent {
    return event;
  }

  #start(event: RawEvent, out: RawEvent[]): void {
    const data = parse(event);
    const index = data?.['index'];
    const block = data?.['content_block'];
    const deltaType = isObject(block) && typeof block['type'] === 'string' ? BLOCK_DELTAS[block['type']] : undefined;
    if (data === null || typeof index !== 'number' || !isObject(block) || deltaType === undefined) return void out.push(event);
    const spec = DELTAS[deltaType] as (typeof DELTAS)[string];
    const first = block[spec.part];
    if (deltaType === 'input_json_delta' && isObject(first) && Object.keys(first).length > 0) return this.#startWithInput(event, index, data, block, first, out);
    const open = this.#channel(index, deltaType);
    out.push(event);
    // A block that starts with text (Anthropic's start with ""): its text is the channel's first piece.
    if (deltaType === 'input_json_delta' || typeof first !== 'string' || first === '') return;
    block[spec.part] = '';
    out[out.length - 1] = made('content_block_start', data);
    this.#give(open, open.channel.push(first), out);
  }

  /**
   * A tool call whose input comes whole in its start (Anthropic's own start
   * with {} and stream the input as input_json_delta; other upstreams need
   * not): the input guarded as one JSON text there. A block finding leaves the
   * call out altogether (no start, no stop: a client must not run it) and cuts
   * the answer; input_json_delta pieces that still follow go through the
   * block's channel as usual.
   */
  #startWithInput(event: RawEvent, index: number, data: Json, block: Json, input: Json, out: RawEvent[]): void {
    const source = JSON.stringify(input);
    const seen = this.#guard.whole(`answer.content[${index}].input`, 'json', source);
    if (seen.blocked) {
      this.#blocked = true;
      this.#open.clear();
      return;
    }
    this.#channel(index, 'input_json_delta');
    out.push(seen.text === source ? event : made('content_block_start', { ...data, content_block: { ...block, input: JSON.parse(seen.text) as unknown } }));
  }

  #delta(event: RawEvent, out: RawEvent[]): void {
    const data = parse(event);
    const index = data?.['index'];
    const delta = data?.['delta'];
    if (data === null || typeof index !== 'number' || !isObject(delta) || typeof delta['type'] !== 'string') return void out.push(event);
    const spec = DELTAS[delta['type']];
    if (delta['type'] === 'signature_delta') {
      // The signature follows the whole thinking: the held rest goes out before it.
      const open = this.#open.get(index);
      if (open !== undefined) {
        this.#open.delete(index);
        this.#give(open, open.channel.end(), out);
        if (this.#blocked) return;
      }
      return void out.push(event);
    }
    const text = spec === undefined ? undefined : delta[spec.field];
    if (spec === undefined || typeof text !== 'string') return void out.push(event);
    const open = this.#open.get(index) ?? this.#channel(index, delta['type']);
    const given = open.channel.push(text);
    if (given === text && !open.channel.blocked) return void out.push(event);
    this.#give(open, given, out);
  }

  #stop(event: RawEvent, out: RawEvent[]): void {
    const index = parse(event)?.['index'];
    const open = typeof index === 'number' ? this.#open.get(index) : undefined;
    if (open !== undefined) {
      this.#open.delete(index as number);
      this.#give(open, open.channel.end(), out);
      if (this.#blocked) return;
    }
    out.push(event);
  }

  #channel(index: number, deltaType: string): OpenBlock {
    const spec = DELTAS[deltaType] as (typeof DELTAS)[string];
    const open: OpenBlock = { index, channel: this.#guard.channel(`answer.content[${index}].${spec.part}`, spec.kind), deltaType, field: spec.field };
    this.#open.set(index, open);
    return open;
  }

  /** `text` of the block out as one delta (none when empty); a block finding closes the block and cuts the answer. */
  #give(open: OpenBlock, text: string, out: RawEvent[]): void {
    if (text !== '') out.push(made('content_block_delta', { type: 'content_block_delta', index: open.index, delta: { type: open.deltaType, [open.field]: text } }));
    if (!open.channel.blocked) return;
    this.#blocked = true;
    this.#open.clear();
    out.push(made('content_block_stop', { type: 'content_block_stop', index: open.index }));
  }

  /** After a block: only the message's ending goes on, said as a refusal. */
  #afterBlock(event: RawEvent, out: RawEvent[]): void {
    if (event.event === 'message_delta' && !this.#deltaSent) {
      const data = parse(event) ?? { type: 'message_delta' };
      const delta = isObject(data['delta']) ? data['delta'] : {};
      data['delta'] = { ...delta, stop_reason: 'refusal', stop_sequence: null };
      if (!isObject(data['usage'])) data['usage'] = { output_tokens: 0 };
      this.#deltaSent = true;
      out.push(made('message_delta', data));
    } else if (event.event === 'message_stop' && !this.#stopSent) {
      this.end(out);
    }
  }
}

function parse(event: RawEvent): Json | null {
  try {
    const data: unknown = JSON.parse(event.data);
    return isObject(data) ? data : null;
  } catch {
    return null;
  }
}

/** An event the guard made or rewrote: nothing of it translates to chat chunks (the upstream's own event was counted). */
function made(event: string, data: Json): RawEvent {
  return { event, data: JSON.stringify(data), translated: [] };
}
