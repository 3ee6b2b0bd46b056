// The embedded gateway's life once its parts are open: the listeners (API,
// admin, metrics) listen() starts, the reloads (config, certificates and keys,
// all or nothing), the status a host shows, and close(), which drains the API
// first and closes the rest after it.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DrainReport, Gateway, GatewayStatus, ListenOptions, ListeningAddress, ReloadOptions, ReloadResult, RequestHandler } from '../api/gateway.ts';
import { readAdminCredentials } from '../admin/admin-credentials.ts';
import { createAdminServer, type AdminServer } from '../admin/admin-server.ts';
import { createBootstrapToken, type BootstrapToken } from '../admin/bootstrap-token.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { adminHostNames } from '../config/operations-config.ts';
import type { Gateway as InternalGateway } from '../gateway/gateway.ts';
import { healthRoutes } from '../gateway/health.ts';
import { trustedProxies } from '../http/client-address.ts';
import type { GuardedLogger } from '../log/guarded-logger.ts';
import type { BatchedLines, Logger, LogLevel } from '../log/logger.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { startDescriptorWatch, type DescriptorWatch } from '../ops/descriptor-watch.ts';
import { listenOn, type Listener } from '../ops/listen.ts';
import type { StateBackend } from '../state/state-backend.ts';
import { ConfigIssueCode } from '../config/config-issues.ts';
import { GatewayConfigError } from './check-config.ts';
import { drainAuditSink } from './compose-state.ts';
import { plainIssues } from './plain-issues.ts';
import { loadListenerCertificates, type ListenerCertificates } from './listener-certificates.ts';
import { closeMetricsListener, metricsHandler, startMetricsListener } from './metrics-endpoint.ts';
import { createReloadSequence } from './reload-sequence.ts';

/** After the API drained: how long admin requests still open (a scrape, a page load) get. */
const ADMIN_CLOSE_MS = 2000;

/** What a taken or forbidden address names: the listener, and the settings that move it for a host. */
const API_LISTENER: Listener = { id: 'api', name: 'the API listener', settings: "listen.port or listen()'s port" };
const ADMIN_LISTENER: Listener = { id: 'admin', name: 'the admin listener', settings: "admin.port or listen()'s adminPort, or listen({admin: false})" };

/** Why a reload() after close() is refused. */
const CLOSED = 'the gateway is closed: make a new gateway to reload';

/** Who a reload() is, in its audit record, unless the host names itself. */
const LIBRARY_ACTOR = 'library';
const LIBRARY_TRIGGER = 'reload()';

/** What the metrics read of the running gateway, set as listen() starts what they count. */
export interface GatewayHooks {
  descriptors: { readonly exhausted: boolean };
  /** Open admin connections; null while there is no admin listener. */
  adminConnections: () => number | null;
  /** The level of a logger the library made, following log.level on each accepted reload. */
  setLevel?: (level: LogLevel) => void;
}

export interface EmbeddedParts {
  gateway: InternalGateway;
  backend: StateBackend;
  audit: AuditTrail;
  logger: Logger;
  /** The stdout sink of a logger made here, flushed by close(). */
  lines: BatchedLines | null;
  /** The host's logger as guarded by createGateway (its failures counted), told at close(). */
  guarded: GuardedLogger | null;
  /** The config as given (before the derived maxConnections): what the first reload is compared with. */
  loaded: GatewayConfig;
  config: GatewayConfig;
  parse: (value: unknown, source?: string) => GatewayConfig;
  env: NodeJS.ProcessEnv;
  /** GatewayOptions.source, resolved. */
  named: string | undefined;
  metrics: GatewayMetrics;
  certificates: ListenerCertificates;
  descriptorLimit: number | null;
  hooks: GatewayHooks;
}

/**
 * What the host's reader gives (awaited: a reader may read its file
 * asynchronously). A reader that throws or rejects could not give a config:
 * refused as a bad one is, with a GatewayConfigError's issues, or naming what
 * else it threw by its class and code only (its message may quote the file,
 * secrets included).
 */
