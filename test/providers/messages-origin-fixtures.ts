// What the tests of a Messages client's request at a provider share: a body
// as Claude Code sends it, the ChatRequest the gateway routes it as (with its
// origin), and an Anthropic answer and stream holding thinking with its
// signature, a server tool and its result, and citations.
import { setMessagesOrigin, type MessagesOrigin } from '../../src/chat/messages-origin.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';

/** A Claude Code body (CLIENTS.md), its history holding a signed thinking block and a server tool's result. */
export const CLAUDE_CODE_BODY: Readonly<Record<string, unknown>> = {
  model: 'claude-opus-5-5',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'What is Portcullis?', cache_control: { type: 'ephemeral' } }] },
    { role: 'system', content: 'Primary working directory: /tmp/project' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Search first.', signature: 'EqQBCkYIARgCIkBsig+/=' },
        { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'portcullis gateway' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_01',
          content: [{ type: 'web_search_result', url: 'https://example.com/p', title: 'Portcullis', encrypted_content: 'EqgfCioIARgB', page_age: null }],
        },
        { type: 'text', text: 'A gateway.', citations: [{ type: 'web_search_result_location', url: 'https://example.com/p', title: 'Portcullis', encrypted_index: 'Eo8B', cited_text: 'A gateway' }] },
      ],
    },
    { role: 'user', content: 'More, please.' },
  ],
  system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
  tools: [
    { name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } },
    { name: 'Later', description: 'Deferred', input_schema: { type: 'object' }, defer_loading: true },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
  ],
  metadata: { user_id: 'user_abc' },
  max_tokens: 128000,
  thinking: { type: 'adaptive', display: 'omitted' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'medium' },
  stream: true,
};

export function origin(overrides: Partial<MessagesOrigin> = {}): MessagesOrigin {
  return { body: CLAUDE_CODE_BODY, untranslatable: null, version: undefined, betas: [], extraFields: [], ...overrides };
}

/** The request a target receives for `origin`: the alias's model replaced, max_tokens clamped by the alias's cap. */
export function originRequest(o: MessagesOrigin, request: Partial<ChatRequest> = {}): ChatRequest {
  const chat: ChatRequest = { model: 'claude-opus-upstream', messages: [{ role: 'user', content: 'What is Portcullis?' }], max_tokens: 32000, stream: true, ...request };
  setMessagesOrigin(chat, o);
  return chat;
}

export function originCall(o: MessagesOrigin, request: Partial<ChatRequest> = {}): UpstreamCall {
  return { request: originRequest(o, request), requestId: 'req_msg-1', signal: new AbortController().signal };
}

/** What an OpenAI-compatible upstream cannot take in CLAUDE_CODE_BODY. */
export const UNTRANSLATABLE = new InvalidRequestError(
  "The thinking block at 'messages[2].content[0]' carries a signature that only an Anthropic upstream can take.",
  'messages[2].content[0]',
  'unsupported_parameter',
);

/** Anthropic's answer with every block type chat has no shape for. */
export const RICH_ANSWER = {
  id: 'msg_01rich',
  type: 'message',
  role: 'assistant',
  model: 'claude-opus-upstream-20260101',
  content: [
    { type: 'thinking', thinking: 'Let me search.', signature: 'EqQBCkYIARgCIkB+/=' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
    { type: 'server_tool_use', id: 'srvtoolu_02', name: 'web_search', input: { query: 'portcullis' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_02',
      content: [{ type: 'web_search_result', url: 'https://example.com/p', title: 'Portcullis', encrypted_content: 'Eqgf', page_age: 'April 30, 2026' }],
    },
    {
      type: 'text',
      text: 'Portcullis is a gateway.',
      citations: [{ type: 'web_search_result_location', url: 'https://example.com/p', title: 'Portcullis', encrypted_index: 'Eo8B', cited_text: 'a gateway' }],
    },
    { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: '/tmp/a.txt' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 50,
    cache_creation_input_tokens: 1000,
    cache_read_input_tokens: 2000,
    output_tokens: 120,
    server_tool_use: { web_search_requests: 1 },
    service_tier: 'standard',
  },
};

/** A stream with thinking and its signature, a server tool, its result, a citation and text; every event's data as Anthropic writes it. */
export const RICH_EVENTS: ReadonlyArray<{ event: string; data: string }> = [
  {
    event: 'message_start',
    data: '{"type":"message_start","message":{"id":"msg_02rich","type":"message","role":"assistant","model":"claude-opus-upstream-20260101","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":50,"cache_creation_input_tokens":1000,"cache_read_input_tokens":2000,"output_tokens":1}}}',
  },
  { event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}' },
  { event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me search."}}' },
  { event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIARgCIkB+/="}}' },
  { event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
  { event: 'ping', data: '{"type": "ping"}' },
  { event: 'content_block_start', data: '{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_02","name":"web_search","input":{}}}' },
  { event: 'content_block_delta', data: '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"query\\": \\"portcullis\\"}"}}' },
  { event: 'content_block_stop', data: '{"type":"content_block_stop","index":1}' },
  {
    event: 'content_block_start',
    data: '{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_02","content":[{"type":"web_search_result","url":"https://example.com/p","title":"Portcullis","encrypted_content":"Eqgf","page_age":null}]}}',
  },
  { event: 'content_block_stop', data: '{"type":"content_block_stop","index":2}' },
  { event: 'content_block_start', data: '{"type":"content_block_start","index":3,"content_block":{"type":"text","text":"","citations":[]}}' },
  {
    event: 'content_block_delta',
    data: '{"type":"content_block_delta","index":3,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://example.com/p","title":"Portcullis","encrypted_index":"Eo8B","cited_text":"a gateway"}}}',
  },
  { event: 'content_block_delta', data: '{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Portcullis is a gateway."}}' },
  { event: 'content_block_stop', data: '{"type":"content_block_stop","index":3}' },
  { event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":120}}' },
  { event: 'message_stop', data: '{"type":"message_stop"}' },
];

export function eventStreamText(events: ReadonlyArray<{ event: string; data: string }>): string {
  return events.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join('');
}
