// An upstream's Responses stream events through the answer guard (the
// Responses part of ./answer-raw-guard.ts RawEventGuard). Each text the model
// writes is one channel (./raw-response-texts.ts): a message part's output
// text or refusal, a reasoning item's summary parts and reasoning text, a
// call's arguments (function, MCP: JSON), a custom tool's input, code
// interpreter code, a patch's diff, each shell command. An added event that
// already carries a text (an item's arguments or parts, a part's text, a
// shell command) says the first of its channel, as a delta would: it carries
// what the guard gave of it. A delta whose text the guard holds goes out
// later (empty: not at all); the held rest goes out as one more delta before
// the text's done event (or its part's, or its item's, or the response's
// terminal event, whichever comes first; an upstream that ends without any
// releases it at the end). The events that repeat the whole text (the .done
// events, content_part.done, reasoning_summary_part.done, output_item.done,
// and the response's terminal event) carry the guarded text, the same as the
// deltas add up to; a text said only in them (no deltas) is guarded there,
// whole, as are a computer's typed text, a local shell's argv and an MCP
// approval request's arguments. The terminal event's output_text, when the
// upstream sends it, is remade from the guarded output. Since events are left
// out and added, every event's sequence_number is the gateway's count.
// While the answer scan is on, output text events and parts go without
// their logprobs (`[]` in the events, whose schema requires the field; left
// out of parts): the tokens are the text as the model wrote it.
// Events of a type not named here go as they came.
//
// A block finding cuts the answer before it: what came before goes out; a
// message cut is done (its part's done events, the item status incomplete);
// any other item cut (a call, a tool's input, code, reasoning) is left out (no
// done events: a client must not run or replay it; one cut in its added
// event is not sent at all); nothing more of the output goes out. The
// upstream is still read to its end (its usage is the charge): its terminal
// event goes out as response.incomplete, incomplete_details.reason
// "content_filter", the output what the client got; an upstream that ends
// without one has it made from response.created at the end.
import type { RawEvent } from '../chat/messages-origin.ts';
import type { AnswerChannel, AnswerGuard } from '../guard/answer-guard.ts';
import { guardItem, isObject, outputTextOf, partField, withoutLogprobs, type ItemText, type Json } from './raw-answer-items.ts';
import { eventLogprobs, ITEM_TEXTS, keyOf, num, parse, PART_TEXTS, placeOfKey, TEXTS, textPlace, type TextSpec } from './raw-response-texts.ts';

/** The texts of the model a stream says in .delta/.done events: the done event's field, the kind, where the text sits in its item. */

interface Channel {
  readonly channel: AnswerChannel;
  /** The events' name without .delta/.done. */
  readonly name: string;
  /** The item and indexes its events carry. */
  readonly place: Json;
  /** What the upstream said of it so far (deltas, or an added event's text). */
  said: string;
  /** What went out of it so far: the guarded text its done events say. */
  given: string;
  /** Nothing held any more: its rest went out. */
  ended: boolean;
}

interface OpenMessage {
  /** content_index -> the part as added, then as done. */
  readonly parts: Map<number, Json>;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete']);

export class RawResponseEvents {
  readonly #guard: AnswerGuard;
  readonly #scanning: boolean;
  /** `o:cN` (a content part), `o:sN` (a summary part), `o` (an item's own text) -> its channel. */
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
    this.#scanning = guard.scanning;
  }

