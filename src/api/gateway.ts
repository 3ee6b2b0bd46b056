// The embedded gateway's public shapes: what createGateway takes and gives.
// Declarations only; src/library/create-gateway.ts implements them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfigIssue, GatewayConfigInput } from './config.ts';
import type { ProviderAdapter } from './providers.ts';
import type { Authenticator, KeyStore } from './keys.ts';
import type { Limiter, UsageStore } from './limits.ts';
import type { AuditSink, Logger, ProviderKeySource, TraceExporter } from './ports.ts';

/** A node:http request function; `next` (Express/Connect style) is called for a path the gateway does not serve. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export interface GatewayOptions {
  /** The config file's JSON shape (docs/config.md), checked as the file is (checkConfig). */
  config: GatewayConfigInput;
  /** What relative paths in the config (dataDir, apiKeyFile, certificates) are relative to; default process.cwd(). */
  baseDir?: string;
  /**
   * The path of the config file the value was read from: GatewayConfigError's
   * message begins with it, log lines name it, reload()'s audit record has it
   * as its target, and the config's relative file paths (apiKeyFile,
   * certificates) resolve against its folder, as for the file. baseDir then
   * defaults to that folder. Default: none ("gateway config" in messages,
   * "embedded" in audit records).
   */
  source?: string;
  /** Where apiKeyEnv and the other *Env settings are looked up; default process.env. */
  env?: Record<string, string | undefined>;
  /**
   * Where log records go; default JSON lines on stdout at the config's log.level
   * (written once per event-loop turn, the rest written by close()), the level
   * following log.level on each accepted reload(). A given logger keeps its own
   * level: reload() does not change it.
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
  /**
   * Probe the process's file descriptors each second while the gateway runs:
   * out of them, node resets new connections without a word, so the start and
   * end of an exhaustion are logged and counted in metrics(). For a process
   * that is mostly this gateway; default false.
   */
  watchDescriptors?: boolean;
}

/**
 * The properties of listen()'s rejection for an address it cannot bind (a host
 * words its own message from them; the message names the config setting).
 */
export interface ListenFailure {
  /** Which listener: the API's, the admin's or the metrics'. */
  readonly listener: 'api' | 'admin' | 'metrics';
  /** `in_use`: another process has it; `forbidden`: a port below 1024 without privileges; `not_local`: not an address of this machine. */
  readonly reason: 'in_use' | 'forbidden' | 'not_local';
  /** The address as `host:port` (`[::1]:8080`). */
  readonly address: string;
  readonly host: string;
  readonly port: number;
}

export interface ListeningAddress {
  /** The address the API listener is bound to (an IPv6 one without brackets). */
  host: string;
  port: number;
  /** The URL base: `http://127.0.0.1:8080` (`https:` with listen.tls). */
  url: string;
  /**
   * The admin listener (dashboard, admin API, /metrics), or null when there is
   * none. bootstrapToken: when no admin password is set in dataDir, a one-time
   * token that signs in once to set one (show it to the operator; the gateway
   * never logs it); null when a password is set.
   */
  admin: { url: string; bootstrapToken: string | null } | null;
  /** The metrics listener (config `metrics`), or null when the config has none. */
  metrics: { url: string } | null;
}

/** Who and what a reload() names in its audit record and log lines. */
export interface ReloadOptions {
  /** The path of the file this config was read from (as GatewayOptions.source, which is the default); the audit record's target ("embedded" without one). */
  source?: string;
  /** The audit record's system actor id; default "library". */
  actor?: string;
  /** What asked for the reload (the record's source: "signal", "admin-ui"); default "reload()". */
  trigger?: string;
}

/** What the gateway is running with now: for a host's banner, health page or watchdog. */
export interface GatewayStatus {
  /** The state backend the config names: "memory" (dataDir's files, counted in memory) or "redis". */
  state: 'memory' | 'redis';
  /** API keys not revoked (expired ones included). */
  keys: number;
  /** Client connections open now on the API and admin listeners (0 for one it does not run). */
  openConnections: { api: number; admin: number };
  inFlight: number;
  draining: boolean;
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
  | {
      ok: false;
      issues: readonly ConfigIssue[];
      /** The refusal in one line, without the source (a status line's words). */
      problem: string;
    };

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
   * listener's routes, /metrics and security headers included), made on the
   * first call; mount it where the path it sees starts at "/". Signing in
   * needs the admin password in dataDir (`portcullis admin set-password`), an
   * admin API token, or the bootstrap token listen() made for the admin
   * listener. Throws after close().
   */
  admin(): RequestHandler;
  /**
   * Listens on config.listen (or options), the admin listener when
   * config.admin.enabled (or options.admin), and the metrics listener when
   * config.metrics is set; the server limits of config.limits. The admin
   * listener, started with no admin password in dataDir, makes a one-time
   * bootstrap token (ListeningAddress.admin). Once per gateway; an address that
   * cannot be bound rejects with an Error naming the setting and carrying
   * ListenFailure's properties, closes what it had bound, and listen() may be
   * called again. A bad metrics token or TLS file rejects with GatewayConfigError.
   */
  listen(options?: ListenOptions): Promise<ListeningAddress>;
  /**
   * Checks and builds `config` (or what a function given in its place
   * returns or resolves to, called in this reload's turn and awaited: the
   * reload, those asked for after it and close() wait for it to settle; a
   * GatewayConfigError it throws or rejects with, for a file it cannot read,
   * refuses the reload with its issues; anything else it throws refuses it
   * naming the thrown value's class and code, not its message, which may quote
   * the file), re-reads the
   * keys and the running TLS listeners' certificate files (listen.tls,
   * admin.tls: a renewed certificate is served to new connections), then swaps
   * all in at once; refused (a bad config, certificate or keys file), nothing
   * changes. Never throws for a config problem. Calls never overlap: one made
   * during another waits its turn. Each is audited (config.reload /
   * config.reload_refused; who and where from: ReloadOptions) and counted in
   * metrics(). Restart-only settings (listen, TLS files' paths, state,
   * telemetry) keep their running value and are named in restartNeeded.
   */
  reload(config: GatewayConfigInput | (() => GatewayConfigInput | Promise<GatewayConfigInput>), options?: ReloadOptions): Promise<ReloadResult>;
  /** Prometheus text exposition of the gateway's metrics (what /metrics answers on the admin and metrics listeners). */
  metrics(): string;
  /** What the gateway runs with now (state backend, keys, connections); during close() too, rejects once it finished. */
  status(): Promise<GatewayStatus>;
  /** Client connections open now on each listener (as status(), without reading the key store). */
  readonly openConnections: GatewayStatus['openConnections'];
  /**
   * Stops accepting (requests via handle() are answered 503 from now on),
   * gives open requests drainTimeoutMs (default config shutdown.drainTimeoutMs),
   * ends those left, writes the usage counters, and closes what the gateway
   * opened (listeners, admin and metrics after the API drained, the state
   * backend, its logger's pending lines).
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
