// An upstream's Responses stream events through the answer guard (the
// Responses part of ./answer-raw-guard.ts RawEventGuard). Each message part
// (output_text, refusal) and each function call's arguments is one channel.
// A delta whose text the guard holds goes out later (empty: not at all); the
// held rest goes out as one more delta before the part's (or call's) done
// event. The events that repeat the whole text (output_text.done,
// refusal.done, content_part.done, function_call_arguments.done,
// output_item.done, and the response's terminal event) carry the guarded text,
// the same as the deltas add up to. Since events are left out and added, every
// event's sequence_number is the gateway's count.
//
// A block finding cuts the answer before it: what came before goes out; a
// message cut is done (its part's done events, the item status incomplete); a
// function call cut is left out (no done events: a client must not run it);
// nothing more of the output goes out. The upstream is still read to its end
// (its usage is the charge): its terminal event goes out as
// response.incomplete, incomplete_details.reason "content_filter", the output
// what the client got; an upstream that ends without one has it made from
// response.created at the end.
import type { RawEvent } from '../chat/messages-origin.ts';
import type { AnswerChannel, AnswerGuard } from '../guard/answer-guard.ts';
import { guardOutputItem, isObject, partField, type Json } from './raw-answer-items.ts';

interface Channel {
  readonly channel: AnswerChannel;
  /** What went out of it so far: the guarded text its done events say. */
  given: string;
  /** What came in: the done events are rewritten only when the two differ. */
  received: string;
  /** Its done event came: nothing held any more. */
  ended: boolean;
  readonly path: string;
  readonly itemId: unknown;
}

interface OpenMessage {
  /** content_index -> the part as added, then as done. */
  readonly parts: Map<number, Json>;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete']);

export class RawResponseEvents {
  readonly #guard: AnswerGuard;
  /** `output_index:content_index` of a message part, or `output_index` of a call -> its channel. */
  readonly #channels = new Map<string, Channel>();
  readonly #messages = new Map<number, OpenMessage>();
  /** output_index -> the item as done (guarded), for the terminal event's output. */
  readonly #done = new Map<number, Json>();
  #response: Json | null = null;
  #sequence = 0;
  #blocked = false;
  #terminalSent = false;

  constructor(guard: AnswerGuard) {
    this.#guard = guard;
  }

