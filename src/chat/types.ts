// The chat-completion shapes as the gateway sees them, after validation.
// Field sets follow ../shared/spec/chat-completion-service.md, with the gaps
// filled the way OpenAI's API defines them.

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

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  response_format?: { type: 'text' | 'json_object' };
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
}
