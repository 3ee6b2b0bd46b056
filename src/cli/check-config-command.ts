// `portcullis check-config FILE...`: checks config files with the loader the
// server uses, and checks that each provider's upstream key can be found
// (apiKeyEnv set, apiKeyFile readable), without starting anything.
// Exit codes: 0 every file is fine, 1 a file has a problem, 2 the command line
// is wrong. No key is ever printed: only where it was looked for.
import { parseArgs } from 'node:util';
import { AUTO_ALIAS, ConfigError, type GatewayConfig, type ProviderConfig } from '../config/config.ts';
import type { ConfigIssueCode } from '../config/config-issues.ts';
import { providerCredentials } from '../config/provider-types.ts';
import { CONFIG_ENV, loadConfig, resolveProviderKeys } from '../config/config-loader.ts';
import { RedisUrlError } from '../redis/errors.ts';
import { redisAddress } from '../state/redis-backend.ts';
import type { CliIo } from './main.ts';

export const CHECK_CONFIG_USAGE = `Usage: portcullis check-config [options] FILE...

Checks config files as "portcullis serve" would at start, and that each
provider's upstream key is there (apiKeyEnv set, apiKeyFile readable), without
starting the server. Prints "FILE: ok" and a summary, or every problem found,
one line each: "FILE: SETTING: PROBLEM". Without FILE, checks --config or
$${CONFIG_ENV}.

Options:
  --credentials-dir DIR  Use DIR as $CREDENTIALS_DIRECTORY, for an apiKeyFile of
                         "\${CREDENTIALS_DIRECTORY}/NAME" checked outside the
                         service (the LoadCredential= source folder, e.g. /etc/portcullis)
  --skip-credentials     Check the file only, not the upstream keys
  -h, --help             Show this help

Exit status: 0 all files are fine, 1 a file has a problem, 2 usage error.
`;

/** Enough for any real use (a CI job checking a folder of configs); bounds the work. */
const MAX_FILES = 64;

interface CheckConfigIo extends CliIo {
  /** Value of --config, taken out of the arguments by main.ts. */
  configPath: string | undefined;
}