  push(event: RawEvent, out: RawEvent[]): void {
    if (this.#terminalSent) return;
    const data = parse(event);
    if (data === null) return void out.push(event);
    if (this.#blocked) {
      if (TERMINAL.has(event.event)) this.#cutTerminal(isObject(data['response']) ? data['response'] : null, out);
      return;
    }
    const name = event.event;
    if (name.endsWith('.delta') && TEXTS[name.slice(0, -6)] !== undefined) return this.#delta(event, data, name.slice(0, -6), out);
    if (name.endsWith('.done') && TEXTS[name.slice(0, -5)] !== undefined) return this.#textDone(event, data, name.slice(0, -5), out);
    switch (name) {
      case 'response.created':
        if (isObject(data['response'])) this.#response = data['response'];
        return this.#emit(event, data, out);
      case 'response.content_part.added':
      case 'response.reasoning_summary_part.added':
        return this.#partAdded(event, data, out);
      case 'response.content_part.done':
      case 'response.reasoning_summary_part.done':
        return this.#partDone(event, data, out);
      case 'response.output_item.added':
        return this.#itemAdded(event, data, out);
      case 'response.shell_call_command.added':
        return this.#commandAdded(event, data, out);
      case 'response.output_item.done':
        return this.#itemDone(event, data, out);
      case 'response.completed':
      case 'response.incomplete':
        return this.#terminal(event, data, out);
      default:
        return this.#emit(event, data, out);
    }
  }

  /** The upstream ended: text still held goes out (an upstream that sent no done events), and a cut answer's terminal event. */
  end(out: RawEvent[]): void {
    if (this.#terminalSent) return;
    this.#endAll(out);
    if (this.#blocked) this.#cutTerminal(null, out);
  }

  flush(out: RawEvent[]): void {
    if (!this.#terminalSent) this.#endAll(out);
  }

  /** The upstream's response.failed repeats the output: the guarded items, as the client got them. */
  failure(event: RawEvent): RawEvent {
    const data = parse(event);
    if (data === null) return event;
    const response = data['response'];
    if (!isObject(response)) {
      // An `error` event: its own message may repeat what the model wrote, as response.failed's may.
      if (typeof data['message'] !== 'string') return event;
      data['message'] = this.#guard.whole('answer.message', 'text', data['message']).text;
      if (typeof data['sequence_number'] === 'number') data['sequence_number'] = this.#sequence++;
      return { event: event.event, data: JSON.stringify(data), translated: [] };
    }
    const guarded: Json = { ...response };
    if (Array.isArray(response['output'])) guarded['output'] = this.#output(response['output']).output;
    // The upstream's error message may repeat what the model wrote: guarded as text (cut at a block finding).
    const error = response['error'];
    if (isObject(error) && typeof error['message'] === 'string') {
      guarded['error'] = { ...error, message: this.#guard.whole('answer.error.message', 'text', error['message']).text };
    }
    if ('output_text' in response && Array.isArray(guarded['output'])) guarded['output_text'] = outputTextOf(guarded['output']);
    data['response'] = guarded;
    if (typeof data['sequence_number'] === 'number') data['sequence_number'] = this.#sequence++;
    return { event: event.event, data: JSON.stringify(data), translated: [] };
  }

  #delta(event: RawEvent, data: Json, name: string, out: RawEvent[]): void {
    const delta = data['delta'];
    if (typeof delta !== 'string') return this.#emit(event, data, out);
    const channel = this.#channels.get(keyOf(name, data)) ?? this.#open(name, data);
    const given = channel.channel.push(delta);
    channel.said += delta;
    channel.given += given;
    const logprobs = eventLogprobs(this.#scanning, name, data);
    if (given === delta && logprobs === data['logprobs']) this.#emit(event, data, out);
    else if (given !== '') this.#emit(event, { ...data, delta: given, ...(logprobs === undefined ? {} : { logprobs }) }, out, true);
    if (channel.channel.blocked) this.#cut(channel, out);
  }

  #textDone(event: RawEvent, data: Json, name: string, out: RawEvent[]): void {
    const spec = TEXTS[name] as TextSpec;
    const text = data[spec.field];
    let channel = this.#channels.get(keyOf(name, data));
    if (channel === undefined) {
      // Said only here, no deltas: guarded whole.
      if (typeof text !== 'string') return this.#emit(event, data, out);
      channel = this.#open(name, data);
      this.#whole(channel, text);
    }
    if (this.#end(channel, out)) return;
    const logprobs = eventLogprobs(this.#scanning, name, data);
    if (channel.given === text && logprobs === data['logprobs']) return this.#emit(event, data, out);
    this.#emit(event, { ...data, [spec.field]: channel.given, ...(logprobs === undefined ? {} : { logprobs }) }, out, true);
  }

  #partAdded(event: RawEvent, data: Json, out: RawEvent[]): void {
    const part = isObject(data['part']) ? data['part'] : {};
    let guarded = this.#scanning ? withoutLogprobs(part) : part;
    const field = partField(part) ?? '';
    const name = PART_TEXTS[part['type'] as string];
    // A part that comes with its text: the first of its channel, as a delta would be.
    const channel = name !== undefined && field !== '' && part[field] !== '' ? this.#said(name, data, part[field] as string) : null;
    if (channel !== null && channel.given !== part[field]) guarded = { ...guarded, [field]: channel.given };
    if (event.event === 'response.content_part.added') this.#messageOf(data).parts.set(num(data['content_index']), guarded);
    this.#emit(event, guarded === part ? data : { ...data, part: guarded }, out, guarded !== part);
    if (channel?.channel.blocked === true) this.#cut(channel, out);
  }

  /** A shell command begun: its text (when it comes with one) the first of its channel. */
  #commandAdded(event: RawEvent, data: Json, out: RawEvent[]): void {
    const command = data['command'];
    if (typeof command !== 'string' || command === '') return this.#emit(event, data, out);
    const channel = this.#said('response.shell_call_command', data, command);
    if (channel.channel.blocked) return this.#cut(channel, out);
    this.#emit(event, channel.given === command ? data : { ...data, command: channel.given }, out, channel.given !== command);
  }

  /** The text an added event says of the channel of `name` where `data` says: what of it is new goes through the channel. */
  #said(name: string, data: Json, text: string): Channel {
    const channel = this.#channels.get(keyOf(name, data)) ?? this.#open(name, data);
    if (!channel.ended && text.startsWith(channel.said) && text !== channel.said) {
      channel.given += channel.channel.push(text.slice(channel.said.length));
      channel.said = text;
    }
    return channel;
  }

  #partDone(event: RawEvent, data: Json, out: RawEvent[]): void {
    const part = data['part'];
    const field = isObject(part) ? partField(part) : null;
    if (!isObject(part) || field === null) return this.#emit(event, data, out);
    const name = PART_TEXTS[part['type'] as string] as string;
    let channel = this.#channels.get(keyOf(name, data));
    if (channel === undefined) {
      channel = this.#open(name, data);
      this.#whole(channel, part[field] as string);
    }
    if (this.#end(channel, out)) return;
    let guarded = channel.given === part[field] ? part : { ...part, [field]: channel.given };
    if (this.#scanning) guarded = withoutLogprobs(guarded);
    if (event.event === 'response.content_part.done') this.#messageOf(data).parts.set(num(data['content_index']), guarded);
    if (guarded === part) return this.#emit(event, data, out);
    this.#emit(event, { ...data, part: guarded }, out, true);
  }

  #itemAdded(event: RawEvent, data: Json, out: RawEvent[]): void {
    const item = data['item'];
    if (!isObject(item)) return this.#emit(event, data, out);
    const index = num(data['output_index']);
    // An item that comes with its texts: each the first of its channel, as deltas would be; a client-run item's whole.
    const cut: { channel: Channel | null } = { channel: null };
    const guarded = guardItem(item, index, (where: ItemText, text: string) => {
      const name = ITEM_TEXTS[where.source] ?? PART_TEXTS[where.source];
      if (name === undefined) return this.#guard.whole(where.path, where.kind, text);
      if (text === '') return { text, blocked: false };
      const channel = this.#said(name, placeOfKey(where.key, item['id'], data['output_index']), text);
      if (channel.channel.blocked) cut.channel = channel;
      return { text: channel.given, blocked: channel.channel.blocked };
    }, this.#scanning);
    if (guarded.item !== null && Array.isArray(guarded.item['content']) && item['type'] === 'message') {
      guarded.item['content'].forEach((part: unknown, c) => (isObject(part) ? this.#messageOf(data).parts.set(c, part) : undefined));
    }
    if (guarded.blocked) {
      // A message cut here goes out as far as it came, then done; any other item is left out whole.
      if (guarded.item !== null) this.#emit(event, { ...data, item: { ...guarded.item, status: item['status'] } }, out, true);
      if (cut.channel !== null) this.#cut(cut.channel, out);
      else this.#blocked = true;
      return;
    }
    if (guarded.item === item) return this.#emit(event, data, out);
    this.#emit(event, { ...data, item: guarded.item }, out, true);
  }

  #itemDone(event: RawEvent, data: Json, out: RawEvent[]): void {
    const item = data['item'];
    const index = num(data['output_index']);
    if (!isObject(item)) return this.#emit(event, data, out);
    // Texts of the item whose done events never came: their rest goes out first.
    for (const channel of this.#channels.values()) if (channel.place['output_index'] === data['output_index'] && this.#end(channel, out)) return;
    const guarded = this.#guardItem(index, item);
    if (guarded.item !== null) this.#done.set(index, guarded.item);
    if (guarded.blocked) {
      this.#blocked = true;
      // A message cut here (its text said only in this event) is done, incomplete; any other item is left out.
      if (guarded.item !== null) this.#emit(null, { ...data, item: guarded.item }, out, true, 'response.output_item.done');
      return;
    }
    if (guarded.item === item) return this.#emit(event, data, out);
    this.#emit(event, { ...data, item: guarded.item }, out, true);
  }

  #terminal(event: RawEvent, data: Json, out: RawEvent[]): void {
    // Texts whose done events never came: their rest goes out before the end.
    this.#endAll(out);
    const response = isObject(data['response']) ? data['response'] : null;
    if (this.#blocked) return this.#cutTerminal(response, out);
    this.#terminalSent = true;
    if (response === null || !Array.isArray(response['output'])) return this.#emit(event, data, out);
    const { output, blocked } = this.#output(response['output']);
    if (blocked) {
      this.#blocked = true;
      this.#terminalSent = false;
      output.forEach((item, i) => (isObject(item) ? this.#done.set(i, item) : undefined));
      return this.#cutTerminal(response, out);
    }
    // The SDKs' output_text, when the upstream sends it, says the output as the client got it.
    const text = 'output_text' in response ? outputTextOf(output) : undefined;
    const same = output.every((item, i) => item === (response['output'] as unknown[])[i]);
    if (same && (text === undefined || text === response['output_text'])) return this.#emit(event, data, out);
    this.#emit(event, { ...data, response: { ...response, output, ...(text === undefined ? {} : { output_text: text }) } }, out, true);
  }

  /** An item through the guard: each text as its channel gave it; a text no event said before (only here) guarded whole. */
  #guardItem(index: number, item: Json): { item: Json | null; blocked: boolean } {
    return guardItem(item, index, (where: ItemText, text: string) => {
      const channel = this.#channels.get(where.key);
      if (channel !== undefined) return { text: channel.given, blocked: channel.channel.blocked };
      return this.#guard.whole(where.path, where.kind, text);
    }, this.#scanning);
  }

  /** The terminal (or failure) event's output: each item as done here (by its output_index), any other guarded; cut after a block. */
  #output(items: unknown[]): { output: unknown[]; blocked: boolean } {
    const output: unknown[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      const done = this.#done.get(i);
      if (done !== undefined || !isObject(item)) {
        output.push(done ?? item);
        continue;
      }
      const guarded = this.#guardItem(i, item);
      if (guarded.item !== null) output.push(guarded.item);
      if (guarded.blocked) return { output, blocked: true };
    }
    return { output, blocked: false };
  }

  /** A channel for the text of `name` where `data` says. */
  #open(name: string, data: Json): Channel {
    const { place, path, kind } = textPlace(name, data);
    const channel: Channel = { channel: this.#guard.channel(path, kind), name, place, said: '', given: '', ended: false };
    this.#channels.set(keyOf(name, data), channel);
    return channel;
  }

  /** A text said whole (no deltas): all of it through the channel at once. */
  #whole(channel: Channel, text: string): void {
    channel.given += channel.channel.push(text);
    channel.given += channel.channel.end();
    channel.ended = true;
  }

  /** The channel's held rest out as one more delta; true when a block finding cut the answer there. */
  #end(channel: Channel, out: RawEvent[]): boolean {
    if (!channel.ended) {
      channel.ended = true;
      const rest = channel.channel.end();
      channel.given += rest;
      const deltaEvent = `${channel.name}.delta`;
      if (rest !== '') this.#emit(null, { type: deltaEvent, sequence_number: 0, ...channel.place, delta: rest, ...(channel.name === 'response.output_text' ? { logprobs: [] } : {}) }, out, true, deltaEvent);
    }
    if (!channel.channel.blocked) return false;
    if (!this.#blocked) this.#cut(channel, out);
    return true;
  }

  #endAll(out: RawEvent[]): void {
    for (const channel of this.#channels.values()) {
      if (this.#blocked) return;
      this.#end(channel, out);
    }
  }

  /** A block finding in `channel`: a message's cut part and item done, then nothing more of the output; any other item is left out. */
  #cut(channel: Channel, out: RawEvent[]): void {
    this.#blocked = true;
    const text = channel.name === 'response.output_text';
    if (!text && channel.name !== 'response.refusal') return;
    const place = channel.place;
    const index = num(place['output_index']);
    const doneType = `${channel.name}.done`;
    this.#emit(null, { type: doneType, sequence_number: 0, ...place, ...(text ? { text: channel.given, logprobs: [] } : { refusal: channel.given }) }, out, true, doneType);
    const part = text ? { type: 'output_text', annotations: [], logprobs: [], text: channel.given } : { type: 'refusal', refusal: channel.given };
    const message = this.#messageOf(place);
    message.parts.set(num(place['content_index']), part);
    this.#emit(null, { type: 'response.content_part.done', sequence_number: 0, ...place, part }, out, true, 'response.content_part.done');
    const content = [...message.parts.entries()].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
    const item: Json = { id: place['item_id'], type: 'message', status: 'incomplete', content, role: 'assistant' };
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
