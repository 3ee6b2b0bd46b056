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

/** One output item; `item` null when a cut leaves nothing of it the client may use (a function call cut short). */
export function guardOutputItem(item: Json, path: string, guard: AnswerGuard): { item: Json | null; blocked: boolean } {
  if (item['type'] === 'function_call' && typeof item['arguments'] === 'string') {
    const seen = guard.whole(`${path}.arguments`, 'json', item['arguments']);
    if (seen.blocked) return { item: null, blocked: true };
    return { item: seen.text === item['arguments'] ? item : { ...item, arguments: seen.text }, blocked: false };
  }
  if (item['type'] !== 'message' || !Array.isArray(item['content'])) return { item, blocked: false };
  const parts: unknown[] = [];
  let changed = false;
  let blocked = false;
  for (let c = 0; c < item['content'].length && !blocked; c++) {
    const part: unknown = item['content'][c];
    const field = isObject(part) ? partField(part) : null;
    if (field === null) {
      parts.push(part);
      continue;
    }
    const text = (part as Json)[field] as string;
    const seen = guard.whole(`${path}.content[${c}].${field}`, 'text', text);
    blocked = seen.blocked;
    if (seen.text === text) parts.push(part);
    else {
      changed = true;
      parts.push({ ...(part as Json), [field]: seen.text });
    }
  }
  if (blocked) return { item: { ...item, status: 'incomplete', content: parts }, blocked: true };
  return { item: changed ? { ...item, content: parts } : item, blocked: false };
}

/** The field of a message part that holds the model's text: `text` of output_text, `refusal` of refusal. */
export function partField(part: Json): 'text' | 'refusal' | null {
  if (part['type'] === 'output_text' && typeof part['text'] === 'string') return 'text';
  if (part['type'] === 'refusal' && typeof part['refusal'] === 'string') return 'refusal';
  return null;
}
