// The files and secrets a valid config names, checked the way serve reads them
// at start, for check-config: each provider's upstream key, the Redis
// password, every TLS file (listen.tls, admin.tls, providers.*.tls,
// state.redis.tls), the environment's egress proxy variables, the trace
// export's headers (telemetry.otlp), and admin.oidc's client secret (read as a
// login reads it: serve reads it only then). Every check runs and every problem is kept, each under its
// setting, in the order of the file; certificates that expire soon are
// warnings. Nothing read here is ever put in a message: only where it was
// looked for.
import { ConfigError, type GatewayConfig, type ListenerTlsConfig, type TlsClientConfig } from '../config/config.ts';
import { ConfigIssueCode, type ConfigIssue, type ConfigWarning } from '../config/config-issues.ts';
import { resolveProviderKeys } from '../config/config-loader.ts';
import { providerCredentials } from '../config/provider-types.ts';
import { resolveOtlpHeaders } from '../config/telemetry-config.ts';
import { checkClientTlsFiles, checkListenerTlsFiles, type TlsFileReport } from '../config/tls-files.ts';
import { readClientSecret } from '../admin/sso-routes.ts';
import { proxyIssues } from '../providers/provider-connections.ts';
import { RedisUrlError } from '../redis/errors.ts';
import { redisAddress } from '../state/redis-backend.ts';

export interface FileCheckResult {
  issues: ConfigIssue[];
  warnings: ConfigWarning[];
}

interface FileCheckContext {
  config: GatewayConfig;
  env: NodeJS.ProcessEnv;
  nowMs: number;
  result: FileCheckResult;
}

const CREDENTIALS_DIRECTORY = '${CREDENTIALS_DIRECTORY}';
const CREDENTIALS_HINT = ' (systemd sets it for the service; to check outside it, pass --credentials-dir DIR or --skip-credentials)';

/** Each check looks at one part of the config and adds what it finds; all run. */
const CHECKS: ReadonlyArray<(ctx: FileCheckContext) => void> = [listenerFiles, providerFiles, proxyEnvironment, redisFiles, telemetryHeaders, oidcClientSecret];

/** The egress proxy variables of this environment, as serve would apply them to each provider (../providers/provider-connections.ts). */
function proxyEnvironment(ctx: FileCheckContext): void {
  ctx.result.issues.push(...proxyIssues(ctx.config, ctx.env));
}

/** Every problem and warning of the files `config` names; `env` resolves `${NAME}` in their paths. */
export function checkConfigFiles(config: GatewayConfig, env: NodeJS.ProcessEnv, nowMs: number): FileCheckResult {
  const ctx: FileCheckContext = { config, env, nowMs, result: { issues: [], warnings: [] } };
  for (const check of CHECKS) check(ctx);
  return ctx.result;
}

/** listen.tls, and admin.tls when serve starts the admin listener. */
function listenerFiles(ctx: FileCheckContext): void {
  const { config } = ctx;
  if (config.listen.tls !== null) listenerTls(ctx, 'listen.tls', config.listen.tls);
  if (config.admin.enabled && config.admin.tls !== null) listenerTls(ctx, 'admin.tls', config.admin.tls);
}

