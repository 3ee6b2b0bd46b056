// Assembles the gateway from a checked config: the serving state (providers,
// alias routes, handlers), key store, usage ledger, routes, HTTP server.
// Everything here is wiring and lifecycle; the policy lives in the modules it
// connects.
//
// Reload: a new configuration is built whole (serving-state.ts) and then
// replaces one reference. The routes read that reference when a request
// starts, so a request runs to its end on the state it started with, and a
// new configuration that cannot be built changes nothing. Circuit breakers
// start closed in the new state: a reload is often the fix for a failing
// upstream (a new URL or key), and an upstream still failing opens its new
// breaker after the same number of failures as before.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatewayConfig } from '../config/config.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import { createRouter } from '../http/router.ts';
import { EMBEDDINGS_PATH } from './embeddings-endpoint.ts';
import { createHttpShell, type DrainReport } from '../http/server.ts';
import { trustedProxies } from '../http/client-address.ts';
import type { RouteHandler } from '../http/request-context.ts';
import type { AccessLine } from '../log/access-line.ts';
import type { Logger } from '../log/logger.ts';
import { listAliases } from '../routing/alias-routing.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { ResponseStore } from '../state/response-store-port.ts';
import { messagesErrorShapeFor } from './messages-endpoint.ts';
import { createStoredResponsesHandlers, STORED_RESPONSE_PATH } from './stored-responses.ts';
import type { StateBackend } from '../state/state-backend.ts';
import { createUsageLedger, type UsageLedger } from '../usage/usage-ledger.ts';
import { createUpstreamFailureLog } from '../upstream/failure-log.ts';
import { createGatewayTracer, traceShutdownMs } from '../telemetry/gateway-telemetry.ts';
import type { Authenticator } from '../api/keys.ts';
import type { ProviderKeySource, TraceExporter } from '../api/ports.ts';
import { hostAuthenticator } from './auth.ts';
import type { AliasTargets } from '../routing/alias-targets.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { healthRoutes } from './health.ts';
import { createPermitKeeper } from './permit-keeper.ts';
import { keepRestartOnly, restartOnlyChanges, type RestartOnlyChange } from './restart-settings.ts';
import { buildServingState, type ServingDeps, type ServingState } from './serving-state.ts';

interface GatewayOptions {
  config: GatewayConfig;
  /** Keys, limits and usage: in-process files and memory, or a shared Redis. */
  state: StateBackend;
  /** Stored Responses answers (state.openResponseStore), when responses.store is on; a restart setting. */
  responseStore?: ResponseStore;
  logger: Logger;
  /** The process's metrics (kept across reloads); none in most tests. */
  metrics?: GatewayMetrics;
  /** The clock and timers of key expiry, limits, permit renewals, breakers, upstream timeouts, retries, the usage flush and the HTTP shell (default: the system's). */
  scheduler?: Scheduler;
  env?: NodeJS.ProcessEnv;
  /** Seconds since the epoch, used as `created` in the alias listing. */
  loadedAt?: number;
  /** How often per-key usage is added to the state backend's usage store (default 5 s), on the scheduler. */
  usageFlushMs?: number;
  /** Called with each access-log line's fields (metrics). */
  onRequestDone?: (line: AccessLine) => void;
  /** At most one "upstream failed" line per target and cause in this many ms (default 10 s). */
  upstreamFailureLogIntervalMs?: number;
  /** Serve HTTPS with listen.tls's material (loadListenerTls). */
  tls?: ListenerTlsMaterial;
  /** The prefix handle() serves the routes under ("/llm"); default "" (see Gateway.handle). */
  basePath?: string;
  /** A host's authenticator: decides every API request's key (state.keys is then not asked for requests). */
  authenticate?: Authenticator | undefined;
  /** A host's upstream keys, asked on every exchange over the config's. */
  providerKey?: ProviderKeySource | undefined;
  /** A host's span exporter in place of the OTLP POST. */
  traceExporter?: TraceExporter | undefined;
}

export interface ReloadSummary {
  source: string | null;
  /** Aliases served after the reload, service-auto included. */
  aliases: number;
  /** Settings the new file changes that keep their running value until a restart. */
  restartNeeded: RestartOnlyChange[];
}

/** A checked and fully built new configuration, not yet serving. */
export interface PreparedReload {
  readonly summary: ReloadSummary;
  /** Swaps it in: requests that start from now on use it. Logs the outcome. */
  commit(): void;
}

