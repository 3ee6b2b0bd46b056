// `portcullis state migrate --to DESTINATION`: moves keys, admin tokens, usage,
// budget counts and the audit chain from the state the config names (as
// `serve` would open it) to the destination named on the command line, between
// the file backend and Redis. Exit codes: 0 moved and verified; 1 refused or
// failed (message on stderr, nothing changed in the source); 2 the command line
// is wrong. docs/scaling.md, "Moving state between files and Redis".
import { connect } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, type GatewayConfig, type RedisStateConfig } from '../config/config.ts';
import type { RedisClient } from '../redis/client.ts';
import { RedisReplyError, RedisUnavailableError } from '../redis/errors.ts';
import { openMigrationClient } from '../state/migration-redis.ts';
import { fileMigrationSide, redisMigrationSide } from '../state/migration-sides.ts';
import { MigrationFailedError, MigrationRefusedError, migrateState, type MigrationSide, type MigrationSummary } from '../state/state-migration.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { FileError } from '../files/errors.ts';
import { AdminTokenError } from '../keys/admin-token-errors.ts';
import { UsageFileError } from '../usage/usage-file.ts';
import { describeArgumentProblem, unknownArgument, refuseCommandLine } from './argument-problem.ts';

export const STATE_USAGE = `Usage: portcullis state migrate --to DESTINATION [options]

Move the gateway's state (API keys, admin tokens, usage, budget counts and the
audit chain) from where the config keeps it to DESTINATION, between the data
directory and Redis. Stop every gateway using the state first. The source is
never changed; the destination must hold nothing yet. After the copy the
destination is read back and compared, and its audit chain verified.

DESTINATION:
  redis://[user@]HOST[:PORT][/DB]   Redis (rediss:// for TLS), from a config with
                                    the file backend
  file:DIR                          a data directory, from a config with
                                    state.backend "redis"
  file                              the config's data directory (dataDir)

Options:
  --key-prefix PREFIX      the destination's Redis key prefix (default: the
                           config's state.redis.keyPrefix, else portcullis:)
  --password-env NAME      the destination Redis's password is in this
                           environment variable
  --password-file FILE     ... or in this file
  --json                   print the summary as JSON
`;

const OPTIONS = {
  to: { type: 'string' },
  'key-prefix': { type: 'string' },
  'password-env': { type: 'string' },
  'password-file': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** How long a listener probe waits for a connection. */
const PROBE_TIMEOUT_MS = 1000;
const DEFAULT_KEY_PREFIX = 'portcullis:';

export interface StateCommandContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The config, loaded as serve loads it; null for --help. */
  config: GatewayConfig | null;
  /** How to run portcullis on the same config, for the closing hint. */
  command?: string;
  /** The clock (tests pass a fixed one). */
  now?: () => number;
}

type Destination = { kind: 'file'; dataDir: string } | { kind: 'redis'; config: RedisStateConfig };

