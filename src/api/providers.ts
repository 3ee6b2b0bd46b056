// The public contract for a provider type a host adds: an adapter that checks
// its own config settings and builds a codec, the pure translation between the
// gateway's chat shapes and the upstream's wire format. The gateway keeps the
// I/O: the upstream's URL, key, extra headers, deadlines, retries, circuit
// breaker, transport, size limits, streaming, usage and the answer guard are
// the same for a host type as for the built-in ones. Declarations only.

/** A request message's role. */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ChatTextPart {
  readonly type: 'text';
  readonly text: string;
}

export interface ChatImagePart {
  readonly type: 'image_url';
  readonly image_url: { readonly url: string; readonly detail?: 'auto' | 'low' | 'high' };
}

export type ChatContentPart = ChatTextPart | ChatImagePart;

export interface ChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content?: string | readonly ChatContentPart[] | null;
  readonly name?: string;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly ChatToolCall[];
  /** An assistant message's refusal, as the client echoes it back. */
  readonly refusal?: string | null;
}

export interface ChatToolDefinition {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description?: string;
    /** A JSON Schema object. */
    readonly parameters?: Readonly<Record<string, unknown>>;
    readonly strict?: boolean | null;
  };
}

/** response_format's json_schema, as OpenAI defines it (only when the operator accepts "json_schema"). */
export interface ChatJsonSchemaFormat {
  readonly type: 'json_schema';
  readonly json_schema: {
    /** Letters, digits, underscores and hyphens, at most 64. */
    readonly name: string;
    readonly description?: string;
    /** A JSON Schema object. */
    readonly schema?: Readonly<Record<string, unknown>>;
    /** true: the schema is inside OpenAI's strict subset, and the gateway holds the answer to it. */
    readonly strict?: boolean;
  };
}

export type ChatResponseFormat = { readonly type: 'text' | 'json_object' } | ChatJsonSchemaFormat;

/** Predicted output: text the answer is expected to repeat. */
export interface ChatPrediction {
  readonly type: 'content';
  readonly content: string | readonly ChatTextPart[];
}

/**
 * The validated request a codec encodes, as OpenAI's chat completions define
 * it, already rewritten for the upstream: `model` is the target's model name,
 * and at most one of max_tokens / max_completion_tokens is set. It declares
 * every field the gateway may hand a codec, no other: the contract's table
 * always, and the fields from `seed` down only when the operator's
 * requestFields accept them for the alias (docs/request-fields.md) and the
 * client sent them, checked with OpenAI's types and bounds. A field a codec
 * cannot translate must be refused (ProviderCodec.refusal), never dropped.
 */
export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ChatToolDefinition[];
  readonly tool_choice?: 'none' | 'auto' | 'required' | { readonly type: 'function'; readonly function: { readonly name: string } };
  readonly response_format?: ChatResponseFormat;
  readonly temperature?: number;
  readonly top_p?: number;
  readonly max_tokens?: number;
  readonly max_completion_tokens?: number;
  readonly stop?: string | readonly string[];
  /** What the client asked for; encode's `stream` argument says what to ask the upstream for. */
  readonly stream?: boolean;
  /** The client's; the gateway answers include_usage itself. */
  readonly stream_options?: { readonly include_usage: boolean };
  readonly n?: number;
  readonly seed?: number;
  readonly user?: string;
  readonly safety_identifier?: string;
  readonly prompt_cache_key?: string;
  /** At most 16 pairs; keys up to 64 characters, values up to 512. */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly parallel_tool_calls?: boolean;
  readonly logprobs?: boolean;
  /** 0 to 20; only with logprobs true. */
  readonly top_logprobs?: number;
  readonly frequency_penalty?: number;
  readonly presence_penalty?: number;
  /** Token id (a decimal string) to a bias from -100 to 100. */
  readonly logit_bias?: Readonly<Record<string, number>>;
  readonly reasoning_effort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  readonly service_tier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority';
  readonly prediction?: ChatPrediction;
  readonly verbosity?: 'low' | 'medium' | 'high';
  readonly store?: boolean;
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** Token counts as OpenAI reports them; the gateway records and bills these. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** A whole answer, as OpenAI's chat completions return it. The gateway checks
 * it (a malformed one is a 502) and sets `model` to what the client asked for. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; refusal?: string | null; tool_calls?: ChatToolCall[] };
    logprobs?: Record<string, unknown> | null;
    finish_reason: ChatFinishReason | null;
  }>;
  usage?: ChatUsage;
}

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/** One streamed piece of an answer, as OpenAI's chat completions stream it. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ChatToolCallDelta[]; refusal?: string | null };
    finish_reason: ChatFinishReason | null;
  }>;
  /** On the last chunk (with empty choices) or with the finishing one. */
  usage?: ChatUsage | null;
}

