// `portcullis check-config FILE...`: checks config files with the loader the
// server uses, then the files and secrets each names (./config-file-checks.ts:
// upstream keys, the Redis password, TLS certificates and keys), without
// starting anything. Exit codes: 0 every file is fine (warnings, such as a
// certificate that expires soon, included), 1 a file has a problem, 2 the
// command line is wrong. No key is ever printed: only where it was looked for.
import { parseArgs } from 'node:util';
import { AUTO_ALIAS, ConfigError, type GatewayConfig } from '../config/config.ts';
import type { ConfigIssue, ConfigIssueCode, ConfigWarning } from '../config/config-issues.ts';
import { CONFIG_ENV, loadConfig } from '../config/config-loader.ts';
import { EXPIRY_WARNING_DAYS } from '../config/pem-checks.ts';
import { aliasLabels } from '../config/alias-kind-config.ts';
import { aliasTargetWarnings } from '../providers/request-restrictions.ts';
import { describeArgumentProblem } from './argument-problem.ts';
import { checkConfigFiles } from './config-file-checks.ts';
import type { CliIo } from './main.ts';

export const CHECK_CONFIG_USAGE = `Usage: portcullis check-config [options] FILE...

Checks config files as "portcullis serve" would at start, and the files each
names, without starting the server: each provider's upstream key (apiKeyEnv
set, apiKeyFile readable), the Redis password, every TLS certificate, key
and CA file (present, readable, PEM, unencrypted key matching its certificate,
in date), this environment's egress proxy variables (HTTPS_PROXY,
http_proxy, NO_PROXY, ...) as serve would apply them to each provider, and
the trace export's headers (telemetry.otlp: variables set, headersFile readable). Prints "FILE: ok" and a summary, or every problem found, one line
each: "FILE: SETTING: PROBLEM". A certificate that expires within ${EXPIRY_WARNING_DAYS} days,
and an alias whose targets take different requests (an OpenAI-compatible and
an Anthropic provider), are warnings: "FILE: SETTING: warning: ...". Without FILE, checks --config or
$${CONFIG_ENV}.

Options:
  --credentials-dir DIR  Use DIR as $CREDENTIALS_DIRECTORY, for paths such as
                         "\${CREDENTIALS_DIRECTORY}/NAME" checked outside the
                         service (the LoadCredential= source folder, e.g. /etc/portcullis)
  --skip-credentials     Check the config file only, not the files it names
                         (upstream keys, Redis password, TLS files)
  -h, --help             Show this help

Exit status: 0 all files are fine (warnings included), 1 a file has a problem,
2 usage error.
`;

/** Enough for any real use (a CI job checking a folder of configs); bounds the work. */
const MAX_FILES = 64;

interface CheckConfigIo extends CliIo {
  /** Value of --config, taken out of the arguments by main.ts. */
  configPath: string | undefined;
}

const CHECK_CONFIG_OPTIONS = {
  'credentials-dir': { type: 'string' },
  'skip-credentials': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function runCheckConfigCommand(args: string[], io: CheckConfigIo): number {
  let values: { 'credentials-dir'?: string; 'skip-credentials'?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options: CHECK_CONFIG_OPTIONS, strict: true, allowPositionals: true }));
  } catch (err) {
    return usageError(io, describeArgumentProblem({ options: CHECK_CONFIG_OPTIONS, allowPositionals: true }, args, err));
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
    const check = checkConfigFile(file, { env, cwd: io.cwd, credentials: values['skip-credentials'] !== true });
    if (check.kind === 'ok') {
      const warned = check.warnings.length === 0 ? '' : `, with ${count(check.warnings.length, 'warning')}`;
      io.stdout.write(`${file}: ok${warned}\n  ${summary(check.config)}\n`);
    } else {
      failed = true;
      for (const problem of check.problems) io.stderr.write(`${file}: ${problem.path === '' ? '' : `${problem.path}: `}${problem.problem}\n`);
    }
    for (const warning of check.warnings) io.stderr.write(`${file}: ${warning.path}: warning: ${warning.message}\n`);
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

/** Warnings (a certificate that expires soon) come with either outcome. */
type ConfigCheck =
  | { kind: 'ok'; config: GatewayConfig; warnings: ConfigWarning[] }
  | { kind: 'problems'; problems: ConfigProblem[]; warnings: ConfigWarning[] };

/**
 * Loads one file with the server's loader, which reports every problem in the
 * file (a file that cannot be read or is not JSON is one problem). Once the
 * file is valid, every file and secret it names is checked (unless
 * `credentials` is false), each on its own, so every problem is named.
 */
export function checkConfigFile(file: string, options: { env: NodeJS.ProcessEnv; cwd: string; credentials: boolean }): ConfigCheck {
  let config: GatewayConfig;
  try {
    config = loadConfig({ configPath: file, env: options.env, cwd: options.cwd });
  } catch (err) {
    if (err instanceof ConfigError) return { kind: 'problems', problems: problemsOf(err.issues), warnings: [] };
    throw err;
  }
  const aliasWarnings = aliasTargetWarnings(config);
  if (!options.credentials) return { kind: 'ok', config, warnings: aliasWarnings };
  const { issues, warnings: fileWarnings } = checkConfigFiles(config, options.env, Date.now());
  const warnings = [...aliasWarnings, ...fileWarnings];
  return issues.length === 0 ? { kind: 'ok', config, warnings } : { kind: 'problems', problems: problemsOf(issues), warnings };
}

function problemsOf(issues: readonly ConfigIssue[]): ConfigProblem[] {
  return issues.map((issue) => ({ code: issue.code, path: issue.path, problem: issue.message }));
}

function summary(config: GatewayConfig): string {
  const providers = Object.entries(config.providers).map(([name, p]) => `${name} (${p.type})`);
  const aliases = aliasLabels(config.aliases);
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