  push(event: RawEvent, out: RawEvent[]): void {
    if (this.#terminalSent) return;
    const data = parse(event);
    if (data === null) return void out.push(event);
    if (this.#blocked) {
      if (TERMINAL.has(event.event)) this.#cutTerminal(isObject(data['response']) ? data['response'] : null, out);
      return;
    }
    switch (event.event) {
      case 'response.created':
        if (isObject(data['response'])) this.#response = data['response'];
        return this.#emit(event, data, out);
      case 'response.content_part.added':
        this.#messageOf(data).parts.set(num(data['content_index']), isObject(data['part']) ? data['part'] : {});
        return this.#emit(event, data, out);
      case 'response.output_text.delta':
      case 'response.refusal.delta':
      case 'response.function_call_arguments.delta':
        return this.#delta(event, data, out);
      case 'response.output_text.done':
      case 'response.refusal.done':
      case 'response.function_call_arguments.done':
        return this.#textDone(event, data, out);
      case 'response.content_part.done':
        return this.#partDone(event, data, out);
      case 'response.output_item.done':
        return this.#itemDone(event, data, out);
      case 'response.completed':
      case 'response.incomplete':
        return this.#terminal(event, data, out);
      default:
        return this.#emit(event, data, out);
    }
  }

  end(out: RawEvent[]): void {
    if (this.#blocked && !this.#terminalSent) this.#cutTerminal(null, out);
  }

  flush(out: RawEvent[]): void {
    for (const [key, channel] of this.#channels) {
      if (this.#blocked || this.#terminalSent) return;
      if (channel.ended) continue;
      channel.ended = true;
      const rest = channel.channel.end();
      channel.given += rest;
      const [o, c] = key.split(':').map(Number) as [number, number | undefined];
      const kind = c === undefined ? 'response.function_call_arguments.delta' : channel.path.endsWith('.refusal') ? 'response.refusal.delta' : 'response.output_text.delta';
      const data: Json = { type: kind, sequence_number: 0, item_id: channel.itemId, output_index: o, ...(c === undefined ? {} : { content_index: c }) };
      if (rest !== '') this.#emit(null, { ...data, delta: rest, ...(kind === 'response.output_text.delta' ? { logprobs: [] } : {}) }, out, true, kind);
      if (channel.channel.blocked) this.#cut(kind, data, channel, out);
    }
  }

  /** The upstream's response.failed repeats the output: the guarded items, as the client got them. */
  failure(event: RawEvent): RawEvent {
    const data = parse(event);
    const response = data?.['response'];
    if (data === null || !isObject(response) || !Array.isArray(response['output'])) return event;
    data['response'] = { ...response, output: this.#output(response['output']) };
    if (typeof data['sequence_number'] === 'number') data['sequence_number'] = this.#sequence++;
    return { event: event.event, data: JSON.stringify(data), translated: [] };
  }

  #delta(event: RawEvent, data: Json, out: RawEvent[]): void {
    const delta = data['delta'];
    if (typeof delta !== 'string') return this.#emit(event, data, out);
    const { key, path, kind } = where(event.event, data);
    let channel = this.#channels.get(key);
    if (channel === undefined) {
      channel = { channel: this.#guard.channel(path, kind), given: '', received: '', ended: false, path, itemId: data['item_id'] };
      this.#channels.set(key, channel);
    }
    channel.received += delta;
    const given = channel.channel.push(delta);
    channel.given += given;
    if (given === delta) this.#emit(event, data, out);
    else if (given !== '') this.#emit(event, { ...data, delta: given }, out, true);
    if (channel.channel.blocked) this.#cut(event.event, data, channel, out);
  }

  #textDone(event: RawEvent, data: Json, out: RawEvent[]): void {
    const { key } = where(event.event, data);
    const channel = this.#channels.get(key);
    if (channel === undefined) return this.#emit(event, data, out);
    const rest = channel.channel.end();
    channel.given += rest;
    channel.ended = true;
    const deltaEvent = event.event.replace(/\.done$/, '.delta');
    const field = event.event === 'response.output_text.done' ? 'text' : event.event === 'response.refusal.done' ? 'refusal' : 'arguments';
    if (rest !== '') this.#emit(null, { type: deltaEvent, sequence_number: 0, ...placeOf(data), delta: rest, ...(field === 'text' ? { logprobs: [] } : {}) }, out, true, deltaEvent);
    if (channel.channel.blocked) return this.#cut(deltaEvent, data, channel, out);
    if (channel.given === channel.received) return this.#emit(event, data, out);
    this.#emit(event, { ...data, [field]: channel.given }, out, true);
  }

  #partDone(event: RawEvent, data: Json, out: RawEvent[]): void {
    const part = data['part'];
    const channel = this.#channels.get(`${num(data['output_index'])}:${num(data['content_index'])}`);
    const field = isObject(part) ? partField(part) : null;
    if (!isObject(part) || field === null || channel === undefined) return this.#emit(event, data, out);
    const guarded = channel.given === channel.received ? part : { ...part, [field]: channel.given };
    this.#messageOf(data).parts.set(num(data['content_index']), guarded);
    if (guarded === part) return this.#emit(event, data, out);
    this.#emit(event, { ...data, part: guarded }, out, true);
  }

  #itemDone(event: RawEvent, data: Json, out: RawEvent[]): void {
    const item = data['item'];
    const index = num(data['output_index']);
    if (!isObject(item)) return this.#emit(event, data, out);
    const guarded = this.#guardedItem(index, item);
    this.#done.set(index, guarded);
    if (guarded === item) return this.#emit(event, data, out);
    this.#emit(event, { ...data, item: guarded }, out, true);
  }

  #terminal(event: RawEvent, data: Json, out: RawEvent[]): void {
    this.#terminalSent = true;
    const response = data['response'];
    if (!isObject(response) || !Array.isArray(response['output'])) return this.#emit(event, data, out);
    const output = this.#output(response['output']);
    if (output.every((item, i) => item === (response['output'] as unknown[])[i])) return this.#emit(event, data, out);
    this.#emit(event, { ...data, response: { ...response, output } }, out, true);
  }

  /** An item as done: the texts its channels gave; a text no channel saw (never streamed) guarded whole. */
  #guardedItem(index: number, item: Json): Json {
    if (item['type'] === 'function_call') {
      const channel = this.#channels.get(String(index));
      if (channel === undefined) return guardOutputItem(item, `answer.output[${index}]`, this.#guard).item ?? item;
      return channel.given === channel.received ? item : { ...item, arguments: channel.given };
    }
    if (item['type'] !== 'message' || !Array.isArray(item['content'])) return item;
    let changed = false;
    const content = item['content'].map((part: unknown, c: number) => {
      const channel = this.#channels.get(`${index}:${c}`);
      const field = isObject(part) ? partField(part) : null;
      if (field === null) return part;
      // A part no delta said (only its done events): guarded whole.
      const text = channel === undefined ? this.#guard.whole(`answer.output[${index}].content[${c}].${field}`, 'text', (part as Json)[field] as string).text : channel.given;
      if (text === (part as Json)[field]) return part;
      changed = true;
      return { ...(part as Json), [field]: text };
    });
    return changed ? { ...item, content } : item;
  }