async function readHostConfig(reader: () => unknown, source: string | undefined): Promise<unknown> {
  try {
    return await reader();
  } catch (err) {
    if (err instanceof GatewayConfigError) throw new ConfigError(source ?? null, [...err.issues]);
    throw new ConfigError(source ?? null, '', `the config reader failed with ${thrownName(err)} (its message is not shown: it may quote the file); fix the reader or what it reads`);
  }
}

/** A thrown value's class, with its code when it has a plain one ("Error (ENOENT)"). */
function thrownName(err: unknown): string {
  if (!(err instanceof Error)) return err === null ? 'null' : typeof err;
  // A name or code that is not a plain identifier could carry anything: left out.
  const name = /^[A-Za-z_$][\w$]{0,60}$/.test(err.name) ? err.name : 'Error';
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,40}$/.test(code) ? `${name} (${code})` : name;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export function embeddedGateway(parts: EmbeddedParts): Gateway {
  const { gateway: internal, backend, audit, logger, config, env, metrics, hooks } = parts;
  let certificates = parts.certificates;
  let adminServer: AdminServer | null = null;
  /** The admin listener's one-time token, made by listen() as the admin listener starts when no password is set. */
  let bootstrap: BootstrapToken | null = null;
  /** What the admin server checks: the token listen() makes, also for an admin server admin() made before it. */
  const currentBootstrap: BootstrapToken = {
    get token() {
      return bootstrap?.token ?? '';
    },
    consume: (candidate) => bootstrap?.consume(candidate) ?? false,
    get consumed() {
      return bootstrap?.consumed ?? false;
    },
  };
  let metricsListener: { server: Server; address: string } | null = null;
  let descriptors: DescriptorWatch | null = null;
  let closing: Promise<DrainReport> | null = null;
  /** The listen() still running: close() lets it settle first, so it never waits on a listener close() let go. */
  let binding: Promise<unknown> | null = null;
  /** True once close() closed the state backend: nothing left to report on. */
  let closed = false;
  hooks.adminConnections = () => (adminServer === null ? null : adminServer.shell.openConnections);
  const reloads = createReloadSequence({
    gateway: internal,
    keys: backend.keys,
    logger,
    audit,
    actor: { kind: 'system', id: LIBRARY_ACTOR },
    origin: LIBRARY_TRIGGER,
    target: () => parts.named ?? 'embedded',
    loaded: parts.loaded,
    ...(hooks.setLevel === undefined ? {} : { setLevel: hooks.setLevel }),
    stopping: () => closing !== null,
    onOutcome: (outcome) => metrics.configReload(outcome.ok ? 'success' : 'failure'),
  });

  const makeAdmin = (apiAddress: () => string): AdminServer =>
    createAdminServer({
      view: () => ({ config: internal.config, targets: internal.targets }),
      state: backend,
      audit,
      clock: Date.now,
      apiAddress,
      dataDir: config.dataDir,
      limits: config.limits,
      trustedProxies: trustedProxies(config.listen.trustedProxies),
      logger,
      bootstrap: currentBootstrap,
      session: { ttlMs: config.admin.sessionTtlMs, idleMs: config.admin.sessionIdleMs, secureCookies: config.admin.secureCookies },
      allowedHosts: adminHostNames(config.admin),
      extraRoutes: [
        ['GET', '/metrics', metricsHandler(metrics)],
        ...healthRoutes({ targets: () => internal.targets.health(), state: backend, draining: () => internal.draining, failureDetail: true }),
      ],
      ...(certificates.admin === undefined ? {} : { tls: certificates.admin }),
      onConnectionRefused: () => metrics.connectionRefused('admin'),
      onConnectionReclaimed: () => metrics.connectionReclaimed('admin'),
      env,
    });

  let apiUrl = '';
  let listening = false;
  const handle: RequestHandler = (req, res, next) => internal.handle(req, res, next);

  /** A ConfigError found while listening, as the host sees it. */
  const asConfigError = (err: unknown): unknown => (err instanceof ConfigError ? new GatewayConfigError(plainIssues(err.issues), parts.named) : err);

  /** admin.tls's files, read once something makes the admin server (throws ConfigError). */
  const readAdminCertificates = (): void => {
    if (config.admin.tls !== null && certificates.admin === undefined) certificates = loadListenerCertificates(config, env, true);
  };

  function listen(options: ListenOptions = {}): Promise<ListeningAddress> {
    if (closing !== null) return Promise.reject(new Error('listen() after close(): make a new gateway'));
    if (listening) return Promise.reject(new Error('listen() was called already: a gateway has one API listener (serve more addresses from your own server with handle())'));
    listening = true;
    let running = true;
    // Cleared before the caller's await continues, so a close() right after listen() resolved drains at once.
    const started = (async () => {
      try {
        return await bind(options);
      } finally {
        running = false;
        binding = null;
      }
    })();
    if (running) binding = started.then(() => undefined, () => undefined);
    return started;
  }

  /** After each wait in listen(): a close() that began meanwhile gets what was bound let go, and listen() rejects. */
  const stillOpen = (): void => {
    if (closing !== null) throw new Error('the gateway was closed while listen() ran: nothing listens; make a new gateway to listen again');
  };

  async function bind(options: ListenOptions): Promise<ListeningAddress> {
    const adminRuns = options.admin ?? config.admin.enabled;
    const undo = (): void => {
      // What was bound is let go, so the host may try again elsewhere.
      listening = false;
      internal.server.close();
      adminServer?.server.close();
      if (metricsListener !== null) void closeMetricsListener(metricsListener);
      metricsListener = null;
    };
    let url: string;
    let admin: ListeningAddress['admin'] = null;
    try {
      // admin.tls is read only for an admin listener that runs.
      if (adminRuns) readAdminCertificates();
      url = await listenOn(internal.server, options.fd, options.port ?? config.listen.port, options.host ?? config.listen.host, API_LISTENER);
      stillOpen();
      apiUrl = url;
      if (adminRuns) {
        if (bootstrap === null) {
          // No admin password yet: a one-time token signs in once to set one (the host shows it; never logged).
          bootstrap = (await readAdminCredentials(config.dataDir)) === null ? createBootstrapToken() : null;
          stillOpen();
        }
        adminServer ??= makeAdmin(() => apiUrl);
        const adminUrl = await listenOn(adminServer.server, options.adminFd, options.adminPort ?? config.admin.port, config.admin.host, ADMIN_LISTENER);
        stillOpen();
        admin = { url: adminUrl, bootstrapToken: bootstrap?.token ?? null };
        if (!isLoopback(config.admin.host) && config.admin.tls === null && !config.admin.secureCookies) {
          logger.warn('the admin listener is reachable from the network without TLS: passwords and session cookies cross it in clear text', { admin: adminUrl });
        }
      }
      metricsListener = await startMetricsListener(config, env, () => metrics.expose(), {
        logger,
        onConnectionRefused: () => metrics.connectionRefused('metrics'),
        onConnectionReclaimed: () => metrics.connectionReclaimed('metrics'),
      });
      stillOpen();
    } catch (err) {
      undo();
      throw asConfigError(err);
    }
    if (options.watchDescriptors === true && descriptors === null) {
      const watch = startDescriptorWatch({
        logger,
        maxConnections: config.limits.maxConnections ?? 0,
        configured: parts.loaded.limits.maxConnections !== null,
        limit: parts.descriptorLimit,
        openConnections: () => {
          const adminOpen = hooks.adminConnections();
          return { api: internal.openConnections, ...(adminOpen === null ? {} : { admin: adminOpen }) };
        },
        onExhausted: () => metrics.descriptorExhaustion(),
      });
      descriptors = watch;
      hooks.descriptors = watch;
    }
    certificates.logServed(logger);
    const address = internal.server.address();
    const bound = typeof address === 'object' && address !== null ? (address as AddressInfo) : null;
    return {
      host: bound?.address ?? (options.host ?? config.listen.host),
      port: bound?.port ?? 0,
      url,
      admin,
      metrics: metricsListener === null ? null : { url: metricsListener.address },
    };
  }

  async function reload(value: unknown, options: ReloadOptions = {}): Promise<ReloadResult> {
    // Nothing is read, swapped or audited: the chain may be closed, or another gateway's by now.
    if (closing !== null) return { ok: false, issues: [{ code: ConfigIssueCode.InvalidValue, path: '', message: CLOSED }], problem: CLOSED };
    const source = options.source ?? parts.named;
    const outcome = await reloads.run({
      load: async () => {
        const given = typeof value === 'function' ? await readHostConfig(value as () => unknown, source) : value;
        return source === undefined ? parts.parse(given) : parts.parse(given, source);
      },
      // The running TLS listeners' files, read again and swapped in with the rest.
      extra: () => {
        const next = certificates.prepareReload();
        return {
          commit: () =>
            next.commit((at, material) => (at === 'listen.tls' ? internal.setTls(material) : adminServer?.shell.setTls(material)), logger),
        };
      },
      who: {
        actor: { kind: 'system', id: options.actor ?? LIBRARY_ACTOR },
        origin: options.trigger ?? LIBRARY_TRIGGER,
        target: source ?? 'embedded',
      },
    });
    return outcome.ok
      ? { ok: true, aliases: outcome.aliases, restartNeeded: outcome.restartNeeded }
      : { ok: false, issues: plainIssues(outcome.issues), problem: outcome.problem };
  }

  function close(options: { drainTimeoutMs?: number } = {}): Promise<DrainReport> {
    closing ??= (async () => {
      // A listen() under way settles first (it lets go of what it bound), so the drain below closes a server that is not binding.
      // Without one, the drain begins in this call (draining is true when close() returns).
      if (binding !== null) await binding;
      const drainTimeoutMs = options.drainTimeoutMs ?? internal.config.shutdown.drainTimeoutMs;
      const began = Date.now();
      const report = await internal.shutdown(drainTimeoutMs);
      // The admin and metrics listeners stay up while the API drains (/readyz says "draining", /metrics is scraped to the end).
      if (adminServer !== null) await adminServer.shell.drain(ADMIN_CLOSE_MS);
      await closeMetricsListener(metricsListener);
      // The token uses counted this minute, appended while the chain is still open.
      if (adminServer !== null) await adminServer.tokenUses.close();
      descriptors?.stop();
      // A reload that began before close() leaves its record while the chain is open.
      await reloads.settled();
      // The host's sink gets what is left of the drain time for the records it has not taken (what it never confirms is logged).
      await drainAuditSink(audit, Math.max(0, drainTimeoutMs - (Date.now() - began)));
      try {
        closed = true;
        await backend.close();
      } finally {
        parts.lines?.flush();
        parts.guarded?.reportFailures();
      }
      return { finished: report.finished, endedWithError: report.endedWithError, refused: report.refused };
    })();
    return closing;
  }

  const openConnections = (): GatewayStatus['openConnections'] => ({ api: internal.openConnections, admin: hooks.adminConnections() ?? 0 });

  return {
    handle,
    admin() {
      if (closing !== null) throw new Error('admin() after close(): make a new gateway');
      if (adminServer === null) {
        try {
          readAdminCertificates();
        } catch (err) {
          throw asConfigError(err);
        }
        adminServer = makeAdmin(() => apiUrl);
      }
      const shell = adminServer.shell;
      // The admin routes own every path they are mounted at (the dashboard answers the rest): next is not called.
      return (req, res) => shell.handle(req, res, req.url ?? '/');
    },
    listen,
    reload,
    close,
    closeNow() {
      internal.endShutdownNow();
      adminServer?.shell.endDrainNow();
    },
    metrics: () => metrics.expose(),
    async status() {
      if (closed) throw new Error('status() after close() finished: make a new gateway');
      const keys = (await backend.keys.list()).filter((k) => k.revokedAt === null).length;
      return { state: backend.kind, keys, openConnections: openConnections(), inFlight: internal.inFlight, draining: internal.draining };
    },
    get openConnections() {
      return openConnections();
    },
    get draining() {
      return internal.draining;
    },
    get inFlight() {
      return internal.inFlight;
    },
  };
}