/** Each provider's key, then its TLS files. */
function providerFiles(ctx: FileCheckContext): void {
  const { config, env } = ctx;
  for (const [name, provider] of Object.entries(config.providers)) {
    try {
      resolveProviderKeys({ ...config, providers: { [name]: provider } }, env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const file = providerCredentials(provider)?.apiKeyFile ?? null;
      for (const issue of err.issues) add(ctx, issue, file);
    }
    if (provider.type !== 'demo' && provider.tls !== null) clientTls(ctx, `providers.${name}.tls`, provider.tls);
  }
}

/** The Redis password, read the way serve reads it at start, then the TLS files of a rediss:// url. */
function redisFiles(ctx: FileCheckContext): void {
  const redis = ctx.config.state.redis;
  if (redis === null) return;
  try {
    redisAddress(redis, ctx.env, ctx.config.source);
  } catch (err) {
    if (err instanceof RedisUrlError) {
      ctx.result.issues.push({ code: ConfigIssueCode.InvalidValue, path: 'state.redis.url', message: err.message });
    } else if (err instanceof ConfigError) {
      // redis-backend.ts words these; apart from the URL, each is a password that cannot be found.
      const code = err.path === 'state.redis.url' ? ConfigIssueCode.InvalidValue : ConfigIssueCode.MissingCredential;
      for (const issue of err.issues) add(ctx, { ...issue, code }, redis.passwordFile);
    } else {
      throw err;
    }
  }
  if (redis.tls !== null) clientTls(ctx, 'state.redis.tls', redis.tls);
}

/** The trace export's headers: each `${NAME}` in telemetry.otlp.headers and the headersFile, read as serve reads them at start. */
function telemetryHeaders(ctx: FileCheckContext): void {
  const otlp = ctx.config.telemetry.otlp;
  if (otlp === null) return;
  try {
    resolveOtlpHeaders(ctx.config.source, otlp, ctx.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues) add(ctx, issue, issue.path === 'telemetry.otlp.headersFile' ? otlp.headersFile : null);
  }
}

/**
 * admin.oidc's client secret (when the admin listener runs), read as a login reads it:
 * serve does not read it at start, so without this a missing one shows only when the
 * first person signs in (sso_provider_error, client_secret_unavailable).
 */
function oidcClientSecret(ctx: FileCheckContext): void {
  const { config, env } = ctx;
  const oidc = config.admin.oidc;
  if (oidc === null || !config.admin.enabled) return;
  try {
    readClientSecret(config, oidc, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const issue of err.issues) add(ctx, issue, oidc.clientSecretFile);
    } else if (oidc.clientSecretEnv !== null) {
      ctx.result.issues.push({ code: ConfigIssueCode.MissingCredential, path: 'admin.oidc.clientSecretEnv', message: `environment variable ${oidc.clientSecretEnv} is not set or empty` });
    } else {
      // The only other refusal of a file read whole: it holds nothing but a newline.
      add(ctx, { code: ConfigIssueCode.MissingCredential, path: 'admin.oidc.clientSecretFile', message: 'the file is empty' }, oidc.clientSecretFile);
    }
  }
}

function listenerTls(ctx: FileCheckContext, at: string, tls: ListenerTlsConfig): void {
  const files = { certFile: tls.certFile, keyFile: tls.keyFile, clientCaFile: tls.clientCaFile };
  addReport(ctx, at, files, checkListenerTlsFiles(ctx.config.source, at, tls, ctx.env, ctx.nowMs));
}

function clientTls(ctx: FileCheckContext, at: string, tls: TlsClientConfig): void {
  const files = { caFile: tls.caFile, certFile: tls.certFile, keyFile: tls.keyFile };
  addReport(ctx, at, files, checkClientTlsFiles(ctx.config.source, at, tls, ctx.env, ctx.nowMs));
}

/** A TLS section's report; `files` maps each file setting to its path as written, for the hint. */
function addReport(ctx: FileCheckContext, at: string, files: Record<string, string | null>, report: TlsFileReport): void {
  for (const issue of report.issues) add(ctx, issue, files[issue.path.slice(at.length + 1)] ?? null);
  ctx.result.warnings.push(...report.warnings);
}

/**
 * An issue of the file setting written as `file`. A path through
 * ${CREDENTIALS_DIRECTORY}, checked outside the service where systemd has not
 * set it, gets the options that stand in for it.
 */
function add(ctx: FileCheckContext, issue: ConfigIssue, file: string | null): void {
  const unset = ctx.env['CREDENTIALS_DIRECTORY'] === undefined || ctx.env['CREDENTIALS_DIRECTORY'] === '';
  const hint = unset && file !== null && file.includes(CREDENTIALS_DIRECTORY);
  ctx.result.issues.push(hint ? { ...issue, message: `${issue.message}${CREDENTIALS_HINT}` } : issue);
}
