// The built-in demo provider: a ChatProvider that needs no upstream. It is a
// demo, NOT a language model; what it answers is decided by the pure rules of
// ./demo-reply.ts. This file only shapes those replies into OpenAI's
// completion and chunk formats and paces the stream.
//
// Stream sequence for a text reply (all chunks share id and created):
//   {delta:{role:"assistant",content:""}}, one {delta:{content:piece}} per word,
//   {delta:{},finish_reason}, then {choices:[],usage} (the relay decides whether
//   the client sees it).
// For a tool call the first delta is {role:"assistant",content:null,tool_calls:[
//   {index:0,id,type:"function",function:{name,arguments:""}}]} as OpenAI sends it
// (an empty-string content would open an empty text part in the Vercel AI SDK),
// then {tool_calls:[{index:0,function:{arguments:piece}}]} per argument piece,
// then the finish and usage chunks.

import { generateCompletionId, generateToolCallId } from '../chat/completion-response.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../chat/types.ts';
import { DemoReplyKind, planDemoReply, type DemoReply } from './demo-reply.ts';
import type { ChatProvider, UpstreamCall } from '../upstream/provider.ts';
import { DEFAULT_DEMO_DELAY_MS } from '../config/provider-defaults.ts';

interface DemoProviderOptions {
  /** Pause between streamed chunks, in milliseconds (default 0: no timers). */
  delayMs?: number;
}

export function createDemoProvider(options: DemoProviderOptions = {}): ChatProvider {
  const delayMs = options.delayMs ?? DEFAULT_DEMO_DELAY_MS;
  return {
    async complete(call) {
      call.signal.throwIfAborted();
      return demoCompletion(planDemoReply(call.request), call.request.model);
    },
    stream(call) {
      return streamDemo(call, delayMs);
    },
  };
}

/** The non-stream completion for a planned reply. */
function demoCompletion(reply: DemoReply, model: string): ChatCompletion {
  const text = reply.pieces.join('');
  const isToolCall = reply.kind === DemoReplyKind.ToolCall;
  return {
    id: generateCompletionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: isToolCall ? null : text,
          refusal: null,
          tool_calls: isToolCall
            ? [{ id: generateToolCallId(), type: 'function', function: { name: reply.toolName, arguments: text } }]
            : [],
        },
        logprobs: null,
        finish_reason: reply.finishReason,
      },
    ],
    usage: reply.usage,
  };
}

/** The chunk sequence for a planned reply, as described in the file header. */
function demoChunks(reply: DemoReply, model: string): ChatCompletionChunk[] {
  const id = generateCompletionId();
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: ChatCompletionChunk['choices']): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
  });
  const chunks: ChatCompletionChunk[] = [];
  if (reply.kind === DemoReplyKind.ToolCall) {
    const toolCall = { index: 0, id: generateToolCallId(), type: 'function' as const, function: { name: reply.toolName, arguments: '' } };
    chunks.push(chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [toolCall] }, finish_reason: null }]));
    for (const piece of reply.pieces) {
      chunks.push(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }]));
    }
  } else {
    chunks.push(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    for (const piece of reply.pieces) chunks.push(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  }
  chunks.push(chunk([{ index: 0, delta: {}, finish_reason: reply.finishReason }]));
  chunks.push({ ...chunk([]), usage: reply.usage });
  return chunks;
}

async function* streamDemo(call: UpstreamCall, delayMs: number): AsyncGenerator<ChatCompletionChunk, void, undefined> {
  call.signal.throwIfAborted();
  const chunks = demoChunks(planDemoReply(call.request), call.request.model);
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && delayMs > 0) await pause(delayMs, call.signal);
    call.signal.throwIfAborted();
    yield chunks[i] as ChatCompletionChunk;
  }
}

/** Resolves after `ms`, or rejects with the abort reason as soon as `signal`
 * aborts; the timer and the listener are removed either way. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
