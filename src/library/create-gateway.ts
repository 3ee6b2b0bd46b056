// The embedded gateway (src/api/gateway.ts): what a host gets from
// createGateway, and what `portcullis serve` builds on. From a config value it
// opens what the config names (the state backend, the audit chain, the
// response store), builds the gateway, and hands it to ./embedded-gateway.ts,
// which owns its life: listen, reload, close. It adds no process listener
// (signals are the host's) and starts nothing beyond what the config needs
// (the key store's watch, the usage flush), all of it ended by close().
import path from 'node:path';
import type { Gateway, GatewayOptions } from '../api/gateway.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { parseConfig } from '../config/config-parser.ts';
import type { ConfigIssue as InternalConfigIssue } from '../config/config-issues.ts';
import { guardLogger, type GuardedLogger } from '../log/guarded-logger.ts';
import { batchLines, createLogger, type BatchedLines, type Logger } from '../log/logger.ts';
import { createGatewayMetrics } from '../metrics/gateway-metrics.ts';
import { connectionsForDescriptors, readDescriptorLimit } from '../ops/descriptor-watch.ts';
import { GatewayConfigError } from './check-config.ts';
import { checkGatewayConfig, sourceInBaseDir } from './config-check.ts';
import { plainIssues } from './plain-issues.ts';
import { checkProviderTypes } from './provider-registry.ts';
import { describeStartError, GatewayStartError, openGatewayParts, type GatewayParts } from './gateway-parts.ts';
import { embeddedGateway, type GatewayHooks } from './embedded-gateway.ts';
import { basePathProblem } from '../gateway/gateway.ts';


/** The embedded gateway of `options` (src/api/gateway.ts); rejects with GatewayConfigError for a config that cannot run. */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const basePath = options.basePath ?? '';
  const baseProblem = basePathProblem(basePath);
  if (baseProblem !== null) throw new TypeError(baseProblem);
  if (options.source !== undefined && (typeof options.source !== 'string' || options.source === '')) throw new TypeError('source must be a non-empty string: the path of the config file');
  const env = options.env ?? process.env;
  const named = options.source === undefined ? undefined : path.resolve(options.source);
  const baseDir = path.resolve(options.baseDir ?? (named === undefined ? process.cwd() : path.dirname(named)));
  const source = named ?? sourceInBaseDir(baseDir);
  // Malformed registrations throw here, naming the adapter, before the config is looked at.
  const providerTypes = checkProviderTypes(options.providerTypes);
  const parse = (value: unknown, from = source): GatewayConfig => parseConfig(value, from, baseDir, { providerTypes });
  const configError = (issues: readonly InternalConfigIssue[]): GatewayConfigError => new GatewayConfigError(plainIssues(issues), named);

  // One pass, as checkConfig's: every problem at once (the TLS listeners' files and
  // missing upstream keys included), or the checked config and its certificates.
  const checked = checkGatewayConfig(options.config, { source, baseDir, env, providerTypes, providerKey: options.providerKey });
  if (!checked.ok) throw new GatewayConfigError(checked.issues, named);
  const { config: loaded, certificates } = checked;
  // Unset, limits.maxConnections is what the descriptor limit allows (read once, at start).
  const descriptorLimit = readDescriptorLimit();
  const maxConnections = loaded.limits.maxConnections ?? connectionsForDescriptors(descriptorLimit);
  const config: GatewayConfig = { ...loaded, limits: { ...loaded.limits, maxConnections } };

  let lines: BatchedLines | null = null;
  /** A host's logger, guarded: it is called where a throw would end the host's process. */
  let guarded: GuardedLogger | null = null;
  let logger: Logger;
  let setLevel: GatewayHooks['setLevel'];
  if (options.logger === undefined) {
    lines = batchLines((text) => process.stdout.write(text), { flushOnExit: false });
    const own = createLogger({ level: config.log.level, write: lines });
    logger = own;
    setLevel = (level) => own.setLevel(level);
  } else {
    guarded = guardLogger(options.logger);
    logger = guarded;
  }

  // The hooks read the parts once they exist; nothing calls them before.
  let parts: GatewayParts | undefined;
  const hooks: GatewayHooks = {
    descriptors: { exhausted: false },
    adminConnections: () => null,
    ...(setLevel === undefined ? {} : { setLevel }),
  };
  const metrics = createGatewayMetrics({
    targets: () => parts?.gateway.targets.health() ?? [],
    isKnownAlias: (alias) => parts !== undefined && Object.hasOwn(parts.gateway.config.aliases, alias),
    stateBackendUp: () => (parts?.backend.health() === 'ok' ? 1 : 0),
    openConnections: () => {
      const admin = hooks.adminConnections();
      return { api: parts?.gateway.openConnections ?? 0, ...(admin === null ? {} : { admin }) };
    },
    descriptorsExhausted: () => (hooks.descriptors.exhausted ? 1 : 0),
    keyLookups: () => parts?.backend.keys.lookupCounts?.() ?? {},
  });
  try {
    parts = await openGatewayParts({
      config,
      logger,
      env,
      basePath,
      metrics,
      ...(certificates.api === undefined ? {} : { tls: certificates.api }),
      ports: { keys: options.keys, usage: options.usage, limiter: options.limiter },
      ...(options.audit === undefined ? {} : { auditSink: options.audit }),
      ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
      ...(options.providerKey === undefined ? {} : { providerKey: options.providerKey }),
      ...(options.traceExporter === undefined ? {} : { traceExporter: options.traceExporter }),
      countUnavailable: (operation) => metrics.stateBackendUnavailable(operation),
      countBudgetJournalWriteFailure: () => metrics.budgetJournalWriteFailure(),
      onAuditAppendFailure: () => metrics.auditAppendFailure(),
    });
  } catch (err) {
    lines?.flush();
    guarded?.reportFailures();
    if (!(err instanceof GatewayStartError)) throw err;
    const cause = err.cause as Error;
    if (err.step === 'config' && cause instanceof ConfigError) throw configError(cause.issues);
    throw new Error(describeStartError(err, config), { cause });
  }
  return embeddedGateway({
    ...parts,
    logger,
    lines,
    guarded,
    loaded,
    config,
    parse,
    env,
    named,
    metrics,
    certificates,
    descriptorLimit,
    hooks,
  });
}
