// `portcullis serve`: load and check the config, open the state backend,
// listen (API and admin listeners, or the sockets systemd passed), tell
// systemd when ready; reload config and keys on SIGHUP; drain and stop on
// SIGTERM/SIGINT.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { CONFIG_ENV, loadConfig } from '../config/config-loader.ts';
import { adminHostNames } from '../config/operations-config.ts';
import { closeSync } from 'node:fs';
import { readAdminCredentials } from '../admin/admin-credentials.ts';
import { createAdminServer, type AdminServer } from '../admin/admin-server.ts';
import { createBootstrapToken } from '../admin/bootstrap-token.ts';
import type { Gateway } from '../gateway/gateway.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { describeStartError, GatewayStartError, openGatewayParts } from '../library/gateway-parts.ts';
import { trustedProxies } from '../http/client-address.ts';
import { healthRoutes } from '../gateway/health.ts';
import { batchLines, createLogger, isLogLevel, type LogLevel } from '../log/logger.ts';
import { createGatewayMetrics } from '../metrics/gateway-metrics.ts';
import { ADMIN_LISTENER, API_LISTENER, listenOn } from '../ops/listen.ts';
import { claimListenFds, SocketActivationError, type ListenFds } from '../ops/socket-activation.ts';
import { createSystemdNotifier } from '../ops/systemd-notify.ts';
import { connectionsForDescriptors, readDescriptorLimit, startDescriptorWatch, type DescriptorWatch } from '../ops/descriptor-watch.ts';
import type { StateBackend } from '../state/state-backend.ts';
import type { CliIo } from './main.ts';
import { describeArgumentProblem } from './argument-problem.ts';
import { loadListenerCertificates, type ListenerCertificates } from './listener-certificates.ts';
import { createReloader } from './serve-reloader.ts';
import { serveBanner } from './serve-banner.ts';
import { closeMetricsListener, metricsHandler, startMetricsListener } from './serve-metrics.ts';
import type { Server } from 'node:http';

const USAGE = `Usage: portcullis serve [--config FILE] [--host HOST] [--port PORT] [--admin-port PORT | --no-admin] [--log-level LEVEL]

Starts the gateway. Without a config file it serves the built-in demo provider
(a deterministic echo, not a language model) as service-chat, service-vision
(for images), service-embed (deterministic embeddings) and service-auto on
127.0.0.1:8080.

Options:
  --config FILE      Config file (default: $${CONFIG_ENV}); see docs/config.md
  --host HOST        Listen address (overrides listen.host)
  --port PORT        Listen port, 0 for any free port (overrides listen.port)
  --admin-port PORT  Admin listener port (dashboard, /metrics), 0 for any free
                     port (overrides admin.port)
  --no-admin         No admin listener (overrides admin.enabled)
  --log-level LEVEL  debug, info, warn or error (overrides log.level, default info);
                     logs are JSON lines on stdout
  -h, --help         Show this help

Signals:
  SIGHUP             Reload the config file, the TLS certificate files and
                     keys.json; a bad config or certificate is refused and the
                     running one keeps serving
  SIGTERM, SIGINT    Stop accepting, let open requests finish within
                     shutdown.drainTimeoutMs, end those left with an error, exit 0;
                     a second signal ends the open requests at once
`;

/** After the API drained: how long admin requests still open (a scrape, a page load) get. */
const ADMIN_CLOSE_MS = 2000;

