// The events of the door guard tests: an Anthropic stream's and a Responses
// stream's pieces, as an upstream sends them.
import type { RawEvent } from '../../src/chat/messages-origin.ts';

export function ev(event: string, data: Record<string, unknown>): RawEvent {
  return { event, data: JSON.stringify(data), translated: [] };
}

export const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } };
export const textStart = (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
export const textDelta = (index: number, text: string) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
export const stop = (index: number) => ({ type: 'content_block_stop', index });
export const messageDelta = (reason: string) => ({ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 9 } });

export const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', created_at: 1, status: 'in_progress', completed_at: null, model: 'm', output: [] } };
export const msgItem = (status: string, content: unknown[]) => ({ id: 'msg_1', type: 'message', status, content, role: 'assistant' });
export const textPart = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
export const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
