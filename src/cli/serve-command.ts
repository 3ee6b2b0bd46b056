// `portcullis serve`: a host of the public API like any other. It loads and
// checks the config file, makes the gateway with createGateway, listens (API,
// admin and metrics listeners, or the sockets systemd passed), tells systemd
// when ready; reloads on SIGHUP; drains and stops on SIGTERM/SIGINT. What is
// the process's own stays here: flags, signals, socket activation, systemd.
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Gateway, ListeningAddress } from '../api/gateway.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { CONFIG_ENV, DATA_DIR_ENV, loadConfig, readConfigValue } from '../config/config-loader.ts';
import { parseConfig } from '../config/config-parser.ts';
import { closeSync } from 'node:fs';
import { GatewayConfigError } from '../library/check-config.ts';
import { createGateway } from '../library/create-gateway.ts';
import { batchLines, createLogger, isLogLevel } from '../log/logger.ts';
import { ADMIN_LISTENER, API_LISTENER, listenFailureMessage, listenFailureOf } from '../ops/listen.ts';
import { claimListenFds, SocketActivationError, type ListenFds } from '../ops/socket-activation.ts';
import { createSystemdNotifier } from '../ops/systemd-notify.ts';
import type { CliIo } from './main.ts';
import { describeArgumentProblem } from './argument-problem.ts';
import { createReloader } from './serve-reloader.ts';
import { serveBanner } from './serve-banner.ts';

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

  const apiPort = port ?? config.listen.port;
  const apiHost = values.host ?? config.listen.host;
  // Same port on two different addresses is fine; a wildcard address overlaps every other.
  const sameAddress = apiHost === config.admin.host || isWildcard(apiHost) || isWildcard(config.admin.host);
  if (config.admin.enabled && values['no-admin'] !== true && apiPort !== 0 && apiPort === (adminPort ?? config.admin.port) && sameAddress) {
    io.stderr.write(`portcullis serve: the API and admin listeners would both use port ${apiPort}; give --admin-port another port (0 picks a free one) or --no-admin\n`);
    return 2;
  }

  const adminRuns = config.admin.enabled && values['no-admin'] !== true;

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

  // The gateway is made as any host makes it: from the file's JSON value.
  const file = configSource(io);
  const readValue = (): unknown => {
    const value = withDataDirFromEnv(readConfigValue({ configPath: io.configPath, env: io.env, cwd: io.cwd }).value, io);
    // --no-admin overrides admin.enabled, at start and on each reload alike (admin.tls is then not read).
    return values['no-admin'] === true ? withoutAdmin(value) : value;
  };
  let gateway: Gateway;
  try {
    gateway = await createGateway({
      config: readValue(),
      ...(file === null ? { baseDir: io.cwd } : { source: file }),
      env: io.env,
      logger,
    });
  } catch (err) {
    if (err instanceof GatewayConfigError || err instanceof ConfigError) {
      io.stderr.write(`portcullis serve: invalid configuration: ${err.message}\n`);
      return 1;
    }
    io.stderr.write(`portcullis serve: ${(err as Error).message}\n`);
    return 1;
  }

  let listening: ListeningAddress;
  try {
    listening = await gateway.listen({
      ...(port === undefined ? {} : { port }),
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(fds.api === undefined ? {} : { fd: fds.api }),
      admin: adminRuns,
      ...(adminPort === undefined ? {} : { adminPort }),
      ...(fds.admin === undefined || !adminRuns ? {} : { adminFd: fds.admin }),
      watchDescriptors: true,
    });
    if (!adminRuns && fds.admin !== undefined) {
      logger.warn(`an admin socket was passed but ${values['no-admin'] === true ? '--no-admin was given' : 'admin.enabled is false'}; closing it`, { fd: fds.admin });
      closeSync(fds.admin);
    }
  } catch (err) {
    await gateway.close({ drainTimeoutMs: 0 });
    io.stderr.write(`portcullis serve: ${err instanceof GatewayConfigError ? 'invalid configuration' : 'cannot listen'}: ${listenProblem(err)}\n`);
    return 1;
  }
  const running = gateway;
  const apiAddress = listening.url;
  const adminAddress = listening.admin?.url ?? null;

  const notifier = createSystemdNotifier({ env: io.env, logger });
  // Signal handlers first, so a SIGTERM or SIGHUP that follows the banner at
  // once is handled, never the default kill.
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  let stopping = false;
  /** The config serving now, as the file said (drain timeout, log level). */
  let current = config;
  const readyStatus = `listening on ${apiAddress}/v1`;
  const reloader = createReloader({
    stopping: () => stopping,
    reload: async () => {
      let next: GatewayConfig | null = null;
      const result = await running.reload(
        () => {
          let value: unknown;
          try {
            value = readValue();
          } catch (err) {
            // A file that cannot be read: the gateway refuses the reload with these issues and records it.
            if (err instanceof ConfigError) throw new GatewayConfigError(err.issues, err.source ?? undefined);
            throw err;
          }
          try {
            next = parseConfig(value, file, file === null ? io.cwd : path.dirname(file));
          } catch (err) {
            // The gateway finds the same problems and refuses the reload.
            if (!(err instanceof ConfigError)) throw err;
          }
          return value;
        },
        { actor: 'serve', trigger: 'signal', ...(file === null ? {} : { source: file }) },
      );
      if (result.ok && next !== null) {
        current = next;
        // --log-level wins over the file for the life of the process.
        if (flagLevel === undefined) logger.setLevel(current.log.level);
      }
      return result.ok ? `${readyStatus}; configuration reloaded` : `${readyStatus}; reload refused: ${result.problem}`;
    },
    outcome: (status) => void notifier.ready(status),
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
      running.closeNow();
      return;
    }
    stopping = true;
    const drainTimeoutMs = current.shutdown.drainTimeoutMs;
    const inFlight = running.inFlight;
    // close() stops the API listener at once: once this line is out, new connections are refused.
    // The admin listener stays up while the API drains, so /readyz says
    // "draining" and /metrics can be scraped to the end; then it closes too.
    const drained = running.close({ drainTimeoutMs });
    void notifier.stopping(`draining ${inFlight} requests`);
    logger.info('shutting down', { signal, drainTimeoutMs, inFlight });
    // For a person at a terminal: the JSON lines above say nothing of the wait.
    io.stderr.write(
      inFlight === 0
        ? 'Shutting down.\n'
        : `Shutting down: waiting up to ${Math.ceil(drainTimeoutMs / 1000)} s for ${plural(inFlight, 'open request')} to finish; ` +
            `${signal === 'SIGINT' ? 'press Ctrl-C again' : `send ${signal} again`} to end ${inFlight === 1 ? 'it' : 'them'} now.\n`,
    );
    void drained
      .then(async (report) => {
        logger.info('drained', { ...report });
        if (report.finished + report.endedWithError > 0) {
          io.stderr.write(`Stopped: ${plural(report.finished, 'request')} finished, ${report.endedWithError} ended early.\n`);
        }
        // The last status systemd shows for the unit, instead of "draining N requests".
        await notifier.status(`stopped: ${plural(report.finished, 'request')} finished, ${report.endedWithError} ended early`);
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

  const status = await running.status();
  io.stderr.write(
    serveBanner({
      config,
      apiAddress,
      adminAddress,
      metricsAddress: listening.metrics?.url ?? null,
      socketFromSystemd: fds.api !== undefined,
      stateKind: status.state,
      dataDirOrigin: io.dataDirOrigin === undefined ? null : io.dataDirOrigin(config.source),
      keyCount: status.keys,
      bootstrapToken: listening.admin?.bootstrapToken ?? null,
      cli: io.hintCommand ?? 'portcullis',
    }),
  );
  logger.info('listening', {
    api: apiAddress,
    admin: adminAddress,
    ...(listening.metrics === null ? {} : { metrics: listening.metrics.url }),
    socketActivation: fds.api !== undefined || fds.admin !== undefined,
    config: config.source ?? 'embedded',
    state: status.state,
  });
  void notifier.ready(readyStatus);
  return done;
}

/** listen()'s rejection in serve's words: a taken address names the flags that move it. */
function listenProblem(err: unknown): string {
  const failure = listenFailureOf(err);
  if (failure !== null && failure.listener !== 'metrics') return listenFailureMessage(failure.listener === 'api' ? API_LISTENER : ADMIN_LISTENER, failure);
  return (err as Error).message;
}

/** The value with admin.enabled false (a value that is not an object is left for the checks to name). */
function withoutAdmin(value: unknown): unknown {
  if (!isObject(value)) return value;
  const admin = value['admin'];
  if (admin !== undefined && !isObject(admin)) return value;
  return { ...value, admin: { ...admin, enabled: false } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** PORTCULLIS_DATA_DIR, when set, in place of the config's dataDir (resolved against the working directory). */
function withDataDirFromEnv(value: unknown, io: CliIo): unknown {
  const dataDir = io.env[DATA_DIR_ENV];
  if (dataDir === undefined || dataDir === '' || !isObject(value)) return value;
  return { ...value, dataDir: path.resolve(io.cwd, dataDir) };
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

