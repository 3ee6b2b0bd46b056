// The gateway's configuration: its schema, the embedded default, and the
// checks run at start. Every problem names its path in the file
// (`aliases.service-chat.provider`) so an operator can fix it without guessing.
// The reference for operators is docs/config.md.

import type { RequestFieldName } from './request-fields-config.ts';
import type { MetricsConfig } from './metrics-config.ts';
import { ConfigIssueCode, formatIssue, type ConfigIssue } from './config-issues.ts';
import type { TelemetryConfig } from './telemetry-config.ts';
import type { OidcConfig } from './oidc-config.ts'; // single sign-on
import type { AuditConfig } from './audit-config.ts';
import type { SecurityConfig } from './security-config.ts';
import type { ProviderAdapter } from '../api/providers.ts';
import type { ResponsesConfig } from './response-store-config.ts';
import type { ResponsesMode } from './provider-defaults.ts';
import type { EmbeddingsConfig } from './embeddings-config.ts';
import type { AliasGuard, GuardConfig } from '../guard/guard-policy.ts';

export const AUTO_ALIAS = 'service-auto';
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
/** Prompt tokens a request's reservation counts per image part, unless the alias sets imageTokens. */
export const DEFAULT_IMAGE_TOKENS = 2000;
/** The currency prices and cost budgets are in, unless the config sets one. */
export const DEFAULT_CURRENCY = 'USD';

export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

/** How one upstream is called: deadlines, retries and its circuit breaker. */
export interface UpstreamPolicy {
  /** Bound on connection setup; see docs/config.md for how built-in fetch limits it. */
  connectTimeoutMs: number;
  /** Time to the upstream's response headers. */
  firstByteTimeoutMs: number;
  /** Longest silence between two stream chunks. */
  idleTimeoutMs: number;
  /** Total time for one attempt, streams included. */
  timeoutMs: number;
  retry: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number };
  circuitBreaker: { failureThreshold: number; openMs: number };
}

/** TLS versions a config may require as the minimum. */
export type TlsMinVersion = 'TLSv1.2' | 'TLSv1.3';

/**
 * PEM files for the gateway as a TLS client (an upstream, Redis). Paths have
 * `${NAME}` replaced by that environment variable (a systemd credential:
 * `${CREDENTIALS_DIRECTORY}/upstream-ca.pem`) and are relative to the config file.
 */
export interface TlsClientConfig {
  /** Trust exactly these CA certificates instead of Node's built-in roots. */
  caFile: string | null;
  /** A client certificate (chain) for mutual TLS; set together with keyFile. */
  certFile: string | null;
  keyFile: string | null;
  /** The name checked against the server's certificate (and sent as SNI) instead of the URL's host. */
  serverName: string | null;
  minVersion: TlsMinVersion;
}

/** A listener served over TLS (the API listener, the admin listener). */
export interface ListenerTlsConfig {
  certFile: string;
  keyFile: string;
  /** CA certificates that client certificates are checked against; required when clientAuth is not "none". */
  clientCaFile: string | null;
  /** "required": a client without a valid certificate is refused in the handshake; "optional": asked, checked when given. */
  clientAuth: 'none' | 'optional' | 'required';
  minVersion: TlsMinVersion;
}

/** How an upstream is reached: the built-in fetch (the default) or node:http/node:https. */
export type UpstreamTransportName = 'fetch' | 'node';

interface UpstreamProviderBase {
  baseUrl: string;
  /**
   * "fetch" or "node"; null (not set): fetch, or node when an egress proxy from
   * the environment applies to this upstream. TLS settings and a configured
   * proxy need "node" (docs/config.md, "Transports").
   */
  transport: UpstreamTransportName | null;
  /** TLS to this upstream; null: Node's defaults. */
  tls: TlsClientConfig | null;
  /**
   * The egress proxy: null follows https_proxy / HTTPS_PROXY / http_proxy / NO_PROXY (as curl; ./proxy-env.ts) from the
   * environment; "none" never uses one; an http:// URL always uses that one.
   */
  proxy: string | null;
  /** Name of the environment variable holding the upstream key (never the key itself). */
  apiKeyEnv: string | null;
  /** A file holding the key (a systemd credential, e.g. $CREDENTIALS_DIRECTORY/key). */
  apiKeyFile: string | null;
  headers: Record<string, string>;
  policy: UpstreamPolicy;
}

/** How count_tokens counts on a provider (docs/config.md, "Token counting"):
 * the upstream's own endpoint, or the gateway's estimate. */
