// OpenAI Responses answers as a fake upstream writes them: the `response`
// object (https://platform.openai.com/docs/api-reference/responses/object)
// and the same response as the event stream OpenAI sends
// (https://platform.openai.com/docs/api-reference/responses-streaming):
// response.created, response.in_progress, then per output item
// output_item.added, its content (a message's content_part.added,
// output_text.delta pieces, output_text.done, content_part.done; a function
// call's function_call_arguments.delta pieces and .done), output_item.done,
// and response.completed with usage. A reasoning item has no deltas: added,
// then done with its encrypted_content. Every event carries `type` and a
// `sequence_number` counting from 0, and goes out as `event:` + `data:`.
import type { ServerResponse } from 'node:http';

export type ResponsesAnswerItem =
  | { type: 'message'; id: string; text: string }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string }
  /** Reasoning kept opaque, as OpenAI returns it with `include: ["reasoning.encrypted_content"]` and `store: false`. */
  | { type: 'reasoning'; id: string; encrypted_content: string };

export interface ResponsesAnswer {
  id: string;
  model: string;
  /** Seconds since the epoch. */
  created_at: number;
  output: ResponsesAnswerItem[];
  usage: { input_tokens: number; output_tokens: number };
}

function outputItem(item: ResponsesAnswerItem, status: 'in_progress' | 'completed'): Record<string, unknown> {
  // A reasoning item has no status; its encrypted content arrives whole with output_item.done.
  if (item.type === 'reasoning') return status === 'completed' ? { id: item.id, type: 'reasoning', summary: [], encrypted_content: item.encrypted_content } : { id: item.id, type: 'reasoning', summary: [] };
  if (item.type === 'function_call') return { id: item.id, type: 'function_call', status, arguments: status === 'completed' ? item.arguments : '', call_id: item.call_id, name: item.name };
  return { id: item.id, type: 'message', status, role: 'assistant', content: status === 'completed' ? [outputText(item.text)] : [] };
}

function outputText(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** The documented usage object: details included, total the sum. */
export function responsesUsage(usage: ResponsesAnswer['usage']): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/** The `response` object; `status` other than completed drops output and usage, as OpenAI's created/in_progress snapshots do. */
export function responsesObject(answer: ResponsesAnswer, status: 'in_progress' | 'completed' = 'completed'): Record<string, unknown> {
  const done = status === 'completed';
  return {
    id: answer.id,
    object: 'response',
    created_at: answer.created_at,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: answer.model,
    output: done ? answer.output.map((item) => outputItem(item, 'completed')) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: done ? responsesUsage(answer.usage) : null,
    user: null,
    metadata: {},
  };
}

/** Splits `text` in about `count` parts (at least one), the way deltas arrive. */
function pieces(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length === 0 ? [''] : out;
}

/** The answer as OpenAI streams it: each event's data, `type` and `sequence_number` set, in order. */
export function responsesEvents(answer: ResponsesAnswer): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  const push = (type: string, fields: Record<string, unknown>): void => void events.push({ type, sequence_number: events.length, ...fields });
  push('response.created', { response: responsesObject(answer, 'in_progress') });
  push('response.in_progress', { response: responsesObject(answer, 'in_progress') });
  answer.output.forEach((item, output_index) => {
    push('response.output_item.added', { output_index, item: outputItem(item, 'in_progress') });
    if (item.type === 'message') {
      const at = { item_id: item.id, output_index, content_index: 0 };
      push('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } });
      for (const delta of pieces(item.text, 2)) push('response.output_text.delta', { ...at, delta, logprobs: [] });
      push('response.output_text.done', { ...at, text: item.text, logprobs: [] });
      push('response.content_part.done', { ...at, part: { type: 'output_text', text: item.text, annotations: [] } });
    } else if (item.type === 'function_call') {
      for (const delta of pieces(item.arguments, 3)) push('response.function_call_arguments.delta', { item_id: item.id, output_index, delta });
      push('response.function_call_arguments.done', { item_id: item.id, output_index, name: item.name, arguments: item.arguments });
    }
    push('response.output_item.done', { output_index, item: outputItem(item, 'completed') });
  });
  push('response.completed', { response: responsesObject(answer) });
  return events;
}

/** Writes the answer as JSON, or as the event stream when `stream`. */
export function writeResponsesAnswer(res: ServerResponse, answer: ResponsesAnswer, stream: boolean, requestId: string): void {
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify(responsesObject(answer)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
  for (const event of responsesEvents(answer)) res.write(`event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

/** OpenAI's error envelope, all four keys present. */
export function writeResponsesError(res: ServerResponse, status: number, error: { message: string; type: string; param?: string | null; code?: string | null }): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code ?? null } }));
}
