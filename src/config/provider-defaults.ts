// The defaults of every provider setting, in one place: the provider table
// (./provider-types.ts) fills a config with them, and the adapters fall back on
// them when they are constructed directly (tests, embedding). A leaf module, so
// the exchange code can import it without a cycle through the table.
import type { UpstreamPolicy } from './config.ts';

/** Whole exchange, headers to last byte. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** From sending the request to the response headers. */
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 60_000;
/** Longest silence between two stream chunks. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Connection setup, as configured; an adapter built without it leaves fetch's own (also 10 s). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Non-stream response body limit (decoded bytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/**
 * An embeddings call's answer may hold this much per input when that is more
 * than maxResponseBytes: a 3,072-wide vector is 16 KiB in base64 and up to 66
 * KiB as printed doubles, so 512 inputs of a float answer fit.
 */
export const EMBEDDING_ANSWER_BYTES_PER_INPUT = 128 * 1024;
/** Largest single event of a stream. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const ANTHROPIC_VERSION = '2023-06-01';

/** count_tokens on each provider type when its config sets no tokenCount. */
export const DEFAULT_TOKEN_COUNT = { openai: 'estimate', anthropic: 'anthropic', demo: 'estimate' } as const;

/** What a Responses client's request becomes at an "openai" provider. */
export const ResponsesMode = {
  /** The client's own body to {baseUrl}/responses: for an upstream that speaks Responses (OpenAI, Azure OpenAI's v1 API, vLLM). */
  Passthrough: 'passthrough',
  /** The gateway's chat translation to {baseUrl}/chat/completions: any chat-completions server. */
  Translate: 'translate',
} as const;
export type ResponsesMode = (typeof ResponsesMode)[keyof typeof ResponsesMode];

/**
 * Translate: every server an "openai" provider can point at takes chat
 * completions, while many (llama.cpp, Ollama, LiteLLM setups, older vLLM and
 * Azure deployments URLs) answer /responses with a 404, which would fail
 * every Responses request. An operator whose upstream speaks Responses turns
 * passthrough on to keep reasoning items and hosted tools intact.
 */
export const DEFAULT_RESPONSES_MODE: ResponsesMode = ResponsesMode.Translate;

/**
 * Inputs one embeddings call carries at most, by provider type, when neither
 * the target nor its alias sets maxInputsPerCall: OpenAI takes 2048 per call,
 * but servers made for its SDKs (vLLM, llama.cpp, text-embeddings-inference)
 * often take fewer, and 512 keeps one call's answer far below the response
 * size limit. Anthropic has no embeddings API.
 */
export const DEFAULT_MAX_INPUTS_PER_CALL = { openai: 512, demo: 2048 } as const;

/**
 * The encoding_format an "openai" provider is asked for: base64 is exact,
 * about a third the size of JSON numbers, and taken by every server made for
 * the openai SDKs, which ask for it by default.
 */
export const DEFAULT_EMBEDDINGS_ENCODING = 'base64';

/** Pause between the demo provider's streamed chunks (0: no timers). */
export const DEFAULT_DEMO_DELAY_MS = 0;

/** Deadlines, retries and circuit breaker of an upstream whose config sets none. */
export const DEFAULT_POLICY: UpstreamPolicy = {
  connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
  firstByteTimeoutMs: DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
  timeoutMs: DEFAULT_TIMEOUT_MS,
  retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 30_000 },
  circuitBreaker: { failureThreshold: 5, openMs: 30_000 },
};

/**
 * The anthropic-beta values a Messages client may send through to an
 * Anthropic provider that sets no `anthropicBetas`: those Claude Code sends
 * and the features of the Messages API that Anthropic's own SDK names
 * (docs/config.md lists them). A value outside the list is
 * dropped (the access line names it), so an upstream never sees a beta
 * the operator did not accept.
 */
export const DEFAULT_ANTHROPIC_BETAS: readonly string[] = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'fine-grained-tool-streaming-2025-05-14',
  'context-management-2025-06-27',
  'advanced-tool-use-2025-11-20',
  'effort-2025-11-24',
  'per-turn-control-2026-07-01',
  'mid-conversation-tool-changes-2026-07-01',
  'thinking-token-count-2026-05-13',
  'prompt-caching-2024-07-31',
  'extended-cache-ttl-2025-04-11',
  'token-efficient-tools-2025-02-19',
  'token-counting-2024-11-01',
  'structured-outputs-2025-11-13',
  'output-128k-2025-02-19',
  'pdfs-2024-09-25',
];