export type TokenCountMethod = 'anthropic' | 'vllm' | 'llamacpp' | 'estimate';

export interface OpenAIProviderConfig extends UpstreamProviderBase {
  type: 'openai';
  /** "vllm", "llamacpp" or "estimate"; not set: "estimate". */
  tokenCount?: 'vllm' | 'llamacpp' | 'estimate';
  /** The header carrying the upstream key, lower case: `authorization` (as
   * `Bearer <key>`, the default) or e.g. Azure OpenAI's `api-key` (the key alone). */
  apiKeyHeader: string;
  /** Which of the two max fields this upstream understands; the gateway sends exactly one. */
  maxTokensParam: MaxTokensParam;
  /** What a Responses client's request becomes here: its own body to /responses, or the chat translation. */
  responses: ResponsesMode;
  /** Top-level Responses fields outside the documented request that a client's body may carry to this provider (passthrough mode), unchecked. */
  responsesPassthrough: string[];
  /** The upstream-run Responses tools (web_search, file_search, ...) a client may have this upstream run; passthrough mode only. */
  responsesHostedTools: string[];
  /** The `encoding_format` the gateway asks this upstream's embeddings in; the client gets its own either way. */
  embeddingsEncoding: EmbeddingsEncoding;
}

/** How an upstream is asked to encode vectors: base64 (little-endian float32) or JSON numbers. */
export type EmbeddingsEncoding = 'base64' | 'float';

export interface AnthropicProviderConfig extends UpstreamProviderBase {
  type: 'anthropic';
  /** Top-level Messages fields outside the documented request that a client's body may carry to this provider, unchecked. */
  messagesPassthrough: string[];
  /** The anthropic-beta values a Messages client may send through; ["*"]: any. */
  anthropicBetas: string[];
  /** The anthropic-version header. */
  version: string;
  /** "anthropic" or "estimate"; not set: "anthropic". */
  tokenCount?: 'anthropic' | 'estimate';
}

export interface DemoProviderConfig {
  type: 'demo';
  delayMs: number;
  /** Only "estimate": the demo has no tokenizer. */
  tokenCount?: 'estimate';
}

/** The "type" every host-added provider carries in the checked config; its
 * own type name is `hostType`. Never a name a config file can give. */
export const HOST_PROVIDER = 'host';

/** A provider of a type the host registered (../api/providers.ts): the
 * settings every HTTP upstream shares, checked by the gateway, plus what the
 * adapter's parse returned, and the adapter itself, so the provider is built
 * from the checked config alone. */
export interface HostProviderConfig extends UpstreamProviderBase {
  type: typeof HOST_PROVIDER;
  /** The config's "type": the adapter's name. */
  hostType: string;
  /** The provider's name in "providers" (the adapter's create is told it). */
  name: string;
  adapter: ProviderAdapter;
  /** What adapter.parse returned for the adapter's own settings. */
  settings: unknown;
  /** As OpenAIProviderConfig's: `authorization` (as `Bearer <key>`) or a header of its own. */
  apiKeyHeader: string;
}

export type BuiltInProviderConfig = OpenAIProviderConfig | AnthropicProviderConfig | DemoProviderConfig;

export type ProviderConfig = BuiltInProviderConfig | HostProviderConfig;

/**
 * What a model's tokens cost, in currency units (GatewayConfig.currency) per
 * million tokens, as the provider bills them: at most 6 decimals, 0 to 10000.
 * Only the config holds prices (docs/config.md, "Prices"); they are the
 * operator's to keep current.
 */
export interface Price {
  input: number;
  /** Prompt tokens the provider reports as cached (prompt_tokens_details.cached_tokens); defaults to input, never above it. */
  cachedInput: number;
  output: number;
}

export interface TargetConfig {
  provider: string;
  /** Model name sent upstream. */
  model: string;
  /** Share among targets of the same priority. */
  weight: number;
  /** Lower is tried first; a higher priority is a fallback. */
  priority: number;
  /**
   * The target's own price, else its alias's, else free for a demo provider,
   * else null (unpriced: its answers cost nothing in the records). Resolved at parse.
   */
  price: Price | null;
  /**
   * Embeddings: whether `dimensions` is forwarded to this model (its own
   * setting, else its alias's, else true for a demo provider); false on chat aliases.
   */
  acceptsDimensions: boolean;
  /**
   * Embeddings: the most inputs sent in one upstream call (its own setting,
   * else its alias's); null: the provider type's DEFAULT_MAX_INPUTS_PER_CALL. Null on chat aliases.
   */
  maxInputsPerCall: number | null;
}

