// The texts of the model a Responses stream says (./raw-response-events.ts):
// which events say each, where each sits in its item, the channel's key and
// the path its findings name.
import type { RawEvent } from '../chat/messages-origin.ts';
import { isObject, type Json } from './raw-answer-items.ts';

export interface TextSpec {
  readonly field: string;
  readonly kind: 'text' | 'json';
  /** content: a part by content_index; summary: by summary_index; command: a shell command by command_index; item: the item's own field. */
  readonly slot: 'content' | 'summary' | 'command' | 'item';
  /** Where an item's text sits in it when not its own field (a patch's diff: `operation.diff`). */
  readonly at?: string;
}

export const TEXTS: Readonly<Record<string, TextSpec>> = {
  'response.output_text': { field: 'text', kind: 'text', slot: 'content' },
  'response.refusal': { field: 'refusal', kind: 'text', slot: 'content' },
  'response.reasoning_text': { field: 'text', kind: 'text', slot: 'content' },
  'response.reasoning_summary_text': { field: 'text', kind: 'text', slot: 'summary' },
  'response.function_call_arguments': { field: 'arguments', kind: 'json', slot: 'item' },
  'response.mcp_call_arguments': { field: 'arguments', kind: 'json', slot: 'item' },
  'response.custom_tool_call_input': { field: 'input', kind: 'text', slot: 'item' },
  'response.code_interpreter_call_code': { field: 'code', kind: 'text', slot: 'item' },
  'response.apply_patch_call_operation_diff': { field: 'diff', kind: 'text', slot: 'item', at: 'operation.diff' },
  // A shell call's commands (their events carry no item_id; the first of each comes in .added).
  'response.shell_call_command': { field: 'command', kind: 'text', slot: 'command' },
  // The same events under their earlier name.
  'response.code_interpreter_call.code': { field: 'code', kind: 'text', slot: 'item' },
};

/** An item's own text events, by the item's type (its text said in output_item.added as the first of it). */
export const ITEM_TEXTS: Readonly<Record<string, string>> = {
  function_call: 'response.function_call_arguments',
  mcp_call: 'response.mcp_call_arguments',
  custom_tool_call: 'response.custom_tool_call_input',
  code_interpreter_call: 'response.code_interpreter_call_code',
  apply_patch_call: 'response.apply_patch_call_operation_diff',
  shell_call: 'response.shell_call_command',
};

/** A part's text events, by the part's type (content_part.done and reasoning_summary_part.done). */
export const PART_TEXTS: Readonly<Record<string, string>> = {
  output_text: 'response.output_text',
  refusal: 'response.refusal',
  reasoning_text: 'response.reasoning_text',
  summary_text: 'response.reasoning_summary_text',
};

/** Where the text of `name` sits by `data`'s indexes: the place its events carry, the path findings name, its kind. */
export function textPlace(name: string, data: Json): { place: Json; path: string; kind: 'text' | 'json' } {
  const spec = TEXTS[name] as TextSpec;
  const o = num(data['output_index']);
  const place: Json = { item_id: data['item_id'], output_index: data['output_index'] };
  if (spec.slot === 'item') return { place, path: `answer.output[${o}].${spec.at ?? spec.field}`, kind: spec.kind };
  if (spec.slot === 'command') {
    const k = num(data['command_index']);
    return { place: { output_index: data['output_index'], command_index: data['command_index'] }, path: `answer.output[${o}].action.commands[${k}]`, kind: spec.kind };
  }
  if (spec.slot === 'summary') {
    place['summary_index'] = data['summary_index'];
    return { place, path: `answer.output[${o}].summary[${num(data['summary_index'])}].${spec.field}`, kind: spec.kind };
  }
  place['content_index'] = data['content_index'];
  return { place, path: `answer.output[${o}].content[${num(data['content_index'])}].${spec.field}`, kind: spec.kind };
}

/** A text's channel key: `o:cN` a content part's, `o:sN` a summary part's, `o:kN` a shell command's, `o` an item's own text. */
export function keyOf(name: string, data: Json): string {
  const o = num(data['output_index']);
  const slot = (TEXTS[name] as TextSpec).slot;
  if (slot === 'item') return String(o);
  if (slot === 'summary') return `${o}:s${num(data['summary_index'])}`;
  if (slot === 'command') return `${o}:k${num(data['command_index'])}`;
  return `${o}:c${num(data['content_index'])}`;
}

/** The indexes the events of the text at channel `key` carry (an added item's texts, by the keys of ./raw-answer-items.ts guardItem). */
export function placeOfKey(key: string, itemId: unknown, outputIndex: unknown): Json {
  const slot = key.slice(key.indexOf(':') + 1);
  const n = Number(slot.slice(1));
  if (slot.startsWith('k')) return { output_index: outputIndex, command_index: n };
  const place: Json = { item_id: itemId, output_index: outputIndex };
  if (slot.startsWith('c')) place['content_index'] = n;
  if (slot.startsWith('s')) place['summary_index'] = n;
  return place;
}

/** An output_text event's logprobs as they may go: `[]` while scanning (the field is required there); undefined when the event has none. */
export function eventLogprobs(scanning: boolean, name: string, data: Json): unknown {
  const logprobs = data['logprobs'];
  if (!scanning || name !== 'response.output_text' || !Array.isArray(logprobs) || logprobs.length === 0) return logprobs;
  return [];
}

export function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

export function parse(event: RawEvent): Json | null {
  try {
    const data: unknown = JSON.parse(event.data);
    return isObject(data) ? data : null;
  } catch {
    return null;
  }
}
