// The Responses API answer shapes, as far as the gateway writes them when it
// answers a Responses client from a chat completion: the `response` object and
// the stream events. Field sets, required keys and nullability follow OpenAI's
// published OpenAPI document as its SDK is generated from it:
//   openai-node 7.57.0 (test/package.json) resources/responses/responses.d.ts:
//   Response, ResponseStatus, ResponseError, ResponseUsage,
//   ResponseOutputMessage, ResponseOutputText, ResponseOutputRefusal,
//   ResponseFunctionToolCall and the *Event interfaces of ResponseStreamEvent;
//   the spec it is generated from is named in openai-node's .stats.yml
//   (openapi_spec_url, storage.googleapis.com/stainless-sdk-openapi-specs/openai/...);
//   the event list and its order: https://developers.openai.com/api/docs/guides/streaming-responses
//   and https://developers.openai.com/api/reference/resources/responses/streaming-events.
// What the official stream helper accepts (event order, item identities,
// indexes) is in openai-node's internal/responses/response-accumulator.js and
// lib/responses/ResponseStream.js; test/support/responses-stream-checker.ts
// holds the gateway's streams to the same rules.
//
// Only what a chat completion can carry is modelled: message items with
// output_text and refusal parts, and function_call items. Reasoning, hosted
// tool calls and annotations never come from such an upstream.

/** A JSON object as the client sent it, echoed unchanged. */
export type JsonObject = Record<string, unknown>;

/** ResponseStatus values the gateway produces (also: cancelled, queued, which it never does). */
export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Response.IncompleteDetails.reason values a chat completion can give. */
export type IncompleteReason = 'max_output_tokens' | 'content_filter';

export interface ResponseOutputText {
  type: 'output_text';
  /** Always empty: a chat completion carries no citations. */
  annotations: [];
  /** Always empty: OpenAI sends the key even when logprobs were not asked for. */
  logprobs: [];
  text: string;
}

export interface ResponseOutputRefusal {
  type: 'refusal';
  refusal: string;
}

export type ResponseContentPart = ResponseOutputText | ResponseOutputRefusal;

/** An item's status: in_progress while streamed, incomplete when the output limit or a filter cut it. */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponseOutputMessage {
  id: string;
  type: 'message';
  status: ItemStatus;
  content: ResponseContentPart[];
  role: 'assistant';
}

export interface ResponseFunctionToolCall {
  /** The item's own id (`fc_...`); `call_id` is what a function_call_output names. */
  id: string;
  type: 'function_call';
  status: ItemStatus;
  /** A JSON object, as a string. */
  arguments: string;
  call_id: string;
  name: string;
  /** The namespace tool the function was offered in, when it was. */
  namespace?: string;
}

export type ResponseOutputItem = ResponseOutputMessage | ResponseFunctionToolCall;

/**
 * Token counts. Unlike Anthropic's, OpenAI's input_tokens includes the cached
 * ones; total_tokens is input plus output.
 */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Response.error: its `code` is an enum (server_error, rate_limit_exceeded, ...). */
export interface ResponseError {
  code: 'server_error' | 'rate_limit_exceeded';
  message: string;
}

/**
 * What the response echoes of its request. Every field is the client's own
 * value, or absent (then the response says the documented default, or null
 * where the value is the upstream's to choose, like temperature).
 */
export interface ResponseEcho {
  instructions?: string | JsonObject[] | null;
  tools?: JsonObject[];
  tool_choice?: string | JsonObject;
  parallel_tool_calls?: boolean;
  temperature?: number | null;
  top_p?: number | null;
  max_output_tokens?: number | null;
  text?: JsonObject;
  reasoning?: JsonObject | null;
  metadata?: Record<string, string> | null;
  prompt_cache_key?: string | null;
  safety_identifier?: string | null;
  truncation?: 'auto' | 'disabled' | null;
  user?: string;
}

/** The `response` object: the body of a 200 to POST /v1/responses, and what the lifecycle events carry. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  /** Only a completed response has one; null otherwise. */
  completed_at: number | null;
  background: false;
  error: ResponseError | null;
  incomplete_details: { reason: IncompleteReason } | null;
  /** Required (nullable) in the schema; the gateway runs no access programme. */
  access_programs: null;
  instructions: string | JsonObject[] | null;
  max_output_tokens: number | null;
  max_tool_calls: null;
  /** The alias the client asked for, never the upstream's model name. */
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  /** Always null: the gateway continues no stored response. */
  previous_response_id: null;
  prompt_cache_key: string | null;
  reasoning: JsonObject | null;
  safety_identifier: string | null;
  /** Always false: the gateway stores nothing (OpenAI's bodies carry the flag beside the schema's fields). */
  store: false;
  temperature: number | null;
  text: JsonObject;
  tool_choice: string | JsonObject;
  tools: JsonObject[];
  top_p: number | null;
  truncation: 'auto' | 'disabled' | null;
  /** Absent until the upstream reported usage (the schema makes it optional). */
  usage?: ResponseUsage;
  user?: string;
  metadata: Record<string, string>;
}

/** Every event type the gateway writes; the SSE `event:` field equals the data's `type`. */
export type ResponseStreamEventType =
  | 'response.created'
  | 'response.in_progress'
  | 'response.output_item.added'
  | 'response.content_part.added'
  | 'response.output_text.delta'
  | 'response.output_text.done'
  | 'response.refusal.delta'
  | 'response.refusal.done'
  | 'response.content_part.done'
  | 'response.function_call_arguments.delta'
  | 'response.function_call_arguments.done'
  | 'response.output_item.done'
  | 'response.completed'
  | 'response.incomplete'
  | 'response.failed'
  | 'error';

/** ResponseErrorEvent: flat, as the published schema has it (code and param nullable). */
export interface ResponseErrorEvent {
  type: 'error';
  sequence_number: number;
  code: string | null;
  message: string;
  param: string | null;
}
