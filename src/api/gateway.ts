// The embedded gateway's public shapes: what createGateway takes and gives.
// Declarations only; src/library/create-gateway.ts implements them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfigIssue, GatewayConfigInput } from './config.ts';
import type { ProviderAdapter } from './providers.ts';
import type { AuditSink, Authenticator, KeyStore, Limiter, Logger, ProviderKeySource, TraceExporter, UsageStore } from './ports.ts';

/** A node:http request function; `next` (Express/Connect style) is called for a path the gateway does not serve. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export interface GatewayOptions {
  /** The config file's JSON shape (docs/config.md), checked as the file is (checkConfig). */
  config: GatewayConfigInput;
  /** What relative paths in the config (dataDir, apiKeyFile, certificates) are relative to; default process.cwd(). */
  baseDir?: string;
  /** Where apiKeyEnv and the other *Env settings are looked up; default process.env. */
  env?: Record<string, string | undefined>;
  /**
   * Where log records go; default JSON lines on stdout at the config's log.level
   * (written once per event-loop turn, the rest written by close()). A given
   * logger keeps its own level: reload() does not change it.
   */
  logger?: Logger;
  /** The path prefix handle() serves under ("/llm"): starts with "/", no trailing "/", no "?" or "#"; default "". */
  basePath?: string;
  /** The API keys (in place of the config's state backend's); the admin API manages them too. */
  keys?: KeyStore;
  /** Decides every API request's key (null: 401); the key store is then not asked. */
  authenticate?: Authenticator;
  /** Where per-key usage is added (in place of the state backend's). */
  usage?: UsageStore;
  /** Rate limits and budgets (in place of the state backend's). */
  limiter?: Limiter;
  /** Receives each audit record after the gateway's own chain took it. */
  audit?: AuditSink;
  /** Each provider's upstream key, asked per exchange; undefined falls back to the config. */
  providerKey?: ProviderKeySource;
  /** Receives the finished spans in place of the OTLP export. */
  traceExporter?: TraceExporter;
  /** Provider types the config's providers may name besides openai, anthropic and demo (reload() checks with them too). */
  providerTypes?: readonly ProviderAdapter[];
}

export interface ListenOptions {
  /** Overrides config.listen.port; 0 picks a free port. */
  port?: number;
  /** Overrides config.listen.host. */
  host?: string;
  /** An already bound listening socket's descriptor (socket activation) for the API listener; port and host are then not used. */
  fd?: number;
  /** The admin listener: false for none (whatever config.admin.enabled says); default config.admin.enabled. */
  admin?: boolean;
  /** Overrides config.admin.port; 0 picks a free port. */
  adminPort?: number;
  /** An already bound socket's descriptor for the admin listener. */
  adminFd?: number;
}

export interface ListeningAddress {
  /** The address the API listener is bound to (an IPv6 one without brackets). */
  host: string;
  port: number;
  /** The URL base: `http://127.0.0.1:8080` (`https:` with listen.tls). */
  url: string;
  /** The admin listener (dashboard, admin API), or null when there is none. */
  admin: { url: string } | null;
}

/** What reload() did: swapped in the new config, or changed nothing and says why. */
export type ReloadResult =
  | {
      ok: true;
      /** Aliases served from now on. */
      aliases: number;
      /** Settings that changed but keep their running value until a restart (`listen.port`, ...). */
      restartNeeded: string[];
    }
  | { ok: false; issues: readonly ConfigIssue[] };

/** Counts reported when close() has drained. */
export interface DrainReport {
  /** Requests open when the drain began that finished on their own. */
  finished: number;
  /** Requests still open at the deadline, ended with an error frame or a 503. */
  endedWithError: number;
  /** Requests that arrived during the drain, answered 503. */
  refused: number;
}

export interface Gateway {
  /**
   * The API routes (/v1/..., /healthz, /readyz) under basePath. A path outside
   * them: next() when given, else the gateway's 404 JSON. Mount it before any
   * body parser: the gateway reads the request body itself.
   */
  readonly handle: RequestHandler;
  /**
   * The admin API and dashboard as a second request function (the admin
   * listener's routes, security headers included), made on the first call;
   * mount it where the path it sees starts at "/". Signing in needs the admin
   * password in dataDir (`portcullis admin set-password`) or an admin API
   * token: an embedded gateway makes no one-time bootstrap token. Throws after close().
   */
  admin(): RequestHandler;
  /**
   * Listens on config.listen (or options), and the admin listener when
   * config.admin.enabled (or options.admin); the server limits of
   * config.limits. Once per gateway; a taken address rejects naming the
   * setting, and listen() may then be called again.
   */
  listen(options?: ListenOptions): Promise<ListeningAddress>;
  /**
   * Checks and builds `config` and re-reads the keys, then swaps all in at
   * once; refused, nothing changes. Never throws for a config problem. Calls
   * never overlap: one made during another waits its turn. Each is audited
   * (config.reload / config.reload_refused, actor system "library", source
   * "reload()", target "embedded"). Restart-only settings (listen, TLS files'
   * paths, state, telemetry) keep their running value and are named in restartNeeded.
   */
  reload(config: unknown): Promise<ReloadResult>;
  /**
   * Stops accepting (requests via handle() are answered 503 from now on),
   * gives open requests drainTimeoutMs (default config shutdown.drainTimeoutMs),
   * ends those left, writes the usage counters, and closes what the gateway
   * opened (listeners, admin, the state backend, its logger's pending lines).
   * Ports the host gave (keys, usage, limiter, audit) are the host's to close.
   * Later calls return the same promise.
   */
  close(options?: { drainTimeoutMs?: number }): Promise<DrainReport>;
  /** During close(): end the open requests now rather than at the deadline. */
  closeNow(): void;
  /** True once close() began. */
  readonly draining: boolean;
  /** Requests being handled now. */
  readonly inFlight: number;
}