/** One server-sent event of the upstream's streamed answer. */
export interface ServerSentEvent {
  /** The data lines joined with "\n". */
  readonly data: string;
  /** The `event:` field, "message" when the event had none. */
  readonly event: string;
  readonly id: string | undefined;
}

/**
 * Turns one streamed answer's events into chunks; the gateway asks for a fresh
 * one per exchange. A throw from push() or end() fails the stream with a 502
 * whose message is generic (what was thrown is logged by its class only, never
 * its text, which may quote the upstream's body).
 */
export interface StreamDecoder {
  /** Appends the chunks `event` produces (none, one or more) to `out`. */
  push(event: ServerSentEvent, out: ChatCompletionChunk[]): void;
  /** The body ended: appends what is left to `out`. A stream in which no
   * chunk carried a finish_reason is answered 502 upstream_stream_truncated. */
  end(out: ChatCompletionChunk[]): void;
  /** True once the answer is complete and the rest of the body need not be
   * read; absent or false: the body is read to its end. */
  readonly done?: boolean;
}

/** Why a request cannot be sent to this upstream without changing its
 * meaning: the client gets a 400 naming `param`. */
export interface ParamRefusal {
  /** The request parameter, e.g. "logprobs" or "messages[2].content[0]". */
  readonly param: string;
  /** A sentence for the client saying what to change. */
  readonly message: string;
}

/** One provider type's wire format, pure: no I/O, no timers, no state between requests. */
export interface ProviderCodec {
  /**
   * The upstream request body for `request`; `stream` says whether a
   * streamed answer is wanted. Every field of `request` must reach the
   * upstream with its meaning: one the codec cannot translate (logprobs to an
   * upstream without them, say) is refused by refusal(), which runs first and
   * gives the client a 400 naming it; encode never drops a field silently.
   */
  encode(request: ChatRequest, stream: boolean): string;
  /** A whole 2xx answer's body text as a completion. */
  decode(text: string, request: ChatRequest): ChatCompletion;
  /** A fresh decoder for one streamed answer to `request`. */
  streamDecoder(request: ChatRequest): StreamDecoder;
  /** Headers this request needs beyond the provider's configured ones;
   * never content-type, accept, x-request-id or the key's header. */
  requestHeaders?(request: ChatRequest): Readonly<Record<string, string>> | undefined;
  /** Checked before any upstream call (another target may take the request
   * instead); null when the request can be sent: encode translates every
   * field it carries. */
  refusal?(request: ChatRequest): ParamRefusal | null;
  /** The URL this request goes to; undefined (or absent): the provider's baseUrl as configured. */
  endpoint?(request: ChatRequest): string | undefined;
}

/**
 * Says what is wrong with one of the adapter's own settings. `setting` is the
 * path inside the provider's entry ("region", "routing.zone", "tags[2]"); the
 * config problem reads `providers.<name>.<setting>: <message>`.
 */
export type ProviderSettingsReport = (setting: string, message: string) => void;

/** What the gateway knows about the provider when it builds its codec. */
export interface ProviderAdapterContext {
  /** The provider's name in the config's "providers". */
  readonly name: string;
  /** The checked baseUrl (trailing slashes removed, query kept). */
  readonly baseUrl: string;
}

/**
 * A provider type a host adds (GatewayOptions.providerTypes, and
 * checkConfig's). A config provider whose "type" is `type` takes the settings
 * the gateway owns for every HTTP upstream (baseUrl, apiKeyEnv, apiKeyFile,
 * apiKeyHeader, headers, connectTimeoutMs, firstByteTimeoutMs, idleTimeoutMs,
 * timeoutMs, retry, circuitBreaker, transport, tls, proxy) plus `settings`,
 * which `parse` checks. The upstream key goes in apiKeyHeader (default
 * `authorization: Bearer <key>`); a codec never sees it.
 */
export interface ProviderAdapter<Settings = unknown> {
  /** The "type" the config names; not a built-in one (openai, anthropic, demo). */
  readonly type: string;
  /** The adapter's own setting names, besides the gateway's; any other name is a config problem. */
  readonly settings: readonly string[];
  /** A baseUrl used when the config gives none; absent: baseUrl is required. */
  readonly defaultBaseUrl?: string;
  /**
   * Checks the adapter's own settings (only the names in `settings` that the
   * config gives), reporting each problem; returns what create() gets. The
   * return value is ignored when anything was reported. Pure and synchronous:
   * it also runs for checkConfig and every reload.
   */
  parse(settings: Readonly<Record<string, unknown>>, report: ProviderSettingsReport): Settings;
  /** The codec for one configured provider; called at start and on each reload that keeps or adds it. */
  create(settings: Settings, context: ProviderAdapterContext): ProviderCodec;
}
