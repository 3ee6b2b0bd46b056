// An upper bound of a request's prompt tokens: what a request is reserved
// with (src/limits/reservation.ts) and what service-auto compares with
// context windows and minPromptTokens (src/routing/alias-routing.ts). The
// reasoning behind each term is in docs/keys.md, "How a request's reservation
// is computed".
//
//   prompt = REQUEST_OVERHEAD
//          + Σ messages (MESSAGE_OVERHEAD + UTF-8 bytes of every string in the
//                        message but image URLs + imageTokens per image part)
//          + UTF-8 bytes of JSON(tools) + TOOLS_OVERHEAD    when tools are given
//          + UTF-8 bytes of JSON(tool_choice)                when given
//          + UTF-8 bytes of JSON(response_format)            when given (a json_schema's schema too)
//          + UTF-8 bytes of JSON(prediction)                 when given
//
// Text: a byte-level BPE tokenizer (OpenAI's, Llama 3's, Qwen's, ...) starts
// from one token per byte and only merges, so a text never has more tokens than
// UTF-8 bytes. (A characters/4 estimate undercounts CJK text about four times.)
// Images are bounded by the alias's imageTokens, so the bound keeps them apart.
// Every part type the request validator accepts is covered: text and refusal
// parts by their bytes, image_url parts by imageTokens. A new input kind
// (audio, files) needs its own bound here before the validator takes it.
//
// The validator counts the same terms while it builds the request (one walk)
// and carries the result on it; measurePrompt is for requests built any other way.
import { Buffer } from 'node:buffer';
import { isJsonObject } from './request-shape.ts';
import type { ChatRequest, PromptBound, ValidatedChatRequest } from './types.ts';

/** Tokens a provider adds once per request: the reply's priming and a chat template's default system header. */
export const REQUEST_OVERHEAD = 64;
/** Tokens a provider adds per message: its role and the framing around it. */
export const MESSAGE_OVERHEAD = 8;
/** Tokens of the instructions a provider puts before tool definitions (Anthropic's tool-use system prompt, at most 530). */
export const TOOLS_OVERHEAD = 1000;
/** What a text content part adds beside its text: the bytes of its type, "text". */
export const TEXT_PART_TOKENS = 4;
/** What a tool call adds beside its id, name and arguments: the bytes of its type, "function". */
export const TOOL_CALL_TOKENS = 8;

export type PromptSource = Pick<ValidatedChatRequest, 'messages' | 'tools' | 'tool_choice' | 'response_format' | 'prediction' | 'promptBound'>;

/** The bound for an alias that counts `imageTokens` per image part. */
export function promptTokensFor(bound: PromptBound, imageTokens: number): number {
  return bound.tokens + bound.imageParts * imageTokens;
}

/** The bound the validator carried, or measured now for a request built elsewhere. */
export function promptBoundOf(request: PromptSource): PromptBound {
  return request.promptBound ?? measurePrompt(request);
}

/** Sets the bound on a request just built; not enumerable (see ValidatedChatRequest). */
export function carryPromptBound(request: ChatRequest, bound: PromptBound): ValidatedChatRequest {
  return Object.defineProperty(request, 'promptBound', { value: bound, enumerable: false });
}

/** UTF-8 bytes of a string: a byte-level tokenizer makes at most one token of each. */
export function textTokens(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The terms after the messages: tools (with their overhead), tool_choice, response_format, prediction. */
export function requestTailTokens(request: Pick<ChatRequest, 'tools' | 'tool_choice' | 'response_format' | 'prediction'>): number {
  let tokens = 0;
  if (request.tools !== undefined && request.tools.length > 0) tokens += jsonBytes(request.tools) + TOOLS_OVERHEAD;
  if (request.tool_choice !== undefined) tokens += jsonBytes(request.tool_choice);
  if (request.response_format !== undefined) tokens += jsonBytes(request.response_format);
  if (request.prediction !== undefined) tokens += jsonBytes(request.prediction);
  return tokens;
}

export function measurePrompt(request: Pick<ChatRequest, 'messages' | 'tools' | 'tool_choice' | 'response_format' | 'prediction'>): PromptBound {
  let tokens = REQUEST_OVERHEAD;
  let imageParts = 0;
  for (const message of request.messages) {
    tokens += MESSAGE_OVERHEAD;
    for (const key of Object.keys(message)) {
      if (key === 'content' && Array.isArray(message.content)) {
        for (const part of message.content) {
          if (part.type === 'image_url') imageParts++;
          else tokens += stringBytes(part);
        }
      } else {
        tokens += stringBytes(message[key]);
      }
    }
  }
  return { tokens: tokens + requestTailTokens(request), imageParts };
}

/**
 * Every string of a value, wherever it sits (role, content, name,
 * tool_call_id, refusal, each tool call's id, type, name and arguments), so
 * a field the validator forwards later is counted without a change here.
 */
function stringBytes(value: unknown): number {
  if (typeof value === 'string') return textTokens(value);
  let bytes = 0;
  if (Array.isArray(value)) {
    for (const item of value) bytes += stringBytes(item);
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value)) bytes += stringBytes(value[key]);
  }
  return bytes;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
