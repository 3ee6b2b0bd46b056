// Anthropic Messages API answer shapes, as far as the gateway writes them when
// it answers a Messages client from an OpenAI-compatible upstream. Field sets
// and order follow Anthropic's reference and its TypeScript SDK:
//   https://platform.claude.com/docs/en/api/messages (the Message object)
//   https://platform.claude.com/docs/en/build-with-claude/streaming (events)
//   anthropic-sdk-typescript src/resources/messages/messages.ts (Message,
//   Usage, MessageDeltaUsage, StopReason, Raw*Event) and
//   src/resources/shared.ts (ErrorType).
// Only what a chat completion can carry is modelled: text and tool_use blocks;
// thinking, citations and server-tool blocks never come from such an upstream.
// The SDK marks `container`, `stop_details`, `citations`, `caller` and the
// newer usage fields nullable; Anthropic's own documented examples leave them
// out, and so does the gateway.

/** Anthropic's StopReason values the gateway can produce (see ./message-response.ts
 * for the mapping). Anthropic also has pause_turn and model_context_window_exceeded,
 * which no chat completion expresses. */
export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** Always a JSON object: what the model passes to the tool. */
  input: Record<string, unknown>;
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock;

/**
 * Token counts. Anthropic's `input_tokens` excludes the tokens read from or
 * written to the prompt cache: the request's whole input is the sum of the
 * three input counts.
 */
export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** A whole (non-streamed) answer: the body of a 200 to POST /v1/messages. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason;
  /** Which of the request's stop_sequences ended the answer; null otherwise. */
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** Anthropic's error types (shared.ts ErrorType, plus request_too_large,
 * which its API reference lists for 413). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';
