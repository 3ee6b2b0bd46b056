// OpenAI Responses API request shapes (POST /v1/responses), as the validator
// (./response-request-validator.ts) returns them: the client's own body,
// checked, never rebuilt (an upstream that speaks Responses receives it as it
// came: reasoning items and their encrypted_content stay intact).
//
// Sources, read 2026-11-28:
//   OpenAI's OpenAPI document, schema CreateResponse (allOf
//   CreateModelResponseProperties, ResponseProperties and the create-only
//   fields): https://app.stainless.com/api/spec/documented/openai/openapi.documented.yml
//   (mirrored at github.com/openai/openai-openapi, openapi.yaml); its field
//   set was read through the SDK generated from it:
//   openai (npm) 7.57.0: resources/responses/responses.d.ts
//   (ResponseCreateParamsBase, ResponseInputItem, Tool, NamespaceTool,
//   ResponseTextConfig, the ToolChoice* types) and resources/shared.d.ts
//   (Reasoning, Metadata, ResponseFormatJSONSchema)
//   https://developers.openai.com/api/reference/resources/responses (the API
//   reference the SDK's comments link to)
//   Codex CLI 0.169.0 and @openai/agents 0.20 as captured against a local
//   server (test/fixtures/responses/).
//
// Documented top-level fields of a create request:
//   model, input, instructions, tools, tool_choice, parallel_tool_calls,
//   max_output_tokens, max_tool_calls, temperature, top_p, top_logprobs,
//   text {format, verbosity}, reasoning {effort, summary, generate_summary,
//   context, mode}, include, store, stream, stream_options
//   {include_obfuscation}, previous_response_id, conversation, metadata, user,
//   safety_identifier, prompt_cache_key, prompt_cache_retention,
//   prompt_cache_options {mode, prewarm, ttl}, prompt, background,
//   service_tier, truncation (deprecated), context_management, moderation,
//   image, access_programs. previous_response_id and conversation are
//   refused while the gateway keeps no responses (see the validator), so
//   ResponsesRequest below does not carry them.
// Not in the SDK, accepted because OpenAI's API takes it from Codex on every
// request: client_metadata (string pairs describing the client).
//
// Nested shapes the gateway never translates (the hosted tools' settings and
// call items, prompt templates, moderation, context management) are checked
// for their fields and the kind of each: an upstream speaking Responses checks
// them in full, and one speaking only chat completions never receives them.

/** `{"mode":"explicit","ttl":"30m"|"12h"}` on a content part: a prompt-cache breakpoint. */
export interface PromptCacheBreakpoint {
  mode: 'explicit';
  ttl?: '30m' | '12h';
}

export interface InputText {
  type: 'input_text';
  text: string;
  prompt_cache_breakpoint?: PromptCacheBreakpoint | null;
}

export type ImageDetail = 'low' | 'high' | 'auto' | 'original';

/** An image by URL (https: or a data: URL) or by an uploaded file's id. */
export interface InputImage {
  type: 'input_image';
  /** Required in ResponseInputImage, optional in a tool output's image. */
  detail?: ImageDetail | null;
  image_url?: string | null;
  file_id?: string | null;
  prompt_cache_breakpoint?: PromptCacheBreakpoint | null;
}

export interface InputFile {
  type: 'input_file';
  detail?: 'auto' | 'low' | 'high';
  file_data?: string | null;
  file_id?: string | null;
  file_url?: string | null;
  filename?: string | null;
  prompt_cache_breakpoint?: PromptCacheBreakpoint | null;
}

export type InputContent = InputText | InputImage | InputFile;

export interface OutputText {
  type: 'output_text';
  text: string;
  /** Citations the model produced, each an object with its own `type`. */
  annotations?: Array<Record<string, unknown>>;
  logprobs?: Array<Record<string, unknown>>;
}

export interface OutputRefusal {
  type: 'refusal';
  refusal: string;
}

/**
 * A message item: EasyInputMessage (any role, content a string or input
 * parts), ResponseInputItem.Message (user, system or developer; input parts)
 * and ResponseOutputMessage (an assistant message a client echoes back, with
 * output_text and refusal parts and its `id` and `status`).
 */
export interface MessageItem {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<InputContent | OutputText | OutputRefusal>;
  id?: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
  phase?: 'commentary' | 'final_answer' | null;
}

/** Who made a tool call: the model directly, or a program it runs (programmatic tool calling). */
export type Caller = { type: 'direct' } | { type: 'program'; caller_id: string };