export interface Gateway {
  /** The standalone listener: not listening until the caller listens on it. */
  server: Server;
  /**
   * Serves a request another node:http or node:https server received, on
   * its plain ServerResponse, with the listener's request path: request id,
   * header checks, client address (listen.trustedProxies) and certificate,
   * body limits, the error boundary, the write-stall watch and the access
   * line. A path under basePath is routed with the prefix taken off (an
   * Express mount that takes it off req.url itself needs basePath ""), while
   * the access line and error messages name the path the client sent
   * (req.originalUrl ?? req.url, without the query); a path
   * outside it, or one no route knows: `next()` when given (the host's own
   * routes go on), else the gateway's 404. A request after shutdown() began
   * is answered 503; shutdown() waits for and ends these requests as for the
   * listener's, and never touches the host's server. TLS is the host's
   * server's: a client certificate it let through unverified is served, and
   * the Authenticator sees it with verified: false (the listener's clientAuth
   * refusal is the listener's alone).
   *
   * What the listener does at the connection, the host's server must do
   * itself: limits.maxHeaderBytes (maxHeaderSize), headersTimeoutMs,
   * requestTimeoutMs and keepAliveTimeoutMs, a connection cap
   * (maxConnections), answering node's 'clientError', CONNECT and Expect.
   * Nothing may read the body before handle() (no body parser in front of it).
   */
  handle(req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  usage: UsageLedger;
  /** The configuration new requests are served with (restart-only settings as running). */
  readonly config: GatewayConfig;
  /** The alias targets of that configuration (target health for the dashboard and metrics). */
  readonly targets: AliasTargets;
  /** Requests being handled now. */
  readonly inFlight: number;
  /** Client connections open now on the API listener. */
  readonly openConnections: number;
  /** True once shutdown() began (/readyz answers 503). */
  readonly draining: boolean;
  /**
   * Adds the pending usage counters to the state backend's usage store now:
   * the function the gateway runs every `usageFlushMs` and at shutdown.
   */
  flushUsage(): Promise<void>;
  /** Checks and builds `config` without serving it; throws ConfigError (a missing upstream credential). */
  prepareReload(config: GatewayConfig): PreparedReload;
  /**
   * Stops accepting and drains (see HttpShell.drain): open requests and streams,
   * those that came through handle() included, get `drainTimeoutMs` to finish,
   * those left are ended with an error frame or a 503; then usage is flushed.
   * Later calls return the same promise.
   */
  shutdown(drainTimeoutMs: number): Promise<DrainReport>;
  /** During shutdown: end the open requests now instead of at the deadline. */
  endShutdownNow(): void;
  /** New certificates for new connections (HttpShell.setTls); only when started with `tls`. */
  setTls(material: ListenerTlsMaterial): void;
  /** shutdown() with no deadline: waits for every open request. */
  close(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const basePath = checkedBasePath(options.basePath ?? '');
  const { logger } = options;
  const usage = createUsageLedger();
  const { state, metrics } = options;
  const scheduler = options.scheduler ?? systemScheduler;
  const clock = scheduler.now;
  const upstreamFailures = createUpstreamFailureLog(logger, {
    clock,
    ...(options.upstreamFailureLogIntervalMs === undefined ? {} : { intervalMs: options.upstreamFailureLogIntervalMs }),
  });
  const permits = createPermitKeeper(state.limiter, logger, scheduler);
  // telemetry: one tracer for the process (telemetry is restart-only); throws ConfigError for a missing export header.
  const tracer = createGatewayTracer(options.config, { logger, env: options.env ?? process.env, onExported: (n) => metrics?.traceSpansExported(n), onDropped: (reason, n) => metrics?.traceSpansDropped(reason, n), exporter: options.traceExporter });
  const keys = options.authenticate === undefined ? state.keys : hostAuthenticator(options.authenticate, logger);
  const deps: ServingDeps = { responseStore: options.responseStore, keys, usage, logger, env: options.env ?? process.env, limiter: state.limiter, permits, metrics, upstreamFailures, scheduler, tracer, providerKey: options.providerKey };
  // The settings only a restart changes stay these for the life of the process.
  const started = options.config;
  let serving: ServingState = buildServingState(started, deps, options.loadedAt ?? Math.floor(Date.now() / 1000));

  const router = createRouter<RouteHandler>();
  // `serving` is read once, as the request starts; the handler holds its state to the end.
  router.add('POST', '/v1/chat/completions', (ctx) => serving.chat(ctx));
  router.add('POST', '/v1/messages', (ctx) => serving.messages(ctx));
  router.add('POST', '/v1/messages/count_tokens', (ctx) => serving.countTokens(ctx));
  router.add('POST', '/v1/responses', (ctx) => serving.responses(ctx));
  router.add('POST', EMBEDDINGS_PATH, (ctx) => serving.embeddings(ctx));
  const stored = createStoredResponsesHandlers(keys, options.responseStore, clock);
  router.add('GET', STORED_RESPONSE_PATH, stored.get);
  router.add('DELETE', STORED_RESPONSE_PATH, stored.delete);
  router.add('GET', '/v1/models', (ctx) => serving.models(ctx));
  let draining = false;
  for (const [method, path, handler] of healthRoutes({ targets: () => serving.targets.health(), state, draining: () => draining })) {
    router.add(method, path, handler);
  }
  const onRequestDone = options.onRequestDone;
  const shell = createHttpShell({
    router,
    limits: started.limits,
    logger,
    scheduler,
    name: 'api',
    trustedProxies: trustedProxies(started.listen.trustedProxies),
    errorShapeFor: messagesErrorShapeFor,
    ...(metrics === undefined ? {} : { onConnectionRefused: () => metrics.connectionRefused('api'), onConnectionReclaimed: () => metrics.connectionReclaimed('api') }),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(metrics === undefined && onRequestDone === undefined
      ? {}
      : {
          onRequestDone: (line: AccessLine) => {
            metrics?.requestDone(line);
            onRequestDone?.(line);
          },
        }),
  });
  const server = shell.server;

  const flushPending = async (): Promise<void> => {
    if (!usage.dirty()) return;
    const pending = usage.drain();
    try {
      await state.usage.add(pending, clock());
    } catch (err) {
      usage.restore(pending);
      logger.error('usage flush failed; counters kept for the next flush', { error: err instanceof Error ? err.message : String(err) });
    }
  };
  // Flushes run one after another: one asked for while the timer's is writing
  // (flushUsage, the drain at close) waits for it, so it returns only once the
  // counters recorded before it was asked for are in the store.
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => (flushing = flushing.then(flushPending));
  const timer = scheduler.setInterval(() => void flush(), options.usageFlushMs ?? 5000);
  timer.unref();

  function prepareReload(next: GatewayConfig): PreparedReload {
    const effective = keepRestartOnly(started, next);
    const built = buildServingState(effective, deps, Math.floor(Date.now() / 1000));
    const summary: ReloadSummary = { source: next.source, aliases: listAliases(effective).length, restartNeeded: restartOnlyChanges(started, next) };
    let committed = false;
    return {
      summary,
      commit() {
        if (committed) return;
        committed = true;
        shell.applyLimits(effective.limits);
        serving = built;
        for (const change of summary.restartNeeded) {
          logger.warn('needs a restart; still using the running value', { ...change });
        }
        logger.info('configuration reloaded', {
          source: summary.source ?? 'embedded',
          aliases: summary.aliases,
          restartNeeded: summary.restartNeeded.length,
        });
      },
    };
  }

  let stopped: Promise<DrainReport> | null = null;
  function shutdown(drainTimeoutMs: number): Promise<DrainReport> {
    draining = true;
    stopped ??= shell.drain(drainTimeoutMs).then(async (report) => {
      scheduler.clearTimer(timer);
      // Every request has closed (and settled): nothing left to renew.
      permits.close();
      await flush();
      // telemetry: the last spans go out within the export timeout, or are counted as dropped.
      await tracer.shutdown(traceShutdownMs(started));
      return report;
    });
    return stopped;
  }

  function handle(req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void {
    const url = underBasePath(req.url ?? '/', basePath);
    if (next !== undefined && (url === null || router.match(req.method ?? 'GET', pathOf(url)).kind === 'not_found')) {
      next();
      return;
    }
    shell.handle(req, res, url);
  }

  return {
    server,
    handle,
    usage,
    get config() {
      return serving.config;
    },
    get targets() {
      return serving.targets;
    },
    get inFlight() {
      return shell.inFlight;
    },
    get openConnections() {
      return shell.openConnections;
    },
    get draining() {
      return draining;
    },
    flushUsage: flush,
    prepareReload,
    shutdown,
    endShutdownNow: () => shell.endDrainNow(),
    setTls: (material) => shell.setTls(material),
    async close() {
      await shutdown(Number.POSITIVE_INFINITY);
    },
  };
}

/** Why a basePath cannot be used (it must be "" or a path that starts with "/" and has no trailing "/", "?" or "#"), or null. */
export function basePathProblem(basePath: string): string | null {
  if (basePath === '') return null;
  if (!basePath.startsWith('/')) return `basePath must start with "/" (got ${JSON.stringify(basePath)})`;
  if (basePath.endsWith('/')) return `basePath must not end with "/" (got ${JSON.stringify(basePath)}); "" serves at the root`;
  if (/[?#]/.test(basePath)) return `basePath must be a path without "?" or "#" (got ${JSON.stringify(basePath)})`;
  return null;
}

/** `basePath` as given, when it is one (basePathProblem). */
function checkedBasePath(basePath: string): string {
  if (basePathProblem(basePath) !== null) {
    throw new Error(`basePath "${basePath}" must be "" or a path that starts with "/" and has no trailing "/", "?" or "#" (for example "/llm")`);
  }
  return basePath;
}

/** `url` with `basePath` taken off ("/" for the prefix alone); null when the path is not under it. */
function underBasePath(url: string, basePath: string): string | null {
  if (basePath === '') return url;
  if (!url.startsWith(basePath)) return null;
  const rest = url.slice(basePath.length);
  if (rest === '' || rest.startsWith('?')) return `/${rest}`;
  return rest.startsWith('/') ? rest : null;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