/** What an alias serves: chat-shaped requests (chat completions, Messages, Responses, count_tokens) or embeddings. */
export type AliasKind = 'chat' | 'embeddings';
export const ALIAS_KINDS: readonly AliasKind[] = ['chat', 'embeddings'];

export type Capability = 'vision' | 'tools' | 'json';
export const CAPABILITIES: readonly Capability[] = ['vision', 'tools', 'json'];

export interface AliasConfig {
  /** "chat" unless the config says "embeddings"; a request of the other kind naming it is model_kind_mismatch. */
  kind: AliasKind;
  targets: TargetConfig[];
  /** Server-side cap on output tokens; a larger request is clamped to it. */
  maxOutputTokens: number | null;
  /** Prompt plus output tokens the alias's models accept; used by service-auto. */
  contextWindow: number | null;
  /** What the alias is good for; the default service-auto rules use these. */
  capabilities: Capability[];
  /** The price of targets that give none; null when the alias sets none. */
  price: Price | null;
  /** Prompt tokens a request's reservation counts per image part (src/limits/reservation.ts). */
  imageTokens: number;
  /** OpenAI's request fields this alias takes beyond the contract's table; null: the top level's list. */
  requestFields: readonly RequestFieldName[] | null;
  /** The egress guard's detectors for this alias, over the top level's (./guard-config.ts); null: the top level's. */
  guard: AliasGuard | null;
}

/** Request features a service-auto rule can test; all given conditions must hold. */
export interface AutoCondition {
  images?: boolean;
  tools?: boolean;
  jsonObject?: boolean;
  stream?: boolean;
  minPromptTokens?: number;
}

export interface AutoRule {
  when: AutoCondition;
  use: string;
  /** Shown in x-portcullis-route and the access log. */
  reason: string;
}

export interface ServerLimits {
  maxBodyBytes: number;
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** A response whose client takes no bytes for this long, while the gateway
   * has bytes for it, is ended (its socket destroyed, its upstream aborted). */
  writeStallTimeoutMs: number;
  maxJsonDepth: number;
  maxStringBytes: number;
  maxMembers: number;
  /**
   * Open client connections per listener; beyond it a new connection is
   * answered 503 too_many_connections and closed (src/http/connection-limit.ts).
   * null: derived at start from the process's descriptor limit
   * (src/ops/descriptor-watch.ts), 16384 at most.
   */
  maxConnections: number | null;
  /**
   * A request's charge counts against its key's limits and budgets at most this
   * many times its reservation (src/limits/charge-ceiling.ts); the usage record
   * keeps what the upstream reported.
   */
  maxChargeMultiple: number;
  /**
   * Open client connections per client address, per listener; beyond it a new
   * connection from that address is answered 503 too_many_connections.
   * null: min(floor(maxConnections / 4), max(8, floor(maxConnections / 64))),
   * at least 1 (defaultPerAddress in src/http/connection-table.ts). An IPv6
   * client counts by its /56. A trusted proxy's
   * connections are not counted per address.
   */
  maxConnectionsPerAddress: number | null;
}

/** The dashboard and admin API listener (docs/admin-api.md). */
export interface AdminConfig {
  /** false: no admin listener at all (keys are managed with the CLI only). */
  enabled: boolean;
  host: string;
  port: number;
  /** Serve the admin listener over HTTPS with these PEM files; null for plain HTTP. */
  tls: ListenerTlsConfig | null;
  /** Mark the session cookie Secure; defaults to true when tls is set. Set it when a TLS proxy fronts the admin listener. */
  secureCookies: boolean;
  sessionTtlMs: number;
  sessionIdleMs: number;
  /**
   * Host names the admin listener answers for, besides localhost, 127.0.0.1, ::1 and
   * admin.host: a request naming any other Host is refused (DNS rebinding).
   */
  allowedHosts: string[];
  /** Single sign-on with OpenID Connect (docs/sso.md); null: password login only. */
  oidc: OidcConfig | null;
}

/** The API listener. */
export interface ListenConfig {
  host: string;
  port: number;
  /** Serve the API over HTTPS with these PEM files; null for plain HTTP. */
  tls: ListenerTlsConfig | null;
  /**
   * Reverse proxies (addresses and CIDR blocks) whose X-Forwarded-For both
   * listeners believe for the client's address (src/http/client-address.ts);
   * empty: the socket's peer is the client.
   */
  trustedProxies: string[];
}

