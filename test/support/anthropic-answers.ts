// Anthropic Messages answers as a fake upstream writes them: the JSON message
// and the same message as the event stream Anthropic sends
// (https://platform.claude.com/docs/en/build-with-claude/streaming):
// message_start with usage, one content_block_start / deltas /
// content_block_stop per block (a tool's input as input_json_delta pieces, a
// thinking block's text then its signature_delta), a ping, message_delta with
// the stop reason and usage, message_stop.
import type { ServerResponse } from 'node:http';

export type AnswerBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string };

export interface AnthropicAnswer {
  id: string;
  model: string;
  content: AnswerBlock[];
  stop_reason: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
}

export function anthropicMessage(answer: AnthropicAnswer): Record<string, unknown> {
  return { id: answer.id, type: 'message', role: 'assistant', model: answer.model, content: answer.content, stop_reason: answer.stop_reason, stop_sequence: null, usage: answer.usage };
}

/** Splits `text` in about `pieces` parts (at least one), the way deltas arrive. */
function pieces(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length === 0 ? [''] : out;
}

/** The answer as Anthropic streams it: [event, data] in order. */
export function anthropicEvents(answer: AnthropicAnswer): Array<[string, Record<string, unknown>]> {
  const events: Array<[string, Record<string, unknown>]> = [
    ['message_start', { type: 'message_start', message: { ...anthropicMessage(answer), content: [], stop_reason: null, usage: { ...answer.usage, output_tokens: 1 } } }],
    ['ping', { type: 'ping' }],
  ];
  answer.content.forEach((block, index) => {
    const delta = (d: Record<string, unknown>): void => void events.push(['content_block_delta', { type: 'content_block_delta', index, delta: d }]);
    if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      for (const text of pieces(block.text, 2)) delta({ type: 'text_delta', text });
    } else if (block.type === 'tool_use') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
      for (const json of pieces(JSON.stringify(block.input), 3)) delta({ type: 'input_json_delta', partial_json: json });
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }]);
      for (const thinking of pieces(block.thinking, 2)) delta({ type: 'thinking_delta', thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: answer.stop_reason, stop_sequence: null }, usage: { output_tokens: answer.usage.output_tokens } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}

export function anthropicEventStream(answer: AnthropicAnswer): string {
  return anthropicEvents(answer)
    .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');
}

/** Writes the answer, streamed when the request asked for a stream, with a `request-id` as Anthropic sends. */
export function writeAnthropicAnswer(res: ServerResponse, answer: AnthropicAnswer, stream: boolean, requestId: string): void {
  if (stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
    res.end(anthropicEventStream(answer));
    return;
  }
  const text = JSON.stringify(anthropicMessage(answer));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'request-id': requestId });
  res.end(text);
}

/** Anthropic's error answer: `{"type":"error","error":{type,message},"request_id"}` with the `request-id` header. */
export function writeAnthropicError(res: ServerResponse, status: number, type: string, message: string, requestId: string, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'request-id': requestId, ...headers });
  res.end(text);
}
