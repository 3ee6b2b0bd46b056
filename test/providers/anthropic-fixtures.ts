// What the Anthropic adapter's tests share: a fake upstream that holds every
// request to Anthropic's documented constraints first (./anthropic-constraints.ts),
// the adapter against it, the call it makes and the events the fake sends.
import assert from 'node:assert/strict';
import type { ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import { createAnthropicProvider, type AnthropicOptions } from '../../src/providers/anthropic.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';
import { refuseLikeAnthropic } from './anthropic-constraints.ts';
import { useFakeUpstream, type FileUpstream } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

export { sendJson as json, startEventStream } from '../../src/testing/fake-upstream.ts';

export const API_KEY = 'sk-ant-upstream-secret-123';

/** The file's fake Anthropic: a request outside Anthropic's constraints gets Anthropic's 400 before any handler. */
export function useAnthropicUpstream(): FileUpstream {
  return useFakeUpstream((res, received) => refuseLikeAnthropic(res, received.text));
}

export function providerFor(upstream: FileUpstream, options: Partial<AnthropicOptions> = {}): DrivenProvider {
  return drive(createAnthropicProvider({ baseUrl: upstream.baseUrl, apiKey: API_KEY, ...options }));
}

export const baseRequest: ChatRequest = {
  model: 'claude-sonnet-4-5',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello' },
  ],
  max_tokens: 64,
};

export function call(request: Partial<ChatRequest> = {}, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  return { request: { ...baseRequest, ...request }, requestId: 'req_abc-123', signal };
}

/** Chunks with the clock-dependent `created` pinned, after checking that every
 * chunk of the stream carries the same one. */
export function pinCreated(chunks: ChatCompletionChunk[], created = 1700000000): ChatCompletionChunk[] {
  const first = chunks[0]?.created;
  for (const chunk of chunks) assert.equal(chunk.created, first);
  return chunks.map((chunk) => ({ ...chunk, created }));
}

export const MESSAGE_START =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n';
export const PING = 'event: ping\ndata: {"type": "ping"}\n\n';
export const TEXT_BLOCK =
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n' +
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
export const MESSAGE_END =
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n' +
  'event: message_stop\ndata: {"type":"message_stop"}\n\n';
