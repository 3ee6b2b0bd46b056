// What a request is admitted with, before the upstream reports its usage: an
// upper bound of the tokens (and the money) it can cost, so that requests in
// flight can be charged up front and a burst cannot pass a budget by more than
// one request. Settlement replaces it with the upstream's usage. The reasoning
// behind each term is in docs/keys.md, "How a request's reservation is computed".
//
//   prompt = REQUEST_OVERHEAD
//          + Σ messages (MESSAGE_OVERHEAD + UTF-8 bytes of every string in the
//                        message but image URLs + imageTokens per image part)
//          + UTF-8 bytes of JSON(tools) + TOOLS_OVERHEAD    when tools are given
//          + UTF-8 bytes of JSON(tool_choice)                when given
//          + UTF-8 bytes of JSON(response_format)            when given
//
// Text: a byte-level BPE tokenizer (OpenAI's, Llama 3's, Qwen's, ...) starts
// from one token per byte and only merges, so a text never has more tokens than
// UTF-8 bytes. (A characters/4 estimate undercounts CJK text about four times.)
// Images are bounded by the alias's imageTokens. Every part type the request
// validator accepts is covered: text and refusal parts by their bytes,
// image_url parts by imageTokens (src/chat/request-messages.ts). A new input
// kind (audio, files) needs its own bound here before the validator takes it.
import { Buffer } from 'node:buffer';
import type { Price } from '../config/config.ts';
import type { ChatMessage, ChatRequest } from '../chat/types.ts';
import { costNanos } from './cost.ts';
import { MAX_CHARGE_NANOS, MAX_REQUEST_TOKENS } from './limiter.ts';

/** Tokens a provider adds once per request: the reply's priming and a chat template's default system header. */
export const REQUEST_OVERHEAD = 64;
/** Tokens a provider adds per message: its role and the framing around it. */
export const MESSAGE_OVERHEAD = 8;
/** Tokens of the instructions a provider puts before tool definitions (Anthropic's tool-use system prompt, at most 530). */
export const TOOLS_OVERHEAD = 1000;

export interface Reservation {
  /** Upper bound of the prompt tokens. */
  readonly promptTokens: number;
  /** The output maximum sent upstream. */
  readonly outputTokens: number;
  /** promptTokens + outputTokens. */
  readonly tokens: number;
  /** Upper bound of the cost in nanos: promptTokens at the highest input price and outputTokens at the highest output price among the plan's targets; 0 when unpriced. */
  readonly costNanos: number;
}

export type ReservedRequest = Pick<ChatRequest, 'messages' | 'tools' | 'response_format' | 'tool_choice'>;

/**
 * The reservation of a validated request. `maxOutputTokens` is the output
 * maximum the gateway sends upstream; `prices` those of the targets the
 * request may go to (null: unpriced), so the cost bound holds whichever
 * target answers.
 */
export function reserveRequest(request: ReservedRequest, maxOutputTokens: number, alias: { imageTokens: number }, prices: readonly (Price | null)[]): Reservation {
  if (!Number.isSafeInteger(maxOutputTokens) || maxOutputTokens < 0) {
    throw new RangeError(`maxOutputTokens must be a non-negative integer; got ${maxOutputTokens}.`);
  }
  // Bounded by what the limiter accounts (MAX_REQUEST_TOKENS, MAX_CHARGE_NANOS): only a
  // crafted request (tens of thousands of image parts at a large imageTokens) gets near,
  // and no model takes a prompt of that size, so the clamp never undercounts a real one.
  const promptTokens = Math.min(promptBound(request, alias.imageTokens), MAX_REQUEST_TOKENS - Math.min(maxOutputTokens, MAX_REQUEST_TOKENS));
  let input = 0;
  let output = 0;
  for (const price of prices) {
    if (price === null) continue;
    // cachedInput never exceeds input (src/config/price-config.ts): input is the most a prompt token costs.
    input = Math.max(input, price.input);
    output = Math.max(output, price.output);
  }
  const cost = Math.min(costNanos(promptTokens, input) + costNanos(maxOutputTokens, output), MAX_CHARGE_NANOS);
  return { promptTokens, outputTokens: maxOutputTokens, tokens: promptTokens + maxOutputTokens, costNanos: cost };
}

function promptBound(request: ReservedRequest, imageTokens: number): number {
  let tokens = REQUEST_OVERHEAD;
  for (const message of request.messages) tokens += MESSAGE_OVERHEAD + messageBound(message, imageTokens);
  if (request.tools !== undefined && request.tools.length > 0) tokens += jsonBytes(request.tools) + TOOLS_OVERHEAD;
  if (request.tool_choice !== undefined) tokens += jsonBytes(request.tool_choice);
  if (request.response_format !== undefined) tokens += jsonBytes(request.response_format);
  return tokens;
}

/**
 * Every string of the message, wherever it sits (role, content, name,
 * tool_call_id, refusal, each tool call's id, type, name and arguments), so
 * a field the validator forwards later is counted without a change here;
 * an image part counts imageTokens instead of its URL.
 */
function messageBound(message: ChatMessage, imageTokens: number): number {
  let tokens = 0;
  for (const key of Object.keys(message)) {
    const value = message[key];
    if (key === 'content' && Array.isArray(value)) {
      for (const part of value) tokens += part.type === 'image_url' ? imageTokens : stringBytes(part);
    } else {
      tokens += stringBytes(value);
    }
  }
  return tokens;
}

/** UTF-8 bytes of the strings in a value (keys aside); validated requests are a few levels deep. */
function stringBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value !== 'object' || value === null) return 0;
  let bytes = 0;
  if (Array.isArray(value)) {
    for (const item of value) bytes += stringBytes(item);
  } else {
    for (const key of Object.keys(value)) bytes += stringBytes((value as Record<string, unknown>)[key]);
  }
  return bytes;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
