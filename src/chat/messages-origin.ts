// A chat request that came in through Anthropic's Messages door
// (POST /v1/messages) carries its origin beside the gateway's own shape:
// routing, limits and the reservation read the ChatRequest as for any other
// door, an OpenAI-compatible upstream receives the translation, and an
// Anthropic upstream receives the client's own body (validated, with the
// upstream's model and the clamped max_tokens) so that thinking signatures,
// cache_control, citations and server tools survive.
//
// The origin sits under a symbol key: the spreads that build each target's
// upstream request copy it, JSON.stringify never writes it, and the field
// walks (Object.keys) never see it.
//
// The answer goes back the same way: an Anthropic upstream's own answer rides
// on the normalised completion (RAW_ANSWER) and on each streamed event
// (RAW_EVENT), beside the normalised shapes the gateway counts usage from.
import type { InvalidRequestError } from '../errors/api-error.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from './types.ts';

export const MESSAGES_ORIGIN: unique symbol = Symbol('portcullis.messagesOrigin');
export const RAW_ANSWER: unique symbol = Symbol('portcullis.rawAnswer');
export const RAW_EVENT: unique symbol = Symbol('portcullis.rawEvent');

export interface MessagesOrigin {
  /** The client's validated Messages body as parsed; its `model` is the alias the client named. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Why an upstream that speaks OpenAI's chat completions cannot take it (a
   * thinking block with a signature, a server tool, a document): the 400 naming
   * it; null when the translation says everything. */
  readonly untranslatable: InvalidRequestError | null;
  /** The client's `anthropic-version` header, if it sent one. */
  readonly version: string | undefined;
  /** The client's `anthropic-beta` values, split on commas and trimmed, in order. */
  readonly betas: readonly string[];
  /** Top-level fields outside the documented request that the body carries:
   * only an Anthropic provider that allows them by name may receive them. */
  readonly extraFields: readonly string[];
}

/** One event of an Anthropic upstream's stream as it came, with what it says in the gateway's normalised chunks. */
export interface RawEvent {
  readonly event: string;
  /** The event's data, exactly as received. */
  readonly data: string;
  /** The normalised chunks the event translates to (usage, text, tool calls), for counting. */
  readonly translated: readonly ChatCompletionChunk[];
}

export type MessagesChatRequest = ChatRequest & { [MESSAGES_ORIGIN]?: MessagesOrigin };
export type RawAnswerCompletion = ChatCompletion & { [RAW_ANSWER]?: Record<string, unknown> };
export type RawEventChunk = ChatCompletionChunk & { [RAW_EVENT]?: RawEvent };

/** The Messages origin of `request`, or undefined for a chat completions request. */
export function messagesOrigin(request: ChatRequest): MessagesOrigin | undefined {
  return (request as MessagesChatRequest)[MESSAGES_ORIGIN];
}

/** Marks `request` as having come through the Messages door. */
export function setMessagesOrigin(request: ChatRequest, origin: MessagesOrigin): void {
  (request as MessagesChatRequest)[MESSAGES_ORIGIN] = origin;
}

/** The upstream's own Messages answer riding on a normalised completion, if any. */
export function rawAnswer(completion: ChatCompletion): Record<string, unknown> | undefined {
  return (completion as RawAnswerCompletion)[RAW_ANSWER];
}

export function setRawAnswer(completion: ChatCompletion, raw: Record<string, unknown>): void {
  (completion as RawAnswerCompletion)[RAW_ANSWER] = raw;
}

/** The raw upstream event a chunk carries (a passthrough stream's carrier chunk), if any. */
export function rawEvent(chunk: ChatCompletionChunk): RawEvent | undefined {
  return (chunk as RawEventChunk)[RAW_EVENT];
}

/** An Anthropic upstream's own `error` event riding on the error it ends the stream with, so a Messages client reads the upstream's words and type (overloaded_error, ...). */
export function setRawErrorEvent(error: Error, event: RawEvent): void {
  (error as Error & { [RAW_EVENT]?: RawEvent })[RAW_EVENT] = event;
}

export function rawErrorEvent(error: unknown): RawEvent | undefined {
  return error instanceof Error ? (error as Error & { [RAW_EVENT]?: RawEvent })[RAW_EVENT] : undefined;
}

/** A carrier chunk: no choices of its own, the event and its translation inside. */
export function rawEventChunk(event: RawEvent): ChatCompletionChunk {
  const chunk: RawEventChunk = { id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [] };
  chunk[RAW_EVENT] = event;
  return chunk;
}
