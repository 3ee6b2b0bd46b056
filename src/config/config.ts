// The gateway's configuration: its schema, the embedded default, and the
// checks run at start. Every problem names its path in the file
// (`aliases.service-chat.provider`) so an operator can fix it without guessing.
// The reference for operators is docs/config.md.

export const AUTO_ALIAS = 'service-auto';
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

export interface OpenAIProviderConfig {
  type: 'openai';
  baseUrl: string;
  /** Name of the environment variable holding the upstream key (never the key itself). */
  apiKeyEnv: string | null;
  headers: Record<string, string>;
  /** Which of the two max fields this upstream understands; the gateway sends exactly one. */
  maxTokensParam: MaxTokensParam;
  timeoutMs: number;
  firstByteTimeoutMs: number;
}

export interface DemoProviderConfig {
  type: 'demo';
  delayMs: number;
}

export type ProviderConfig = OpenAIProviderConfig | DemoProviderConfig;

export interface AliasConfig {
  provider: string;
  /** Model name sent upstream. */
  model: string;
  /** Server-side cap on output tokens; a larger request is clamped to it. */
  maxOutputTokens: number | null;
}

export interface ServerLimits {
  maxBodyBytes: number;
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxJsonDepth: number;
  maxStringBytes: number;
  maxMembers: number;
}

export interface GatewayConfig {
  /** Where the file came from, or null for the embedded default. */
  source: string | null;
  listen: { host: string; port: number };
  /** Absolute path of the data directory (keys live here). */
  dataDir: string;
  limits: ServerLimits;
  providers: Record<string, ProviderConfig>;
  aliases: Record<string, AliasConfig>;
  auto: { default: string };
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxJsonDepth: 64,
  maxStringBytes: 2 * 1024 * 1024,
  maxMembers: 10_000,
};

export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly code = 'invalid_config';
  readonly path: string;
  constructor(source: string | null, path: string, problem: string) {
    super(`${source ?? 'embedded config'}: ${path === '' ? '' : `${path}: `}${problem}`);
    this.path = path;
  }
}