export function runCheckConfigCommand(args: string[], io: CheckConfigIo): number {
  let values: { 'credentials-dir'?: string; 'skip-credentials'?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: {
        'credentials-dir': { type: 'string' },
        'skip-credentials': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    return usageError(io, (err as Error).message);
  }
  if (values.help === true) {
    io.stdout.write(CHECK_CONFIG_USAGE);
    return 0;
  }
  if (values['credentials-dir'] === '') return usageError(io, '--credentials-dir needs a folder');
  if (values['credentials-dir'] !== undefined && values['skip-credentials'] === true) {
    return usageError(io, '--credentials-dir and --skip-credentials exclude each other');
  }
  const fallback = io.configPath ?? nonEmpty(io.env[CONFIG_ENV]);
  const files = positionals.length > 0 ? positionals : fallback === undefined ? [] : [fallback];
  if (files.length === 0) return usageError(io, 'name a config file to check');
  if (files.length > MAX_FILES) return usageError(io, `at most ${MAX_FILES} files at once`);
  if (files.includes('')) return usageError(io, 'a file name is empty');

  const env: NodeJS.ProcessEnv =
    values['credentials-dir'] === undefined ? io.env : { ...io.env, CREDENTIALS_DIRECTORY: values['credentials-dir'] };
  let failed = false;
  for (const file of files) {
    const problems = checkConfigFile(file, { env, cwd: io.cwd, credentials: values['skip-credentials'] !== true });
    if (problems.kind === 'ok') {
      io.stdout.write(`${file}: ok\n  ${summary(problems.config)}\n`);
    } else {
      failed = true;
      for (const problem of problems.problems) io.stderr.write(`${file}: ${problem.path === '' ? '' : `${problem.path}: `}${problem.problem}\n`);
    }
  }
  return failed ? 1 : 0;
}

interface ConfigProblem {
  /** Stable, for scripts: see ConfigIssueCode. */
  code: ConfigIssueCode;
  /** The setting, as in `aliases.service-chat.provider`; empty for the file itself. */
  path: string;
  problem: string;
}

type ConfigCheck = { kind: 'ok'; config: GatewayConfig } | { kind: 'problems'; problems: ConfigProblem[] };

/**
 * Loads one file with the server's loader, which reports every problem in the
 * file (a file that cannot be read or is not JSON is one problem). Once the
 * file is valid, each provider's credential is checked on its own, so every
 * missing key is named.
 */
export function checkConfigFile(file: string, options: { env: NodeJS.ProcessEnv; cwd: string; credentials: boolean }): ConfigCheck {
  let config: GatewayConfig;
  try {
    config = loadConfig({ configPath: file, env: options.env, cwd: options.cwd });
  } catch (err) {
    if (err instanceof ConfigError) return { kind: 'problems', problems: problemsOf(err) };
    throw err;
  }
  if (!options.credentials) return { kind: 'ok', config };
  const problems: ConfigProblem[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    try {
      resolveProviderKeys({ ...config, providers: { [name]: provider } }, options.env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const found = problemsOf(err)[0] as ConfigProblem;
      problems.push(needsCredentialsDirectory(provider, options.env) ? { ...found, problem: `${found.problem}${CREDENTIALS_HINT}` } : found);
    }
  }
  // The Redis password, read the way serve reads it at start.
  if (config.state.redis !== null) {
    try {
      redisAddress(config.state.redis, options.env, config.source);
    } catch (err) {
      if (!(err instanceof ConfigError) && !(err instanceof RedisUrlError)) throw err;
      // redis-backend.ts words these; apart from the URL, each is a password that cannot be found.
      const found: ConfigProblem =
        err instanceof ConfigError
          ? { ...(problemsOf(err)[0] as ConfigProblem), code: err.path === 'state.redis.url' ? 'invalid_value' : 'missing_credential' }
          : { code: 'invalid_value', path: 'state.redis.url', problem: err.message };
      const viaCredentials = config.state.redis.passwordFile?.includes('${CREDENTIALS_DIRECTORY}') === true && nonEmpty(options.env['CREDENTIALS_DIRECTORY']) === undefined;
      problems.push(viaCredentials ? { ...found, problem: `${found.problem}${CREDENTIALS_HINT}` } : found);
    }
  }
  return problems.length === 0 ? { kind: 'ok', config } : { kind: 'problems', problems };
}

const CREDENTIALS_HINT = ' (systemd sets it for the service; to check outside it, pass --credentials-dir DIR or --skip-credentials)';

function needsCredentialsDirectory(provider: ProviderConfig, env: NodeJS.ProcessEnv): boolean {
  const apiKeyFile = providerCredentials(provider)?.apiKeyFile ?? null;
  return apiKeyFile !== null && apiKeyFile.includes('${CREDENTIALS_DIRECTORY}') && nonEmpty(env['CREDENTIALS_DIRECTORY']) === undefined;
}

function problemsOf(err: ConfigError): ConfigProblem[] {
  return err.issues.map((issue) => ({ code: issue.code, path: issue.path, problem: issue.message }));
}

function summary(config: GatewayConfig): string {
  const providers = Object.entries(config.providers).map(([name, p]) => `${name} (${p.type})`);
  const aliases = Object.keys(config.aliases);
  return (
    `${count(providers.length, 'provider')}: ${providers.join(', ')}; ` +
    `${count(aliases.length, 'alias', 'aliases')}: ${aliases.join(', ')}; ` +
    `${AUTO_ALIAS} defaults to ${config.auto.default}; listen ${config.listen.host}:${config.listen.port}; data ${config.dataDir}`
  );
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function usageError(io: CliIo, message: string): number {
  io.stderr.write(`portcullis check-config: ${message}\n\n${CHECK_CONFIG_USAGE}`);
  return 2;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
