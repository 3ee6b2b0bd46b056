// The chat-completion shapes as the gateway sees them, after validation.
// Field sets follow ../shared/spec/chat-completion-service.md, with the gaps
// filled the way OpenAI's API defines them.
import type { CompiledSchema } from '../schema/compile.ts';

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  /** string, parts, or null (assistant with tool_calls only). */
  content?: string | ContentPart[] | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  refusal?: string | null;
  /** Other assistant fields a client may echo back from a response; never forwarded. */
  [extra: string]: unknown;
}

export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** response_format json_schema, as OpenAI defines it. */
export interface JsonSchemaFormat {
  type: 'json_schema';
  json_schema: {
    /** Letters, digits, underscores and hyphens, at most 64. */
    name: string;
    description?: string;
    schema?: Record<string, unknown>;
    /** true: the schema is inside OpenAI's strict subset (src/schema/) and the answer is checked against it. */
    strict?: boolean;
  };
}

export type ResponseFormat = { type: 'text' | 'json_object' } | JsonSchemaFormat;

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
export type ServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority';
export type Verbosity = 'low' | 'medium' | 'high';

/** Predicted output: text the answer is expected to repeat. */
export interface Prediction {
  type: 'content';
  content: string | TextPart[];
}

/**
 * OpenAI's request fields beyond the contract's table, each present only when
 * the operator's field policy accepts it (src/chat/request-fields.ts) and the
 * client sent it; validated with OpenAI's documented types and bounds.
 */
export interface OptionalRequestFields {
  seed?: number;
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  /** At most 16 pairs; keys up to 64 characters, values up to 512. */
  metadata?: Record<string, string>;
  parallel_tool_calls?: boolean;
  logprobs?: boolean;
  /** 0 to 20; only with logprobs true. */
  top_logprobs?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  /** Token id (a decimal string) to a bias from -100 to 100. */
  logit_bias?: Record<string, number>;
  reasoning_effort?: ReasoningEffort;
  service_tier?: ServiceTier;
  prediction?: Prediction;
  verbosity?: Verbosity;
  store?: boolean;
}

export interface ChatRequest extends OptionalRequestFields {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  response_format?: ResponseFormat;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  stream?: boolean;
  stream_options?: { include_usage: boolean };
  n?: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  /** Of completion_tokens, those the model spent reasoning; only where an
   * upstream's own answer rides beside (a Responses upstream's), absent otherwise. */
  completion_tokens_details?: { reasoning_tokens: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    /** `refusal` is always present (null when the model did not refuse): OpenAI's schema marks it required. */
    message: { role: 'assistant'; content: string | null; refusal: string | null; tool_calls: ToolCall[] };
    /** The upstream's log probabilities as it sent them, or null: required (nullable) in OpenAI's schema. */
    logprobs: Record<string, unknown> | null;
    finish_reason: FinishReason | null;
  }>;
  usage?: Usage;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ToolCallDelta[]; refusal?: string | null };
    finish_reason: FinishReason | null;
  }>;
  usage?: Usage | null;
}

/**
 * An upper bound of a request's prompt tokens, apart from its images (whose
 * cost depends on the alias: `imageTokens` each). See request-prompt-bound.ts.
 */
export interface PromptBound {
  /** Overheads plus the UTF-8 bytes of the prompt's text. */
  readonly tokens: number;
  /** image_url content parts, each counted at the alias's imageTokens. */
  readonly imageParts: number;
}

/**
 * A request as the validator returns it: its prompt bound rides along as a
 * non-enumerable property, so it is never serialised, compared or copied
 * (a spread copy, which may then be changed, measures its own).
 */
export interface ValidatedChatRequest extends ChatRequest {
  readonly promptBound?: PromptBound;
  /** For response_format json_schema with strict true: the schema compiled
   * (src/schema/compile.ts), what the answer is checked against. Non-enumerable, like promptBound. */
  readonly answerSchema?: CompiledSchema;
}
