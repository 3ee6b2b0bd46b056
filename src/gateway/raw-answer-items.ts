// One content block of a Messages answer, one output item of a Responses
// answer, through the answer guard as a whole text (./answer-raw-guard.ts):
// what a whole answer is made of, and what a stream repeats whole in its
// closing events.
import type { AnswerGuard } from '../guard/answer-guard.ts';

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One content block; `block` null when a cut leaves nothing of it the client may use (a tool call cut short). */
export function guardContentBlock(block: Json, path: string, guard: AnswerGuard): { block: Json | null; blocked: boolean } {
  switch (block['type']) {
    case 'text': {
      if (typeof block['text'] !== 'string') break;
      const seen = guard.whole(`${path}.text`, 'text', block['text']);
      return { block: seen.text === block['text'] ? block : { ...block, text: seen.text }, blocked: seen.blocked };
    }
    case 'thinking': {
      if (typeof block['thinking'] !== 'string') break;
      const seen = guard.whole(`${path}.thinking`, 'signed', block['thinking']);
      // The signature was over the whole text: a cut one goes without it, as a stream cut there would.
      return { block: seen.blocked ? { ...block, thinking: seen.text, signature: '' } : block, blocked: seen.blocked };
    }
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use': {
      if (!isObject(block['input'])) break;
      const source = JSON.stringify(block['input']);
      const seen = guard.whole(`${path}.input`, 'json', source);
      if (seen.blocked) return { block: null, blocked: true };
      return { block: seen.text === source ? block : { ...block, input: JSON.parse(seen.text) as unknown }, blocked: false };
    }
    default:
      break;
  }
  return { block, blocked: false };
}

/**
 * Where one text of an output item is found: its channel's key in a stream
 * (`o:cN` a content part, `o:sN` a summary part, `o:kN` a shell command, `o` the item's own field or a patch's diff),
 * the path findings name, the kind of text.
 */
export interface ItemText {
  readonly key: string;
  /** The item's type (an own field) or the part's type (a part's text): which stream events say it. */
  readonly source: string;
  readonly path: string;
  readonly kind: 'text' | 'json';
}

/** How an item's text is guarded: whole (a whole answer), or by the stream's channel of that text. */
export type TextGuard = (where: ItemText, text: string) => { readonly text: string; readonly blocked: boolean };

/** The item types whose own field is a text of the model (a call's arguments, a tool's input, code). */
const ITEM_FIELDS: Readonly<Record<string, { field: string; kind: 'text' | 'json' }>> = {
  function_call: { field: 'arguments', kind: 'json' },
  mcp_call: { field: 'arguments', kind: 'json' },
  custom_tool_call: { field: 'input', kind: 'text' },
  code_interpreter_call: { field: 'code', kind: 'text' },
  mcp_approval_request: { field: 'arguments', kind: 'json' },
};

/** A text inside a client-run item: where it sits (keys from the item down), the text. */
interface NestedText {
  readonly at: readonly (string | number)[];
  readonly text: string;
}

/**
 * The texts of the items the client runs (a shell's commands, a computer's
 * typed text, a patch's diff): the client executes them as the model wrote
 * them. Each is guarded as text; a block finding leaves the item out whole.
 */
function clientTexts(item: Json): NestedText[] {
  const action = isObject(item['action']) ? item['action'] : null;
  const strings = (field: string, list: unknown): NestedText[] =>
    Array.isArray(list) ? list.flatMap((text: unknown, n) => (typeof text === 'string' ? [{ at: ['action', field, n], text }] : [])) : [];
  switch (item['type']) {
    case 'shell_call':
      return strings('commands', action?.['commands']);
    case 'local_shell_call':
      return strings('command', action?.['command']);
    case 'computer_call':
      return typeof action?.['text'] === 'string' ? [{ at: ['action', 'text'], text: action['text'] }] : [];
    case 'apply_patch_call': {
      const operation = item['operation'];
      return isObject(operation) && typeof operation['diff'] === 'string' ? [{ at: ['operation', 'diff'], text: operation['diff'] }] : [];
    }
    default:
      return [];
  }
}

/** `value` at `at` in a copy of `json` (the arrays and objects on the way copied). */
function setIn(json: unknown, at: readonly (string | number)[], value: string): unknown {
  if (at.length === 0) return value;
  const [key, ...rest] = at as [string | number, ...(string | number)[]];
  if (Array.isArray(json)) {
    const copy = [...json];
    copy[key as number] = setIn(copy[key as number], rest, value);
    return copy;
  }
  const object = json as Json;
  return { ...object, [key]: setIn(object[key as string], rest, value) };
}

/** A client-run item through `guard`: null when a text of it is blocked (the client must not run any of it). */
function guardClientItem(item: Json, index: number, guard: TextGuard): { item: Json | null; blocked: boolean } {
  let guarded: Json = item;
  for (const { at, text } of clientTexts(item)) {
    const where = `${at.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('')}`;
    // A stream says a patch's diff and each shell command as a channel of its own; a computer's typed text and argv come only whole.
    const key = item['type'] === 'apply_patch_call' ? String(index) : item['type'] === 'shell_call' ? `${index}:k${at[2] as number}` : `${index}:${where}`;
    const seen = guard({ key, source: item['type'] as string, path: `answer.output[${index}]${where}`, kind: 'text' }, text);
    if (seen.blocked) return { item: null, blocked: true };
    if (seen.text !== text) guarded = setIn(guarded, at, seen.text) as Json;
  }
  return { item: guarded, blocked: false };
}

