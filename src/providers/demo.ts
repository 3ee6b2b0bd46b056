// The built-in demo provider: a local provider (../upstream/provider.ts) that needs no upstream. It is a
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
// For a refusal the first delta is {role:"assistant",content:null,refusal:""},
// then {refusal:piece} per word, then the finish and usage chunks.

import { generateCompletionId, generateToolCallId } from '../chat/completion-response.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../chat/types.ts';
import { DemoReplyKind, planDemoReply, type DemoReply } from './demo-reply.ts';
import { LocalStream } from '../upstream/local-stream.ts';
import { ProviderKind, type LocalProvider, type UpstreamCall } from '../upstream/provider.ts';
import { DEFAULT_DEMO_DELAY_MS } from '../config/provider-defaults.ts';
import { untranslatableRefusal } from './untranslatable-refusal.ts';
import { translationNotes } from '../chat/door-origin.ts';
import { sleepOn, systemScheduler, type Scheduler } from '../time/scheduler.ts';
import type { LocalEmbedder } from '../upstream/embeddings-exchange.ts';
import { DEMO_EMBEDDING_WIDTH, DEMO_MAX_EMBEDDING_WIDTH, demoEmbedding, demoPromptTokens } from './demo-embeddings.ts';
import type { EmbeddingInput } from '../embeddings/embeddings-types.ts';

interface DemoProviderOptions {
  /** Pause between streamed chunks, in milliseconds (default 0: no timers). */
  delayMs?: number;
  /** What the pauses run on; default the system's. */
  scheduler?: Scheduler;
}

export function createDemoProvider(options: DemoProviderOptions = {}): LocalProvider {
  const delayMs = options.delayMs ?? DEFAULT_DEMO_DELAY_MS;
  const scheduler = options.scheduler ?? systemScheduler;
  return {
    kind: ProviderKind.Local,
    complete(call) {
      if (call.signal.aborted) return Promise.reject(call.signal.reason);
      return Promise.resolve(demoCompletion(planDemoReply(call.request), call.request.model));
    },
    open(call) {
      return new DemoStream(call, delayMs, scheduler);
    },
    refusal: untranslatableRefusal,
    refusesOnlyDoorRequests: true,
    requestNotes: translationNotes,
  };
}

/** The demo's embeddings: the same input, the same unit vector (./demo-embeddings.ts). */
export function createDemoEmbedder(): LocalEmbedder {
  return {
    kind: ProviderKind.Local,
    maxDimensions: DEMO_MAX_EMBEDDING_WIDTH,
    async embed(inputs, dimensions, signal) {
      const width = dimensions ?? DEMO_EMBEDDING_WIDTH;
      let promptTokens = 0;
      const vectors: Float32Array[] = [];
      for (let i = 0; i < inputs.length; i++) {
        // A slice at a time, so a large batch does not hold the event loop; a client gone stops it.
        if (i % DEMO_EMBEDDING_SLICE === 0) {
          if (i > 0) await new Promise((resolve) => setImmediate(resolve));
          if (signal.aborted) throw signal.reason;
        }
        const input = inputs[i] as EmbeddingInput;
        promptTokens += demoPromptTokens(input);
        vectors.push(demoEmbedding(input, width));
      }
      return { vectors, promptTokens };
    },
  };
}

/** Vectors the demo makes between two turns of the event loop. */
const DEMO_EMBEDDING_SLICE = 64;

/** The non-stream completion for a planned reply. */
function demoCompletion(reply: DemoReply, model: string): ChatCompletion {
  const text = reply.pieces.join('');
  const isToolCall = reply.kind === DemoReplyKind.ToolCall;
  const isRefusal = reply.kind === DemoReplyKind.Refusal;
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
          content: isToolCall || isRefusal ? null : text,
          refusal: isRefusal ? text : null,
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
  } else if (reply.kind === DemoReplyKind.Refusal) {
    chunks.push(chunk([{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }]));
    for (const piece of reply.pieces) chunks.push(chunk([{ index: 0, delta: { refusal: piece }, finish_reason: null }]));
  } else {
    chunks.push(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    for (const piece of reply.pieces) chunks.push(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  }
  chunks.push(chunk([{ index: 0, delta: {}, finish_reason: reply.finishReason }]));
  chunks.push({ ...chunk([]), usage: reply.usage });
  return chunks;
}

/** The planned chunks one at a time, `delayMs` apart on the scheduler; an
 * abort of the caller's signal ends a pause at once, with the abort's reason. */
class DemoStream extends LocalStream {
  readonly #call: UpstreamCall;
  readonly #delayMs: number;
  readonly #scheduler: Scheduler;
  #chunks: ChatCompletionChunk[] | undefined;
  #next = 0;
  /** The batch handed out, one chunk at a time. */
  readonly #batch: ChatCompletionChunk[] = [];
  #stopped = false;

  constructor(call: UpstreamCall, delayMs: number, scheduler: Scheduler) {
    super();
    this.#call = call;
    this.#delayMs = delayMs;
    this.#scheduler = scheduler;
  }

  protected async produce(): Promise<readonly ChatCompletionChunk[] | null> {
    const { signal, request } = this.#call;
    if (signal.aborted) throw signal.reason;
    const chunks = (this.#chunks ??= demoChunks(planDemoReply(request), request.model));
    if (this.#next >= chunks.length || this.#stopped) return null;
    if (this.#next > 0 && this.#delayMs > 0) await sleepOn(this.#scheduler, this.#delayMs, signal, abortReason);
    if (signal.aborted) throw signal.reason;
    const batch = this.#batch;
    batch.length = 0;
    batch.push(chunks[this.#next++] as ChatCompletionChunk);
    return batch;
  }

  protected stop(): void {
    this.#stopped = true;
  }
}

/** What the stream throws when the caller aborts: the reason itself, as fetch does. */
function abortReason(reason: unknown): Error {
  return reason as Error;
}