export type LogLevelSetting = 'debug' | 'info' | 'warn' | 'error';

export interface RedisStateConfig {
  /** redis://[user@]host:port[/db]; never a password (the parser refuses one): that comes from passwordEnv/passwordFile. */
  url: string;
  passwordEnv: string | null;
  passwordFile: string | null;
  /** Prefix of every Redis key the gateway writes, so one Redis can serve several deployments. */
  keyPrefix: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** TLS settings for a rediss:// URL; null with rediss://: Node's defaults. Only with rediss://. */
  tls: TlsClientConfig | null;
}

/** Where keys, limits, budgets and usage live (docs/scaling.md). */
export interface StateConfig {
  backend: 'memory' | 'redis';
  redis: RedisStateConfig | null;
  /** With the Redis backend: what a request gets while Redis is unreachable. */
  onUnavailable: 'refuse' | 'local';
}

export interface GatewayConfig {
  /** Where the file came from, or null for the embedded default. */
  source: string | null;
  listen: ListenConfig;
  admin: AdminConfig;
  shutdown: { drainTimeoutMs: number };
  log: { level: LogLevelSetting };
  state: StateConfig;
  /** Absolute path of the data directory (keys live here). */
  dataDir: string;
  limits: ServerLimits;
  providers: Record<string, ProviderConfig>;
  aliases: Record<string, AliasConfig>;
  auto: { default: string; rules: AutoRule[] };
  /** OpenAI's request fields every alias takes beyond the contract's table, unless it lists its own (./request-fields-config.ts). */
  requestFields: readonly RequestFieldName[];
  /** ISO 4217 code of the currency prices and cost budgets are written in (display only: no conversion). */
  currency: string;
  /** OpenTelemetry traces: ./telemetry-config.ts. */
  telemetry: TelemetryConfig;
  /** The audit chain's file rotation: ./audit-config.ts. */
  audit: AuditConfig;
  /** The Responses door's own store (./response-store-config.ts): off unless turned on. */
  responses: ResponsesConfig;
  /** The metrics listener (./metrics-config.ts); null: off, /metrics only on the admin listener. */
  metrics: MetricsConfig | null;
  /** Bounds of POST /v1/embeddings requests (./embeddings-config.ts). */
  embeddings: EmbeddingsConfig;
  /** The egress guard (./guard-config.ts); null: off everywhere unless an alias turns it on. */
  guard: GuardConfig | null;
  /** FIPS mode and the admin password's hash: ./security-config.ts. */
  security: SecurityConfig;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  writeStallTimeoutMs: 30_000,
  maxJsonDepth: 64,
  maxStringBytes: 2 * 1024 * 1024,
  maxMembers: 10_000,
  maxConnections: null,
  maxChargeMultiple: 2,
  maxConnectionsPerAddress: null,
};

/** The largest limits.maxChargeMultiple. */
export const MAX_CHARGE_MULTIPLE = 100;

/**
 * A config that cannot be served, with every problem found in it. The message
 * is one line for one problem ("SOURCE: PATH: PROBLEM", or "SOURCE: PROBLEM"
 * for the file itself) and a count followed by one indented line per problem
 * otherwise. `path` is the first problem's, for callers that name one setting.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly code = 'invalid_config';
  readonly path: string;
  readonly source: string | null;
  readonly issues: readonly ConfigIssue[];
  constructor(source: string | null, path: string | readonly ConfigIssue[], problem = '', code: ConfigIssueCode = ConfigIssueCode.InvalidValue) {
    const issues = typeof path === 'string' ? [{ code, path, message: problem }] : path;
    super(configErrorMessage(source, issues));
    this.source = source;
    this.issues = issues;
    this.path = issues[0]?.path ?? '';
  }

  /** The message without the source: what a log line that names the source already needs. */
  get problem(): string {
    const prefix = `${this.source ?? 'embedded config'}: `;
    return this.message.startsWith(prefix) ? this.message.slice(prefix.length) : this.message;
  }
}

function configErrorMessage(source: string | null, issues: readonly ConfigIssue[]): string {
  const name = source ?? 'embedded config';
  if (issues.length === 1) return `${name}: ${formatIssue(issues[0] as ConfigIssue)}`;
  return `${name}: ${issues.length} problems\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`;
}
