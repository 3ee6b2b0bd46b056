#!/usr/bin/env node
// The `portcullis` command: dispatches to subcommands. Every subcommand reads
// the same config (--config FILE or PORTCULLIS_CONFIG), so the CLI and the
// server act on the same data directory.
import path from 'node:path';
import type { AuditTrail } from '../audit/audit-event.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { CONFIG_ENV, DATA_DIR_ENV, loadConfig } from '../config/config-loader.ts';
import { createLogger } from '../log/logger.ts';
import { openStateBackend } from '../state/open-backend.ts';
import { runAdminCommand } from './admin-command.ts';
import { openCliTokensBackend } from './admin-tokens-command.ts';
import { runAuditCommand } from './audit-command.ts';
import { openAuditLogAlone } from '../state/open-audit-log.ts';
import { runCheckConfigCommand } from './check-config-command.ts';
import { commandName, hintFlags } from './command-name.ts';
import { unknownArgument } from './argument-problem.ts';
import { cliWho } from './cli-actor.ts';
import { cliAuditTrail } from './cli-audit.ts';
import { runKeysCommand } from './keys-command.ts';
import { packageVersion } from '../config/package-version.ts';

const USAGE = `Usage: portcullis <command> [options]

An OpenAI-compatible inference gateway.

Commands:
  serve        Start the gateway (see: portcullis serve --help)
  keys         Create, list, update, rotate and revoke API keys (see: portcullis keys --help)
  check-config Check config files without starting (see: portcullis check-config --help)
  admin        Set the dashboard password, manage admin API tokens (see: portcullis admin --help)
  audit        Verify and list the hash-chained audit log (see: portcullis audit --help)
  state        Move keys, tokens, usage and the audit chain between files and Redis
               (see: portcullis state --help)

Options for every command:
  --config FILE   Config file (default: $${CONFIG_ENV}; without either, the
                  embedded demo config)
  --data-dir DIR  Data directory (keys, usage, admin password); chosen in this
                  order: --data-dir, $${DATA_DIR_ENV}, the config's dataDir,
                  ./data
  -h, --help      Show help
  -V, --version   Show the version
`;

/** The commands USAGE lists, for the suggestion after a mistyped one. */
const COMMANDS = ['serve', 'keys', 'check-config', 'admin', 'audit', 'state', 'help', 'version'];

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Where `admin set-password` reads the password; process.stdin when absent. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  /** Where `keys` and `admin` record their changes; by default the commands' own trail (tests pass a recording one). */
  audit?: AuditTrail;
}

/**
 * Takes `--config FILE` and `--data-dir DIR` (or `--flag=value`) out of the
 * arguments, wherever they are: every command reads them the same way.
 */
export function extractConfigFlag(args: readonly string[]): { configPath: string | undefined; dataDir: string | undefined; rest: string[] } {
  const rest: string[] = [];
  const found: { config?: string; 'data-dir'?: string } = {};
  const what = { config: 'a file path', 'data-dir': 'a directory' } as const;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    const flag = (['config', 'data-dir'] as const).find((name) => arg === `--${name}` || arg.startsWith(`--${name}=`));
    if (flag !== undefined) {
      const value = arg === `--${flag}` ? args[++i] : arg.slice(flag.length + 3);
      if (value === undefined || value === '' || value.startsWith('--')) throw new UsageError(`--${flag} needs ${what[flag]}`);
      if (found[flag] !== undefined) throw new UsageError(`--${flag} given more than once`);
      found[flag] = value;
      continue;
    }
    rest.push(arg);
  }
  return { configPath: found.config, dataDir: found['data-dir'], rest };
}

/**
 * Where the data directory came from, in the order it is chosen: --data-dir,
 * then PORTCULLIS_DATA_DIR, then the config file's dataDir (default ./data
 * beside the file), then ./data in the working directory.
 */