  /** The terminal (or failure) event's output: each item as done here (by its output_index), any other as its channels gave it. */
  #output(items: unknown[]): unknown[] {
    return items.map((item, i) => {
      const done = this.#done.get(i);
      if (done !== undefined) return done;
      return isObject(item) ? this.#guardedItem(i, item) : item;
    });
  }

  /** A block finding in the channel of `data`'s part or call: the cut message's done events, then nothing more of the output. */
  #cut(deltaEvent: string, data: Json, channel: Channel, out: RawEvent[]): void {
    this.#blocked = true;
    const index = num(data['output_index']);
    if (deltaEvent === 'response.function_call_arguments.delta') return;
    const place = placeOf(data);
    const text = deltaEvent === 'response.output_text.delta';
    const doneType = text ? 'response.output_text.done' : 'response.refusal.done';
    this.#emit(null, { type: doneType, sequence_number: 0, ...place, ...(text ? { text: channel.given, logprobs: [] } : { refusal: channel.given }) }, out, true, doneType);
    const part = text ? { type: 'output_text', annotations: [], logprobs: [], text: channel.given } : { type: 'refusal', refusal: channel.given };
    const message = this.#messageOf(data);
    message.parts.set(num(data['content_index']), part);
    this.#emit(null, { type: 'response.content_part.done', sequence_number: 0, ...place, part }, out, true, 'response.content_part.done');
    const content = [...message.parts.entries()].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
    const item: Json = { id: data['item_id'], type: 'message', status: 'incomplete', content, role: 'assistant' };
    this.#done.set(index, item);
    this.#emit(null, { type: 'response.output_item.done', sequence_number: 0, output_index: index, item }, out, true, 'response.output_item.done');
  }

  /** The terminal event of a cut answer: the upstream's response (its usage), or response.created's, said incomplete by the filter. */
  #cutTerminal(upstream: Json | null, out: RawEvent[]): void {
    this.#terminalSent = true;
    const base = upstream ?? this.#response ?? {};
    const output = [...this.#done.entries()].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
    const response: Json = { ...base, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output };
    if ('completed_at' in base) response['completed_at'] = null;
    if ('output_text' in base) delete response['output_text'];
    this.#emit(null, { type: 'response.incomplete', sequence_number: 0, response }, out, true, 'response.incomplete');
  }

  #messageOf(data: Json): OpenMessage {
    const index = num(data['output_index']);
    let message = this.#messages.get(index);
    if (message === undefined) {
      message = { parts: new Map() };
      this.#messages.set(index, message);
    }
    return message;
  }

  /** An event out with the next sequence number: as it came when nothing of it changed. */
  #emit(event: RawEvent | null, data: Json, out: RawEvent[], changed = false, name?: string): void {
    const sequence = this.#sequence++;
    const numbered = typeof data['sequence_number'] === 'number';
    if (event !== null && !changed && (!numbered || data['sequence_number'] === sequence)) return void out.push(event);
    const body = numbered ? { ...data, sequence_number: sequence } : data;
    out.push({ event: event?.event ?? (name as string), data: JSON.stringify(body), translated: [] });
  }
}

/** A text event's channel: its key, the path findings name, the kind of text. */
function where(event: string, data: Json): { key: string; path: string; kind: 'text' | 'json' } {
  const o = num(data['output_index']);
  if (event.startsWith('response.function_call_arguments.')) return { key: String(o), path: `answer.output[${o}].arguments`, kind: 'json' };
  const c = num(data['content_index']);
  return { key: `${o}:${c}`, path: `answer.output[${o}].content[${c}].${event.startsWith('response.refusal.') ? 'refusal' : 'text'}`, kind: 'text' };
}

/** Where a text event is: its item and indexes. */
function placeOf(data: Json): Json {
  const place: Json = { item_id: data['item_id'], output_index: data['output_index'] };
  if (data['content_index'] !== undefined) place['content_index'] = data['content_index'];
  return place;
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function parse(event: RawEvent): Json | null {
  try {
    const data: unknown = JSON.parse(event.data);
    return isObject(data) ? data : null;
  } catch {
    return null;
  }
}
