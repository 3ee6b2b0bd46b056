// `portcullis serve`: load and check the config, open the key store, listen,
// and shut down cleanly on SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { CONFIG_ENV, loadConfig } from '../config/config-loader.ts';
import { createGateway } from '../gateway/gateway.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { openKeyStore, type KeyStore } from '../keys/key-store.ts';
import { batchLines, createLogger, isLogLevel } from '../log/logger.ts';
import type { CliIo } from './main.ts';

const USAGE = `Usage: portcullis serve [--config FILE] [--host HOST] [--port PORT] [--log-level LEVEL]

Starts the gateway. Without a config file it serves the built-in demo provider
(a deterministic echo, not a language model) as service-chat and service-auto
on 127.0.0.1:8080.

Options:
  --config FILE      Config file (default: $${CONFIG_ENV}); see docs/config.md
  --host HOST        Listen address (overrides listen.host)
  --port PORT        Listen port, 0 for any free port (overrides listen.port)
  --log-level LEVEL  debug, info (default), warn or error; logs are JSON lines on stdout
  -h, --help         Show this help
`;

const SHUTDOWN_GRACE_MS = 10_000;

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
  const level = values['log-level'] ?? 'info';
  if (!isLogLevel(level)) {
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
  const logger = createLogger({ level, write: batchLines((text) => io.stdout.write(text)) });
  let keys: KeyStore;
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
  let gateway;
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

  // Signal handlers first, so a SIGTERM that follows the banner at once is a
  // clean shutdown, never the default kill.
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  let stopping = false;
  const stop = (signal: string): void => {
    // A second signal while stopping changes nothing: the grace timer ends it.
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const force = setTimeout(() => gateway.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    force.unref();
    void gateway
      .close()
      .then(() => keys.close())
      .then(() => {
        clearTimeout(force);
        resolveDone(0);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

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
