// What the OpenAI-compatible adapter's tests share: the adapter against the
// file's fake upstream, the call it makes, and the answers the fake gives.
import type { ChatRequest } from '../../src/chat/types.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import type { UpstreamCall } from '../../src/upstream/provider.ts';
import type { FileUpstream } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

export { sendJson as json, startEventStream } from '../../src/testing/fake-upstream.ts';

export const API_KEY = 'sk-upstream-secret-123';

export function providerFor(upstream: FileUpstream, options: Partial<OpenAICompatibleOptions> = {}): DrivenProvider {
  return drive(createOpenAICompatibleProvider({ baseUrl: upstream.baseUrl, apiKey: API_KEY, ...options }));
}

export const baseRequest: ChatRequest = {
  model: 'upstream-model',
  messages: [{ role: 'user', content: 'Hello' }],
  max_tokens: 64,
};

export function call(request: Partial<ChatRequest> = {}, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  return { request: { ...baseRequest, ...request }, requestId: 'req_abc-123', signal };
}

export function completionBody(): Record<string, unknown> {
  return {
    id: 'chatcmpl-up1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model-2024',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  };
}

export function chunkBodies(): Array<Record<string, unknown>> {
  const base = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1700000001, model: 'upstream-model-2024' };
  return [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'héllo ' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'wörld 😀\nnext line' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
  ];
}

/** An upstream event stream: mixed line ends, a keep-alive comment, [DONE]. */
export function streamText(): string {
  const events = chunkBodies().map((chunk, i) => (i % 2 === 0 ? `data: ${JSON.stringify(chunk)}\n\n` : `data: ${JSON.stringify(chunk)}\r\n\r\n`));
  return `: keep-alive\n\n${events.join('')}data: [DONE]\n\n`;
}

/** The first chunk as one event. */
export const FIRST_CHUNK = (): string => `data: ${JSON.stringify(chunkBodies()[0])}\n\n`;