export function dataDirOrigin(flagGiven: boolean, env: NodeJS.ProcessEnv, configSource: string | null): string {
  if (flagGiven) return 'from --data-dir';
  if (env[DATA_DIR_ENV] !== undefined && env[DATA_DIR_ENV] !== '') return `from ${DATA_DIR_ENV}`;
  return configSource === null ? 'the default: ./data in the working directory' : `from ${configSource}`;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: { configPath: string | undefined; dataDir: string | undefined; rest: string[] };
  try {
    parsed = extractConfigFlag(argv);
  } catch (err) {
    io.stderr.write(`portcullis: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  // --data-dir wins over PORTCULLIS_DATA_DIR, which wins over the config file.
  const dataDirFlag = parsed.dataDir === undefined ? undefined : path.resolve(io.cwd, parsed.dataDir);
  if (dataDirFlag !== undefined) io = { ...io, env: { ...io.env, [DATA_DIR_ENV]: dataDirFlag } };
  const origin = (source: string | null): string => dataDirOrigin(dataDirFlag !== undefined, io.env, source);
  // How to run portcullis again on the same files, for the hints every command prints.
  const hintCommand = commandName(process.argv[1], io.cwd) + hintFlags(parsed.configPath, dataDirFlag);
  const [command, ...args] = parsed.rest;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    (command === undefined ? io.stderr : io.stdout).write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    io.stdout.write(`portcullis ${packageVersion()} (Node.js ${process.version})\n`);
    return 0;
  }
  // A reader that stops early (`portcullis keys list --json | head -c 0`) closes the
  // pipe: the rest of the output goes nowhere and the command ends as it would
  // have, quietly, instead of dying of an unhandled EPIPE. Its changes and their
  // records are made before anything is printed. Not for serve: its stdout is the log stream.
  // The error of a write comes a tick later, maybe after the command returned: the listener stays.
  if (command !== 'serve') {
    for (const stream of [io.stdout, io.stderr]) if (!stream.listeners('error').includes(ignoreClosedPipe)) stream.on('error', ignoreClosedPipe);
  }
  return await runCommandIn(io, parsed.configPath, origin, hintCommand, command, args);
}

/** Output to a closed pipe is dropped; any other output error is still thrown. */
function ignoreClosedPipe(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
}

/** One command, once the global flags are read. */
async function runCommandIn(io: CliIo, configPath: string | undefined, origin: (source: string | null) => string, hintCommand: string, command: string, args: string[]): Promise<number> {
  const wantsHelp = args.includes('--help') || args.includes('-h');
  /** Problems a command meets on the way (a Redis warning, a repaired audit line): stderr, warn and up. */
  const warnLogger = () => createLogger({ level: 'warn', write: (line) => io.stderr.write(line) });
  // The audit trail of the commands that change keys, tokens or the password:
  // the chain `serve` appends to (./cli-audit.ts), closed when the command ends.
  // --help changes nothing, so its trail is the log-only one.
  const withAudit = async (config: GatewayConfig | null, run: (audit: AuditTrail) => Promise<number>): Promise<number> => {
    if (io.audit !== undefined) return run(io.audit);
    if (config === null) return run(createAuditTrail({ logger: warnLogger() }));
    const trail = cliAuditTrail(config, io);
    try {
      return await run(trail);
    } finally {
      await trail.close();
    }
  };
  const who = cliWho(io.env);
  try {
    switch (command) {
      case 'serve': {
        // Loaded only to serve: the gateway, the admin listener and what they
        // bring would otherwise double the start of every other command.
        const { runServeCommand } = await import('./serve-command.ts');
        return await runServeCommand(args, { ...io, configPath, hintCommand, dataDirOrigin: origin });
      }
      case 'check-config':
        return runCheckConfigCommand(args, { ...io, configPath });
      case 'keys': {
        if (wantsHelp) return await withAudit(null, (audit) => runKeysCommand(args, { dataDir: '', stdout: io.stdout, stderr: io.stderr, audit }));
        const config = loadConfig({ configPath, env: io.env, cwd: io.cwd });
        io.stderr.write(stateLine('keys', config, origin(config.source)));
        // With Redis the keys live there, shared by every instance; the files otherwise.
        const openStore =
          config.state.backend === 'redis'
            ? async () => openStateBackend(config, { logger: warnLogger(), env: io.env, watch: false })
            : undefined;
        return await withAudit(config, (audit) => runKeysCommand(args, { dataDir: config.dataDir, stdout: io.stdout, stderr: io.stderr, command: hintCommand, currency: config.currency, audit, who, ...(openStore === undefined ? {} : { openStore }) }));
      }
      case 'admin': {
        const stdin = io.stdin ?? process.stdin;
        if (wantsHelp) return await withAudit(null, (audit) => runAdminCommand(args, { dataDir: '', stdin, stdout: io.stdout, stderr: io.stderr, audit }));
        const config = loadConfig({ configPath, env: io.env, cwd: io.cwd });
        io.stderr.write(stateLine('admin', config, origin(config.source)));
        return await withAudit(config, (audit) => runAdminCommand(args, { dataDir: config.dataDir, passwordHash: config.security.passwordHash, stdin, stdout: io.stdout, stderr: io.stderr, audit, who, openTokens: () => openCliTokensBackend(config, io.env, io.stderr) }));
      }
      case 'audit': {
        const cli = { stdout: io.stdout, stderr: io.stderr };
        if (wantsHelp) return await runAuditCommand(args, { ...cli, openLog: () => Promise.reject(new Error('not opened for --help')) });
        const config = loadConfig({ configPath, env: io.env, cwd: io.cwd });
        io.stderr.write(config.state.backend === 'redis' ? `portcullis audit: the shared chain in Redis (state.backend in ${config.source ?? 'the config'})\n` : stateLine('audit', config, origin(config.source)));
        return await runAuditCommand(args, { ...cli, openLog: () => openAuditLogAlone(config, { logger: warnLogger(), env: io.env }) });
      }
      case 'state': {
        const { runStateCommand } = await import('./state-command.ts');
        const config = wantsHelp ? null : loadConfig({ configPath, env: io.env, cwd: io.cwd });
        return await runStateCommand(args, { stdout: io.stdout, stderr: io.stderr, env: io.env, cwd: io.cwd, config, command: hintCommand });
      }
      default:
        io.stderr.write(`portcullis: ${unknownArgument(command, ['config', 'data-dir', 'help', 'version'], COMMANDS)}\n\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`portcullis: invalid configuration: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/** Which keys a command works on, for a person to check before it acts. */
function stateLine(command: string, config: GatewayConfig, origin: string): string {
  return config.state.backend === 'redis'
    ? `portcullis ${command}: keys in Redis (state.backend in ${config.source ?? 'the config'})\n`
    : `portcullis ${command}: data directory ${config.dataDir} (${origin})\n`;
}

// Run when executed directly (not when imported by tests).
const invokedAs = process.argv[1];
if (invokedAs !== undefined && /(^|[\\/])(main\.[jt]s|portcullis)$/.test(invokedAs)) {
  runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() }).then(
    (code) => {
      if (code !== 0 || process.exitCode === undefined) process.exitCode = code;
      // Everything is closed by now; should any handle still hold the process
      // (a socket an upstream never closed), this ends it. Unref'd: it never
      // keeps a process alive that would exit anyway.
      setTimeout(() => process.exit(process.exitCode ?? code), 5000).unref();
    },
    (err: unknown) => {
      process.stderr.write(`portcullis: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