/**
 * One output item through `guard`; `item` null when a cut leaves nothing of
 * it the client may use (a call, a tool's input or code, a reasoning item cut
 * short: a client must not run or replay half of it). A message cut keeps its
 * parts up to the cut, status incomplete. With `scanning`, output_text parts
 * lose their logprobs (the tokens would spell a masked value as it was).
 * A reasoning item's encrypted_content is opaque: it goes as it came.
 */
export function guardItem(item: Json, index: number, guard: TextGuard, scanning: boolean): { item: Json | null; blocked: boolean } {
  const type = item['type'];
  const own = typeof type === 'string' ? ITEM_FIELDS[type] : undefined;
  if (own !== undefined) {
    const text = item[own.field];
    if (typeof text !== 'string') return { item, blocked: false };
    const seen = guard({ key: String(index), source: type as string, path: `answer.output[${index}].${own.field}`, kind: own.kind }, text);
    if (seen.blocked) return { item: null, blocked: true };
    return { item: seen.text === text ? item : { ...item, [own.field]: seen.text }, blocked: false };
  }
  if (clientTexts(item).length > 0) return guardClientItem(item, index, guard);
  if (type === 'message') {
    const content = guardParts(item['content'], index, 'content', guard, scanning);
    if (content.blocked) return { item: { ...item, status: 'incomplete', content: content.parts }, blocked: true };
    return { item: content.parts === item['content'] ? item : { ...item, content: content.parts }, blocked: false };
  }
  if (type === 'reasoning') {
    const summary = guardParts(item['summary'], index, 'summary', guard, scanning);
    if (summary.blocked) return { item: null, blocked: true };
    const content = guardParts(item['content'], index, 'content', guard, scanning);
    if (content.blocked) return { item: null, blocked: true };
    if (summary.parts === item['summary'] && content.parts === item['content']) return { item, blocked: false };
    const guarded: Json = { ...item };
    if (summary.parts !== undefined) guarded['summary'] = summary.parts;
    if (content.parts !== undefined) guarded['content'] = content.parts;
    return { item: guarded, blocked: false };
  }
  return { item, blocked: false };
}

/** An item's parts (`content` or `summary`): the same array when nothing changed; cut after the part a block finding is in. */
function guardParts(parts: unknown, index: number, slot: 'content' | 'summary', guard: TextGuard, scanning: boolean): { parts: unknown; blocked: boolean } {
  if (!Array.isArray(parts)) return { parts, blocked: false };
  const out: unknown[] = [];
  let changed = false;
  for (let c = 0; c < parts.length; c++) {
    const part: unknown = parts[c];
    const field = isObject(part) ? partField(part) : null;
    if (field === null) {
      out.push(part);
      continue;
    }
    const text = (part as Json)[field] as string;
    const seen = guard({ key: `${index}:${slot === 'content' ? 'c' : 's'}${c}`, source: (part as Json)['type'] as string, path: `answer.output[${index}].${slot}[${c}].${field}`, kind: 'text' }, text);
    let guarded = seen.text === text ? (part as Json) : { ...(part as Json), [field]: seen.text };
    if (scanning) guarded = withoutLogprobs(guarded);
    if (guarded !== part) changed = true;
    out.push(guarded);
    if (seen.blocked) return { parts: out, blocked: true };
  }
  return { parts: changed ? out : parts, blocked: false };
}

/** The field of a part that holds the model's text: `text` of output_text, reasoning_text and summary_text, `refusal` of refusal. */
export function partField(part: Json): 'text' | 'refusal' | null {
  const type = part['type'];
  if ((type === 'output_text' || type === 'reasoning_text' || type === 'summary_text') && typeof part['text'] === 'string') return 'text';
  if (type === 'refusal' && typeof part['refusal'] === 'string') return 'refusal';
  return null;
}

/**
 * An output_text part without its logprobs (optional in a part: left out);
 * the same part when it has none to give. The tokens are the model's own
 * text: they would show a masked value as it was, a held one early.
 */
export function withoutLogprobs(part: Json): Json {
  const logprobs = part['logprobs'];
  if (part['type'] !== 'output_text' || logprobs === undefined || (Array.isArray(logprobs) && logprobs.length === 0)) return part;
  const rest = { ...part };
  delete rest['logprobs'];
  return rest;
}

/** The SDKs' `output_text`: every output_text part of the message items, joined. */
export function outputTextOf(items: readonly unknown[]): string {
  let text = '';
  for (const item of items) {
    if (!isObject(item) || item['type'] !== 'message' || !Array.isArray(item['content'])) continue;
    for (const part of item['content']) if (isObject(part) && part['type'] === 'output_text' && typeof part['text'] === 'string') text += part['text'];
  }
  return text;
}
