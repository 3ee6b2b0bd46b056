// Anthropic Messages API request shapes (POST /v1/messages and
// POST /v1/messages/count_tokens), as the validator
// (./message-request-validator.ts) returns them: the client's own body,
// checked, never rebuilt (an Anthropic upstream receives it as it came).
//
// Sources, read 2026-11-28:
//   https://platform.claude.com/docs/en/api/messages (Create a Message)
//   https://platform.claude.com/docs/en/api/messages-count-tokens
//   https://platform.claude.com/docs/en/api/versioning and
//   https://platform.claude.com/docs/en/api/migration-2026-10-21
//   @anthropic-ai/sdk 1.14.0: src/resources/messages/messages.ts
//   (MessageCreateParamsBase, MessageCountTokensParams, ContentBlockParam,
//   ToolUnion) and src/resources/beta/messages/messages.ts (the beta
//   request, which Claude Code sends: /v1/messages?beta=true).
//
// Documented top-level fields of a create request (count_tokens: the same
// without max_tokens, stream, stop_sequences, metadata, service_tier,
// container, inference_geo, diagnostics, temperature, top_p, top_k):
//   model, messages, max_tokens (required); system, metadata {user_id},
//   stop_sequences, stream, tools, tool_choice, thinking, service_tier,
//   output_config {effort, format}, cache_control (top-level automatic
//   breakpoint), container, inference_geo, speed, diagnostics
//   {previous_message_id}; beta: context_management, mcp_servers,
//   compaction, output_format (deprecated for output_config.format), thread,
//   fallbacks, billing_policy, fallback_credit_token.
//   Of these, fallbacks, fallback_credit_token, billing_policy, speed and
//   inference_geo change price or routing at Anthropic: the validator takes
//   them only as extra fields an operator allows (messagesPassthrough).
//   temperature, top_p, top_k: documented for anthropic-version 2023-06-01
//   (what Claude Code sends); version 2026-10-21 removed them (a 400 even at
//   their defaults), and the SDK 1.x no longer has them.
// Nested shapes the gateway does not translate (server-tool result content,
// context_management edits, mcp_servers, container skills, beta-only
// fields) are checked for their kind only: an Anthropic upstream checks
// them in full, and an OpenAI-compatible upstream never receives them.

/** `{"type":"ephemeral","ttl":"5m"|"1h"}`: a prompt-cache breakpoint. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
  /** Citation locations, as Claude produced them (each an object with its own `type`). */
  citations?: Array<Record<string, unknown>> | null;
}

export type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

export type ImageSource =
  | { type: 'base64'; media_type: ImageMediaType; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface ImageBlockParam {
  type: 'image';
  source: ImageSource;
  cache_control?: CacheControl | null;
  transformations?: { oversized_image?: 'downsize' | 'error' } | null;
}

export type DocumentSource =
  | { type: 'base64'; media_type: 'application/pdf'; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'content'; content: string | Array<TextBlockParam | ImageBlockParam> }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface DocumentBlockParam {
  type: 'document';
  source: DocumentSource;
  cache_control?: CacheControl | null;
  citations?: { enabled?: boolean } | null;
  context?: string | null;
  title?: string | null;
}

export interface SearchResultBlockParam {
  type: 'search_result';
  source: string;
  title: string;
  content: TextBlockParam[];
  cache_control?: CacheControl | null;
  citations?: { enabled?: boolean };
}

export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  /** A JSON object: what the model passed to the tool. */
  input: Record<string, unknown>;
  cache_control?: CacheControl | null;
  caller?: Record<string, unknown>;
  toolset_name?: string | null;
}

export interface ToolReferenceBlockParam {
  type: 'tool_reference';
  tool_name: string;
  cache_control?: CacheControl | null;
}

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam | SearchResultBlockParam | DocumentBlockParam | ToolReferenceBlockParam | Record<string, unknown>>;
  is_error?: boolean;
  cache_control?: CacheControl | null;
  toolset_name?: string | null;
}

/**
 * A block that only an Anthropic upstream understands: server_tool_use, the
 * server tools' *_tool_result blocks, container_upload, and the beta blocks
 * (mcp_tool_use, mcp_tool_result, compaction, ...). Checked for its known
 * fields and their kinds; passed through as it came.
 */
export interface ServerBlockParam {
  type: string;
  [field: string]: unknown;
}

export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | DocumentBlockParam
  | SearchResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ServerBlockParam;

export interface UserOrAssistantMessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlockParam[];
}

/**
 * A `system` message (beta BetaSystemMessageParam), accepted after the first
 * message as Claude Code sends it (its environment block): text (or tool
 * additions and removals), `clear_at` ("next_user_message": shown only until
 * a later user message exists), and a per-turn effort.
 */
export interface SystemMessageParam {
  role: 'system';
  content?: string | Array<TextBlockParam | ServerBlockParam>;
  clear_at?: 'next_user_message' | 'never' | null;
  output_config?: { effort?: Effort | null } | null;
}

export type MessageParam = UserOrAssistantMessageParam | SystemMessageParam;

/** A tool the client runs (`type` absent, null or "custom"). */
export interface CustomTool {
  type?: 'custom' | null;
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl | null;
  strict?: boolean;
  /** Left out of the prompt until tool search finds it (server-side tool search). */
  defer_loading?: boolean;
  input_examples?: Array<Record<string, unknown>>;
  eager_input_streaming?: boolean | null;
  allowed_callers?: string[];
}

/** A tool Anthropic runs or defines (`type` such as web_search_20260318, bash_20250124, mcp_toolset). */
export interface ServerTool {
  type: string;
  name?: string;
  [field: string]: unknown;
}

export type ToolParam = CustomTool | ServerTool;

export type ToolChoiceParam =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type ThinkingDisplay = 'summarized' | 'omitted';

export type ThinkingConfigParam =
  | { type: 'enabled'; budget_tokens: number; display?: ThinkingDisplay | null }
  | { type: 'adaptive'; display?: ThinkingDisplay | null }
  | { type: 'disabled' }
  | { type: 'between_tools' };

export type Effort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface OutputConfig {
  effort?: Effort | null;
  format?: { type: 'json_schema'; schema: Record<string, unknown> } | null;
}

/** The fields both endpoints take. */
export interface MessagesRequestBase {
  model: string;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: ToolParam[];
  tool_choice?: ToolChoiceParam;
  thinking?: ThinkingConfigParam;
  output_config?: OutputConfig;
  cache_control?: CacheControl | null;
  context_management?: Record<string, unknown> | null;
  mcp_servers?: Array<Record<string, unknown>>;
  /** Fields outside the documented request that the options allowed, unchecked. */
  [extra: string]: unknown;
}

/** POST /v1/messages. */
export interface MessagesRequest extends MessagesRequestBase {
  max_tokens: number;
  stream?: boolean;
  stop_sequences?: string[];
  metadata?: { user_id?: string | null };
  service_tier?: 'auto' | 'standard_only';
  temperature?: number;
  top_p?: number;
  top_k?: number;
  container?: string | Record<string, unknown> | null;
}

/** POST /v1/messages/count_tokens. */
export type CountTokensRequest = MessagesRequestBase;
