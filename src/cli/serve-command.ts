// `portcullis serve`: load and check the config, open the key store, listen;
// reload config and keys on SIGHUP; drain and stop on SIGTERM/SIGINT.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { CONFIG_ENV, loadConfig } from '../config/config-loader.ts';
import { createGateway, type Gateway, type PreparedReload } from '../gateway/gateway.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { openKeyStore, type FileKeyStore } from '../keys/key-store.ts';
import { batchLines, createLogger, isLogLevel, type LevelledLogger, type LogLevel } from '../log/logger.ts';
import type { CliIo } from './main.ts';

const USAGE = `Usage: portcullis serve [--config FILE] [--host HOST] [--port PORT] [--log-level LEVEL]

Starts the gateway. Without a config file it serves the built-in demo provider
(a deterministic echo, not a language model) as service-chat and service-auto
on 127.0.0.1:8080.

Options:
  --config FILE      Config file (default: $${CONFIG_ENV}); see docs/config.md
  --host HOST        Listen address (overrides listen.host)
  --port PORT        Listen port, 0 for any free port (overrides listen.port)
  --log-level LEVEL  debug, info, warn or error (overrides log.level, default info);
                     logs are JSON lines on stdout
  -h, --help         Show this help

Signals:
  SIGHUP             Reload the config file and keys.json; a bad config is refused
                     and the running one keeps serving
  SIGTERM, SIGINT    Stop accepting, let open requests finish within
                     shutdown.drainTimeoutMs, end those left with an error, exit 0;
                     a second signal ends the open requests at once
`;