export async function runStateCommand(args: string[], ctx: StateCommandContext): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) return refuseCommandLine(ctx.stderr, 'portcullis state', null, 'missing command (migrate)');
  if (name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(STATE_USAGE);
    return 0;
  }
  if (name !== 'migrate') return refuseCommandLine(ctx.stderr, 'portcullis state', null, unknownArgument(name, ['help'], ['migrate']));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return refuseCommandLine(ctx.stderr, 'portcullis state', name, describeArgumentProblem({ options: OPTIONS, allowPositionals: false }, rest, error));
  }
  if (values['help'] === true || ctx.config === null) {
    ctx.stdout.write(STATE_USAGE);
    return 0;
  }
  const config = ctx.config;
  const destination = parseDestination(values, config, ctx.cwd);
  if (typeof destination === 'string') return refuseCommandLine(ctx.stderr, 'portcullis state', name, destination);

  const clients: RedisClient[] = [];
  try {
    const source = openSource(config, ctx.env, clients);
    const target = openDestination(destination, ctx.env, clients);
    const summary = await migrateState(source, target, (ctx.now ?? Date.now)());
    ctx.stdout.write(values['json'] === true ? `${JSON.stringify(summary, null, 2)}\n` : renderSummary(summary, config, ctx.command ?? 'portcullis'));
    return 0;
  } catch (error) {
    if (error instanceof MigrationRefusedError || error instanceof MigrationFailedError) {
      ctx.stderr.write(`portcullis state migrate: ${error.message}\n`);
      return 1;
    }
    if (error instanceof ConfigError) {
      ctx.stderr.write(`portcullis state migrate: ${error.message}\n`);
      return 1;
    }
    if (error instanceof RedisUnavailableError || error instanceof RedisReplyError || error instanceof KeyStoreError || error instanceof FileError || error instanceof AdminTokenError || error instanceof UsageFileError) {
      ctx.stderr.write(`portcullis state migrate: ${error.message}; nothing was copied\n`);
      return 1;
    }
    throw error;
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** The destination, or the problem with the command line. */
function parseDestination(values: Record<string, string | boolean | undefined>, config: GatewayConfig, cwd: string): Destination | string {
  const to = values['to'];
  if (typeof to !== 'string') return 'missing --to: redis://HOST[:PORT][/DB] (from files to Redis) or file:DIR (from Redis to files)';
  const prefix = values['key-prefix'];
  const passwordEnv = values['password-env'];
  const passwordFile = values['password-file'];
  if (to === 'file' || to.startsWith('file:')) {
    for (const flag of ['key-prefix', 'password-env', 'password-file'] as const) {
      if (values[flag] !== undefined) return `--${flag} is for a Redis destination; --to ${to} is a data directory`;
    }
    const dir = to === 'file' ? config.dataDir : to.slice('file:'.length);
    if (dir === '') return '--to file: needs a directory: file:DIR, or file alone for the config\'s dataDir';
    return { kind: 'file', dataDir: path.resolve(cwd, dir) };
  }
  if (!to.startsWith('redis://') && !to.startsWith('rediss://')) {
    return `--to must be redis://HOST[:PORT][/DB], rediss://..., file:DIR or file; got ${JSON.stringify(to)}`;
  }
  try {
    if (new URL(to).password !== '') return 'the --to URL holds a password, which other users can read in the process list: give it with --password-env NAME or --password-file FILE';
  } catch {
    return `--to ${JSON.stringify(to)} is not a valid URL; expected redis[s]://[user@]host[:port][/db]`;
  }
  if (typeof prefix === 'string' && !/^[A-Za-z0-9:_.-]{1,64}$/.test(prefix)) return '--key-prefix: use letters, digits, ":", "_", "." and "-" (at most 64), as state.redis.keyPrefix';
  if (passwordEnv !== undefined && passwordFile !== undefined) return 'give --password-env or --password-file, not both';
  if (typeof passwordEnv === 'string' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(passwordEnv)) return '--password-env must be the NAME of an environment variable';
  return {
    kind: 'redis',
    config: {
      url: to,
      passwordEnv: typeof passwordEnv === 'string' ? passwordEnv : null,
      passwordFile: typeof passwordFile === 'string' ? path.resolve(cwd, passwordFile) : null,
      keyPrefix: typeof prefix === 'string' ? prefix : (config.state.redis?.keyPrefix ?? DEFAULT_KEY_PREFIX),
      connectTimeoutMs: 2000,
      commandTimeoutMs: 10_000,
      tls: null,
    },
  };
}

function openSource(config: GatewayConfig, env: NodeJS.ProcessEnv, clients: RedisClient[]): MigrationSide {
  if (config.state.backend === 'redis' && config.state.redis !== null) {
    const redis = config.state.redis;
    const { client, location } = openMigrationClient({ ...redis, commandTimeoutMs: Math.max(redis.commandTimeoutMs, 10_000) }, env, config.source, { url: 'state.redis.url', tls: 'state.redis.tls' });
    clients.push(client);
    return redisMigrationSide(client, location, redis.keyPrefix);
  }
  return fileMigrationSide(config.dataDir, { rotateBytes: config.audit.rotateBytes, servingSigns: () => listenerSigns(config) });
}

function openDestination(destination: Destination, env: NodeJS.ProcessEnv, clients: RedisClient[]): MigrationSide {
  if (destination.kind === 'file') return fileMigrationSide(destination.dataDir);
  try {
    const { client, location } = openMigrationClient(destination.config, env, null, { url: '--to', tls: '--to' });
    clients.push(client);
    return redisMigrationSide(client, location, destination.config.keyPrefix);
  } catch (error) {
    // The settings came from the command line, not a config file: name the flags.
    if (error instanceof ConfigError) throw new MigrationRefusedError(error.problem.replace('state.redis.url', '--to').replace('state.redis.passwordEnv', '--password-env').replace('state.redis.passwordFile', '--password-file'));
    throw error;
  }
}

/**
 * A gateway on this host serving this config answers on its listeners: a
 * connection to the API or admin port is a sign (systemd socket activation
 * holds the port too, and would start one). Port 0 listeners cannot be found.
 */
async function listenerSigns(config: GatewayConfig): Promise<string[]> {
  const where = config.source ?? 'the config';
  const listeners = [{ setting: 'listen', host: config.listen.host, port: config.listen.port }];
  if (config.admin.enabled) listeners.push({ setting: 'admin', host: config.admin.host, port: config.admin.port });
  const signs: string[] = [];
  for (const { setting, host, port } of listeners) {
    if (port === 0) continue;
    const address = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
    if (await accepts(address, port)) signs.push(`something accepts connections on ${address.includes(':') ? `[${address}]` : address}:${port}, the ${setting} address in ${where}`);
  }
  return signs;
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function renderSummary(s: MigrationSummary, config: GatewayConfig, command: string): string {
  const c = s.counts;
  const budgets =
    s.budgets === 'raised-to-usage'
      ? `${plural(c.budgets, 'count')} of the current day or month: budgets.json's, or what usage.json shows the key spent in the window where that is more`
      : `${plural(c.budgets, 'count')} of the current day or month, copied`;
  const audit = s.audit.records === 0 ? 'no records' : `${plural(s.audit.records, 'record')}${s.audit.trimmed ? ' (its oldest removed by retention)' : ''}, head seq ${s.audit.head.seq} ${s.audit.head.hash}`;
  const next = s.to.startsWith('Redis')
    ? `Next: set "state": {"backend": "redis", "redis": {"url": ...}} in ${config.source ?? 'the config'} (docs/scaling.md) and start the gateways.`
    : `Next: remove "state" (or set "backend": "memory") in ${config.source ?? 'the config'}, with dataDir naming that directory, and start the gateway.`;
  return (
    `Moved from ${s.from}\n` +
    `        to ${s.to}:\n` +
    `  keys          ${plural(c.keys, 'key')} (${c.revokedKeys} revoked), last use of ${c.lastUsed}\n` +
    `  admin tokens  ${c.tokens}\n` +
    `  usage         ${plural(c.usageKeys, 'key')}: totals, ${plural(c.hourBuckets, 'hourly bucket')}, ${plural(c.dayBuckets, 'daily bucket')}\n` +
    `  budgets       ${budgets}\n` +
    `  audit chain   ${audit}\n` +
    `Verified: the destination was read back and matches; its audit chain verifies and ends at the same head.\n` +
    `The source was not changed. ${next}\n` +
    (s.audit.records === 0 ? '' : `Then check the chain where it now is: ${command} audit verify --expect-head ${s.audit.head.hash}\n`)
  );
}
