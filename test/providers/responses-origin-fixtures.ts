// What the tests of a Responses client's request at a provider share: a body
// as Codex CLI sends it (CLIENTS.md), the ChatRequest the gateway routes it as
// (with its origin), and a Responses answer and stream holding an encrypted
// reasoning item, text, a function call and a hosted tool's call.
import { setResponsesOrigin, type ResponsesOrigin } from '../../src/chat/responses-origin.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';

/** A Codex body: its history holds a reasoning item with encrypted_content and a function call round trip. */
export const CODEX_BODY: Readonly<Record<string, unknown>> = {
  model: 'service-code',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>danger-full-access</permissions>' }] },
    { type: 'message', role: 'user', id: 'msg_u1', content: [{ type: 'input_text', text: 'List the files.' }] },
    { type: 'reasoning', id: 'rs_0', summary: [], encrypted_content: 'gAAAAABpZ0enc==' },
    { type: 'function_call', id: 'fc_0', call_id: 'call_0', name: 'exec_command', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'call_0', output: 'Chunk ID: 1\nOutput:\nREADME.md' },
  ],
  tools: [
    { type: 'function', name: 'exec_command', description: 'Runs a command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
    { type: 'web_search' },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: { summary: 'auto' },
  store: false,
  stream: true,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: 'sess-0193',
  max_output_tokens: 100000,
};

export function origin(overrides: Partial<ResponsesOrigin> = {}): ResponsesOrigin {
  return { body: CODEX_BODY, untranslatable: null, extraFields: [], leftOutTools: [], toolNames: new Map(), ...overrides };
}

/** The request a target receives for `origin`: the alias's model replaced, max_tokens clamped by the alias's cap. */
export function originRequest(o: ResponsesOrigin, request: Partial<ChatRequest> = {}): ChatRequest {
  const chat: ChatRequest = { model: 'gpt-upstream', messages: [{ role: 'user', content: 'List the files.' }], max_tokens: 32000, stream: true, ...request };
  setResponsesOrigin(chat, o);
  return chat;
}

export function originCall(o: ResponsesOrigin, request: Partial<ChatRequest> = {}): UpstreamCall {
  return { request: originRequest(o, request), requestId: 'req_resp-1', signal: new AbortController().signal };
}

/** What an upstream that speaks only chat completions cannot take in CODEX_BODY. */
export const UNTRANSLATABLE = new InvalidRequestError(
  "The reasoning item at 'input[2]' carries encrypted_content that only an upstream speaking Responses can take back.",
  'input[2]',
  'unsupported_parameter',
);

/** A whole Responses answer with every item type chat has no shape for. */
export const RICH_ANSWER = {
  id: 'resp_01rich',
  object: 'response',
  created_at: 1764000000,
  status: 'completed',
  model: 'gpt-5.1-codex-2026',
  output: [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Look first.' }], encrypted_content: 'gAAAAABpZ1enc==' },
    { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'portcullis' } },
    { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }] },
    { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls -a"}' },
  ],
  usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 80, output_tokens_details: { reasoning_tokens: 40 }, total_tokens: 1280 },
  store: false,
};

const created = { id: 'resp_02', object: 'response', created_at: 1764000001, status: 'in_progress', model: 'gpt-5.1-codex-2026', output: [], usage: null };

/** A streamed answer as OpenAI sends it: reasoning, text, a function call and a hosted tool's events. */
export const RICH_EVENTS: ReadonlyArray<{ event: string; data: string }> = [
  ['response.created', { response: created }],
  ['response.in_progress', { response: created }],
  ['response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } }],
  ['response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Look first.' }],
  ['response.output_item.done', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gAAAAABpZ1enc==' } }],
  ['response.web_search_call.searching', { output_index: 1, item_id: 'ws_1' }],
  ['response.output_item.added', { output_index: 2, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }],
  ['response.content_part.added', { item_id: 'msg_1', output_index: 2, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }],
  ['response.output_text.delta', { item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'Let me ', logprobs: [] }],
  ['response.output_text.delta', { item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'look. ✓', logprobs: [] }],
  ['response.output_text.done', { item_id: 'msg_1', output_index: 2, content_index: 0, text: 'Let me look. ✓', logprobs: [] }],
  ['response.output_item.added', { output_index: 3, item: { id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'call_1', name: 'exec_command', arguments: '' } }],
  ['response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 3, delta: '{"cmd":' }],
  ['response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 3, delta: '"ls -a"}' }],
  ['response.function_call_arguments.done', { item_id: 'fc_1', output_index: 3, arguments: '{"cmd":"ls -a"}' }],
  ['response.output_item.done', { output_index: 3, item: { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls -a"}' } }],
  [
    'response.completed',
    {
      response: {
        ...created,
        status: 'completed',
        usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 80, output_tokens_details: { reasoning_tokens: 40 }, total_tokens: 1280 },
      },
    },
  ],
].map(([type, rest], i) => ({ event: type as string, data: JSON.stringify({ type, sequence_number: i, ...(rest as object) }) }));

export function eventStreamText(events: ReadonlyArray<{ event: string; data: string }>): string {
  return events.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join('');
}