export async function runServeCommand(args: string[], io: CliIo & { configPath: string | undefined }): Promise<number> {
  let values: { host?: string; port?: string; 'log-level'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    io.stderr.write(`portcullis serve: ${(err as Error).message}\n\n${USAGE}`);
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
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d{1,5}$/.test(values.port) || port > 65535) {
      io.stderr.write(`portcullis serve: --port must be an integer from 0 to 65535\n`);
      return 2;
    }
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

  // Lines of one event-loop turn leave in one write (see batchLines).
  const logger = createLogger({ level: flagLevel ?? config.log.level, write: batchLines((text) => io.stdout.write(text)) });
  let keys: FileKeyStore;
  try {
    keys = openKeyStore(config.dataDir, {
      onError: (err: Error) => logger.error('key store reload failed; keeping the last good keys', { error: err.message }),
    });
  } catch (err) {
    if (err instanceof KeyStoreError) {
      io.stderr.write(`portcullis serve: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  let gateway: Gateway;
  try {
    gateway = createGateway({ config, keys, logger, env: io.env });
  } catch (err) {
    await keys.close();
    if (err instanceof ConfigError) {
      io.stderr.write(`portcullis serve: invalid configuration: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  let address;
  try {
    address = await gateway.listen(port ?? config.listen.port, values.host ?? config.listen.host);
  } catch (err) {
    await keys.close();
    io.stderr.write(`portcullis serve: cannot listen: ${(err as Error).message}\n`);
    return 1;
  }

  // Signal handlers first, so a SIGTERM or SIGHUP that follows the banner at
  // once is handled, never the default kill.
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  const running = gateway;
  let stopping = false;
  const reloader = createReloader({
    gateway: running,
    keys,
    logger,
    load: () => loadConfig({ configPath: io.configPath, env: io.env, cwd: io.cwd }),
    source: () => configSource(io),
    // --log-level wins over the file for the life of the process.
    levelFromFlag: flagLevel as LogLevel | undefined,
    stopping: () => stopping,
  });
  const onHup = (): void => reloader.request();
  const onInt = (): void => stop('SIGINT');
  const onTerm = (): void => stop('SIGTERM');
  const stop = (signal: string): void => {
    // A second signal does not kill: it ends what is still open now, each
    // stream with its error frame, and the shutdown completes as usual.
    if (stopping) {
      logger.warn('second signal; ending open requests now', { signal, inFlight: running.inFlight });
      running.endShutdownNow();
      return;
    }
    stopping = true;
    const drainTimeoutMs = running.config.shutdown.drainTimeoutMs;
    const inFlight = running.inFlight;
    // shutdown() closes the listener at once: once this line is out, new connections are refused.
    const drained = running.shutdown(drainTimeoutMs);
    logger.info('shutting down', { signal, drainTimeoutMs, inFlight });
    void drained
      .then((report) => {
        logger.info('drained', { ...report });
        return keys.close();
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

  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const demo = Object.values(config.providers).some((p) => p.type === 'demo');
  const keyCount = (await keys.list()).filter((k) => k.revokedAt === null).length;
  io.stderr.write(
    `Portcullis listening on http://${host}:${address.port}/v1\n` +
      `  config: ${config.source ?? 'embedded default'}; data: ${config.dataDir}\n` +
      `  aliases: ${[...Object.keys(config.aliases), 'service-auto'].join(', ')}\n` +
      (demo ? '  provider "demo" is a built-in demo that echoes your prompt; it is not a language model.\n' : '') +
      (keyCount === 0
        ? `  No API keys yet. Create one with: npx portcullis keys create --name my-app${io.configPath === undefined ? '' : ` --config ${io.configPath}`}\n`
        : ''),
  );
  logger.info('listening', { host: address.address, port: address.port, config: config.source ?? 'embedded' });
  return done;
}

/** The config file a reload reads, resolved as loadConfig resolves it; null for the embedded default. */
function configSource(io: CliIo & { configPath: string | undefined }): string | null {
  const given = io.configPath ?? io.env[CONFIG_ENV];
  return given === undefined || given === '' ? null : path.resolve(io.cwd, given);
}

interface ReloaderOptions {
  gateway: Gateway;
  keys: FileKeyStore;
  logger: LevelledLogger;
  load: () => GatewayConfig;
  source: () => string | null;
  levelFromFlag: LogLevel | undefined;
  stopping: () => boolean;
}

/**
 * SIGHUP: reload the config file and the keys, all or nothing. The new config
 * is read, checked and built without serving it; keys.json is re-read (a
 * broken one throws and the last good keys stay); only then the new config is
 * swapped in. Reloads never overlap: a SIGHUP during one runs one more after it.
 */
function createReloader(options: ReloaderOptions): { request(): void } {
  const { gateway, keys, logger } = options;
  let reloading = false;
  let again = false;

  const refuse = (source: string, problemPath: string | null, problem: string): void => {
    logger.error('reload refused; keeping the running configuration', { source, path: problemPath, problem });
  };

  async function reloadOnce(): Promise<void> {
    const source = options.source();
    let prepared: PreparedReload;
    try {
      prepared = gateway.prepareReload(options.load());
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // The message starts with the file; the source field carries it already.
      const prefix = `${source ?? 'embedded config'}: `;
      refuse(source ?? 'embedded', err.path === '' ? null : err.path, err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message);
      return;
    }
    try {
      await keys.reload();
    } catch (err) {
      if (!(err instanceof KeyStoreError)) throw err;
      refuse(keys.keysFilePath, null, err.message);
      return;
    }
    // A shutdown that began meanwhile serves no new requests: nothing to swap.
    if (options.stopping()) return;
    prepared.commit();
    if (options.levelFromFlag === undefined) logger.setLevel(gateway.config.log.level);
  }

  return {
    request() {
      if (options.stopping()) return;
      if (reloading) {
        again = true;
        return;
      }
      reloading = true;
      void (async () => {
        try {
          do {
            again = false;
            try {
              await reloadOnce();
            } catch (err) {
              logger.error('reload failed; keeping the running configuration', { error: err instanceof Error ? err.message : String(err) });
            }
          } while (again && !options.stopping());
        } finally {
          reloading = false;
        }
      })();
    },
  };
}