export interface FunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  /** The arguments as the model wrote them: a JSON string. */
  arguments: string;
  /** The namespace tool the function belongs to. */
  namespace?: string;
  id?: string;
  async?: boolean;
  caller?: Caller | null;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  /** Optional in the SDK's type; a chat-completions upstream needs it (tool_call_id). */
  call_id?: string | null;
  output: string | Array<InputText | InputImage | InputFile>;
  id?: string | null;
  name?: string | null;
  namespace?: string | null;
  caller?: Caller | null;
  status?: 'in_progress' | 'completed' | 'incomplete' | null;
}

export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  /** The model's reasoning, encrypted by the upstream that made it: only that kind of upstream can read it back. */
  encrypted_content?: string | null;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

/**
 * An item a hosted tool or OpenAI's own state made (web_search_call,
 * file_search_call, computer_call, code_interpreter_call, mcp_call,
 * shell_call, apply_patch_call, custom_tool_call, compaction, ...): checked
 * for its known fields and their kinds; passed through as it came.
 */
export interface HostedItem {
  type: string;
  [field: string]: unknown;
}

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | HostedItem;

export interface FunctionTool {
  type: 'function';
  name: string;
  /** Required (nullable) in the SDK's type; absent is taken as null, as OpenAI's API does. */
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  description?: string | null;
  defer_loading?: boolean;
  allowed_callers?: Array<'direct' | 'programmatic'> | null;
  async?: boolean;
  output_schema?: Record<string, unknown> | null;
}

export interface CustomTool {
  type: 'custom';
  name: string;
  description?: string;
  /** Free text, or a grammar (lark or regex) the input follows. */
  format?: Record<string, unknown>;
  defer_loading?: boolean;
  allowed_callers?: Array<'direct' | 'programmatic'> | null;
  async?: boolean;
}

/** A group of function (and custom) tools; the model calls them with `namespace` set on the function_call. */
export interface NamespaceTool {
  type: 'namespace';
  name: string;
  description: string;
  tools: Array<Omit<FunctionTool, 'parameters'> & { parameters?: unknown } | CustomTool>;
}

/** A tool OpenAI runs or defines (web_search, file_search, computer, mcp, code_interpreter, shell, ...). */
export interface HostedTool {
  type: string;
  [field: string]: unknown;
}

export type Tool = FunctionTool | CustomTool | NamespaceTool | HostedTool;

export type ToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'custom'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> }
  | { type: 'mcp'; server_label: string; name?: string | null }
  | { type: string };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

export interface TextConfig {
  format?: TextFormat;
  verbosity?: 'low' | 'medium' | 'high' | null;
}

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ReasoningConfig {
  effort?: ReasoningEffort | null;
  summary?: 'auto' | 'concise' | 'detailed' | null;
  /** Deprecated alias of summary. */
  generate_summary?: 'auto' | 'concise' | 'detailed' | null;
  context?: 'auto' | 'current_turn' | 'all_turns' | null;
  mode?: string;
}

export type Includable =
  | 'file_search_call.results'
  | 'web_search_call.results'
  | 'web_search_call.action.sources'
  | 'message.input_image.image_url'
  | 'computer_call_output.output.image_url'
  | 'code_interpreter_call.outputs'
  | 'reasoning.encrypted_content'
  | 'message.output_text.logprobs';

export type ServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority' | 'fast' | 'ultrafast';

/** POST /v1/responses, validated. */
export interface ResponsesRequest {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  text?: TextConfig;
  reasoning?: ReasoningConfig | null;
  include?: Includable[] | null;
  store?: boolean | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  metadata?: Record<string, string> | null;
  user?: string;
  safety_identifier?: string | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: 'in_memory' | '24h' | null;
  prompt_cache_options?: { mode?: 'implicit' | 'explicit'; prewarm?: boolean; ttl?: '30m' | '12h' };
  prompt?: Record<string, unknown> | null;
  background?: boolean | null;
  service_tier?: ServiceTier | null;
  truncation?: 'auto' | 'disabled' | null;
  context_management?: Array<Record<string, unknown>> | null;
  moderation?: Record<string, unknown> | null;
  image?: Record<string, unknown>;
  access_programs?: Record<string, unknown>;
  /** Codex's description of itself: string pairs. */
  client_metadata?: Record<string, string> | null;
  /** Fields outside the documented request that the options allowed, unchecked. */
  [extra: string]: unknown;
}