const SERVE_OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'admin-port': { type: 'string' },
  'no-admin': { type: 'boolean' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function runServeCommand(
  args: string[],
  io: CliIo & { configPath: string | undefined; hintCommand?: string; dataDirOrigin?: (configSource: string | null) => string },
): Promise<number> {
  let values: { host?: string; port?: string; 'admin-port'?: string; 'no-admin'?: boolean; 'log-level'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args, options: SERVE_OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    io.stderr.write(`portcullis serve: ${describeArgumentProblem({ options: SERVE_OPTIONS, allowPositionals: false }, args, err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    io.stdout.write(USAGE);
    return 0;
  }
  const flagLevel = values['log-level'];
  if (flagLevel !== undefined && !isLogLevel(flagLevel)) {
    io.stderr.write(`portcullis serve: --log-level must be debug, info, warn or error\n`);
    return 2;
  }
  const port = portFlag(values.port, '--port', io);
  const adminPort = portFlag(values['admin-port'], '--admin-port', io);
  if (port === null || adminPort === null) return 2;
  if (adminPort !== undefined && values['no-admin'] === true) {
    io.stderr.write(`portcullis serve: --admin-port and --no-admin cannot be combined\n`);
    return 2;
  }

  let config: GatewayConfig;
  try {
    config = loadConfig({ configPath: io.configPath, env: io.env, cwd: io.cwd });
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`portcullis serve: invalid configuration: ${err.message}\n`);
      return 1;
    }
    throw err;
  }

  // As the file says, for the first reload to be compared with (docs/audit.md, config.reload).
  const loaded = config;
  // Unset, limits.maxConnections is what the descriptor limit allows (read once, at start).
  const descriptorLimit = readDescriptorLimit();
  const connectionsConfigured = config.limits.maxConnections !== null;
  const maxConnections = config.limits.maxConnections ?? connectionsForDescriptors(descriptorLimit);
  config = { ...config, limits: { ...config.limits, maxConnections } };
  const apiPort = port ?? config.listen.port;
  const apiHost = values.host ?? config.listen.host;
  // Same port on two different addresses is fine; a wildcard address overlaps every other.
  const sameAddress = apiHost === config.admin.host || isWildcard(apiHost) || isWildcard(config.admin.host);
  if (config.admin.enabled && values['no-admin'] !== true && apiPort !== 0 && apiPort === (adminPort ?? config.admin.port) && sameAddress) {
    io.stderr.write(`portcullis serve: the API and admin listeners would both use port ${apiPort}; give --admin-port another port (0 picks a free one) or --no-admin\n`);
    return 2;
  }

  const adminRuns = config.admin.enabled && values['no-admin'] !== true;
  let certificates: ListenerCertificates;
  try {
    certificates = loadListenerCertificates(config, io.env, adminRuns);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`portcullis serve: invalid configuration: ${err.message}\n`);
      return 1;
    }
    throw err;
  }

  // Lines of one event-loop turn leave in one write (see batchLines).
  const logger = createLogger({ level: flagLevel ?? config.log.level, write: batchLines((text) => io.stdout.write(text)) });

  // Sockets passed by systemd are claimed first, before anything could inherit them.
  let fds: ListenFds;
  try {
    fds = claimListenFds(io.env, process.pid);
  } catch (err) {
    if (err instanceof SocketActivationError) {
      io.stderr.write(`portcullis serve: socket activation: ${err.message}\n`);
      return 1;
    }
    throw err;
  }

  let gateway: Gateway | undefined;
  let admin: AdminServer | null = null;
  let descriptors: DescriptorWatch | undefined;
  const metrics = createGatewayMetrics({
    targets: () => gateway?.targets.health() ?? [],
    isKnownAlias: (alias) => gateway !== undefined && Object.hasOwn(gateway.config.aliases, alias),
    stateBackendUp: () => (state?.health() === 'ok' ? 1 : 0),
    openConnections: () => ({ api: gateway?.openConnections ?? 0, ...(admin === null ? {} : { admin: admin.shell.openConnections }) }),
    descriptorsExhausted: () => (descriptors?.exhausted === true ? 1 : 0),
    keyLookups: () => state?.keys.lookupCounts?.() ?? {},
  });
  let state: StateBackend | undefined;
  let audit: AuditTrail;
  try {
    const parts = await openGatewayParts({
      config,
      logger,
      env: io.env,
      metrics,
      ...(certificates.api === undefined ? {} : { tls: certificates.api }),
      countUnavailable: (operation) => metrics.stateBackendUnavailable(operation),
      countBudgetJournalWriteFailure: () => metrics.budgetJournalWriteFailure(),
      onAuditAppendFailure: () => metrics.auditAppendFailure(),
    });
    ({ backend: state, audit, gateway } = parts);
  } catch (err) {
    if (!(err instanceof GatewayStartError)) throw err;
    io.stderr.write(`portcullis serve: ${describeStartError(err, config)}\n`);
    return 1;
  }
  const backend = state;
  const running = gateway;

  let bootstrapToken: string | null = null;
  let apiAddress: string;
  let adminAddress: string | null = null;
  let metricsListener: { server: Server; address: string } | null = null;
  try {
    apiAddress = await listenOn(running.server, fds.api, port ?? config.listen.port, values.host ?? config.listen.host, API_LISTENER);
    if (adminRuns) {
      const bootstrap = (await readAdminCredentials(config.dataDir)) === null ? createBootstrapToken() : null;
      bootstrapToken = bootstrap?.token ?? null;
      admin = createAdminServer({
        view: () => ({ config: running.config, targets: running.targets }),
        state: backend,
        audit,
        clock: Date.now,
        apiAddress: () => apiAddress,
        dataDir: config.dataDir,
        limits: config.limits,
        trustedProxies: trustedProxies(config.listen.trustedProxies),
        logger,
        bootstrap,
        session: { ttlMs: config.admin.sessionTtlMs, idleMs: config.admin.sessionIdleMs, secureCookies: config.admin.secureCookies },
        allowedHosts: adminHostNames(config.admin),
        extraRoutes: [
          ['GET', '/metrics', metricsHandler(metrics)],
          ...healthRoutes({ targets: () => running.targets.health(), state: backend, draining: () => running.draining, failureDetail: true }),
        ],
        ...(certificates.admin === undefined ? {} : { tls: certificates.admin }),
        onConnectionRefused: () => metrics.connectionRefused('admin'),
        onConnectionReclaimed: () => metrics.connectionReclaimed('admin'),
      });
      adminAddress = await listenOn(admin.server, fds.admin, adminPort ?? config.admin.port, config.admin.host, ADMIN_LISTENER);
      if (!isLoopback(config.admin.host) && config.admin.tls === null && !config.admin.secureCookies) {
        logger.warn('the admin listener is reachable from the network without TLS: passwords and session cookies cross it in clear text', { admin: adminAddress });
      }
    }
    metricsListener = await startMetricsListener(config, io.env, () => metrics.expose(), {
      logger,
      onConnectionRefused: () => metrics.connectionRefused('metrics'),
      onConnectionReclaimed: () => metrics.connectionReclaimed('metrics'),
    });
    if (!adminRuns && fds.admin !== undefined) {
      logger.warn(`an admin socket was passed but ${values['no-admin'] === true ? '--no-admin was given' : 'admin.enabled is false'}; closing it`, { fd: fds.admin });
      closeSync(fds.admin);
    }
  } catch (err) {
    running.server.close();
    admin?.server.close();
    metricsListener?.server.close();
    await backend.close();
    io.stderr.write(`portcullis serve: ${err instanceof ConfigError ? 'invalid configuration' : 'cannot listen'}: ${(err as Error).message}\n`);
    return 1;
  }

  const notifier = createSystemdNotifier({ env: io.env, logger });
  descriptors = startDescriptorWatch({
    logger,
    maxConnections,
    configured: connectionsConfigured,
    limit: descriptorLimit,
    openConnections: () => ({ api: running.openConnections, ...(admin === null ? {} : { admin: admin.shell.openConnections }) }),
    onExhausted: () => metrics.descriptorExhaustion(),
  });
  // Signal handlers first, so a SIGTERM or SIGHUP that follows the banner at
  // once is handled, never the default kill.
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  let stopping = false;
  const readyStatus = `listening on ${apiAddress}/v1`;
  const reloader = createReloader({
    gateway: running,
    keys: backend.keys,
    logger,
    audit,
    load: () => loadConfig({ configPath: io.configPath, env: io.env, cwd: io.cwd }),
    loaded,
    source: () => configSource(io),
    // --log-level wins over the file for the life of the process.
    levelFromFlag: flagLevel as LogLevel | undefined,
    stopping: () => stopping,
    certificates: {
      prepare: () => {
        const next = certificates.prepareReload();
        return { commit: () => next.commit((at, material) => (at === 'listen.tls' ? running.setTls(material) : admin?.shell.setTls(material)), logger) };
      },
    },
    onOutcome: (outcome) => {
      metrics.configReload(outcome.ok ? 'success' : 'failure');
      void notifier.ready(outcome.ok ? `${readyStatus}; configuration reloaded` : `${readyStatus}; reload refused: ${outcome.problem}`);
    },
  });
  const onHup = (): void => {
    if (stopping) return;
    void notifier.reloading('reloading configuration');
    reloader.request();
  };
  const onInt = (): void => stop('SIGINT');
  const onTerm = (): void => stop('SIGTERM');
  const stop = (signal: string): void => {
    // A second signal does not kill: it ends what is still open now, each
    // stream with its error frame, and the shutdown completes as usual.
    if (stopping) {
      logger.warn('second signal; ending open requests now', { signal, inFlight: running.inFlight });
      if (running.inFlight > 0) io.stderr.write(`Ending ${plural(running.inFlight, 'open request')} now.\n`);
      running.endShutdownNow();
      admin?.shell.endDrainNow();
      return;
    }
    stopping = true;
    const drainTimeoutMs = running.config.shutdown.drainTimeoutMs;
    const inFlight = running.inFlight;
    // shutdown() closes the listener at once: once this line is out, new connections are refused.
    const drained = running.shutdown(drainTimeoutMs);
    void notifier.stopping(`draining ${inFlight} requests`);
    logger.info('shutting down', { signal, drainTimeoutMs, inFlight });
    // For a person at a terminal: the JSON lines above say nothing of the wait.
    io.stderr.write(
      inFlight === 0
        ? 'Shutting down.\n'
        : `Shutting down: waiting up to ${Math.ceil(drainTimeoutMs / 1000)} s for ${plural(inFlight, 'open request')} to finish; ` +
            `${signal === 'SIGINT' ? 'press Ctrl-C again' : `send ${signal} again`} to end ${inFlight === 1 ? 'it' : 'them'} now.\n`,
    );
    // The admin listener stays up while the API drains, so /readyz says
    // "draining" and /metrics can be scraped to the end; then it closes too.
    void drained
      .then(async (report) => {
        logger.info('drained', { ...report });
        if (report.finished + report.endedWithError > 0) {
          io.stderr.write(`Stopped: ${plural(report.finished, 'request')} finished, ${report.endedWithError} ended early.\n`);
        }
        // The last status systemd shows for the unit, instead of "draining N requests".
        await notifier.status(`stopped: ${plural(report.finished, 'request')} finished, ${report.endedWithError} ended early`);
        await admin?.shell.drain(ADMIN_CLOSE_MS);
        await closeMetricsListener(metricsListener);
        // The token uses counted this minute, appended while the chain is still open.
        await admin?.tokenUses.close();
        descriptors?.stop();
        return backend.close();
      })
      .then(
        () => 0,
        (err: unknown) => {
          logger.error('shutdown failed', { error: err instanceof Error ? err.message : String(err) });
          return 1;
        },
      )
      .then((code) => {
        process.off('SIGHUP', onHup);
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        resolveDone(code);
      });
  };
  process.on('SIGHUP', onHup);
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);

  const keyCount = (await backend.keys.list()).filter((k) => k.revokedAt === null).length;
  io.stderr.write(
    serveBanner({
      config,
      apiAddress,
      adminAddress,
      metricsAddress: metricsListener?.address ?? null,
      socketFromSystemd: fds.api !== undefined,
      stateKind: backend.kind,
      dataDirOrigin: io.dataDirOrigin === undefined ? null : io.dataDirOrigin(config.source),
      keyCount,
      bootstrapToken,
      cli: io.hintCommand ?? 'portcullis',
    }),
  );
  logger.info('listening', {
    api: apiAddress,
    admin: adminAddress,
    ...(metricsListener === null ? {} : { metrics: metricsListener.address }),
    socketActivation: fds.api !== undefined || fds.admin !== undefined,
    config: config.source ?? 'embedded',
    state: backend.kind,
  });
  certificates.logServed(logger);
  void notifier.ready(readyStatus);
  return done;
}

/** A port flag's value: undefined when absent, null (after saying why) when invalid. */
function portFlag(value: string | undefined, flag: string, io: CliIo): number | undefined | null {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value) || port > 65535) {
    io.stderr.write(`portcullis serve: ${flag} must be an integer from 0 to 65535\n`);
    return null;
  }
  return port;
}


function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** The config file a reload reads, resolved as loadConfig resolves it; null for the embedded default. */
function configSource(io: CliIo & { configPath: string | undefined }): string | null {
  const given = io.configPath ?? io.env[CONFIG_ENV];
  return given === undefined || given === '' ? null : path.resolve(io.cwd, given);
}

