// What a running gateway is made of, opened in the order createGateway uses
// (and so `portcullis serve`, a host of it): the state backend the config names,
// one audit trail over its chain (with what a crash left open recovered), the
// response store when responses.store is on, then the gateway itself. A
// failure closes what was opened and says at which step it happened, so each
// host words it for its reader.
import type { Authenticator } from '../api/keys.ts';
import type { AuditSink, ProviderKeySource, TraceExporter } from '../api/ports.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { AuditLogError } from '../audit/audit-log.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import { FileError } from '../files/errors.ts';
import { createGateway, type Gateway } from '../gateway/gateway.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { BudgetJournalError } from '../limits/budget-journal.ts';
import type { Logger } from '../log/logger.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { RedisReplyError, RedisUnavailableError } from '../redis/errors.ts';
import { recoverAuditChain } from '../state/change-recovery.ts';
import type { StateOperation } from '../state/redis-backend.ts';
import { responseStoreLimits } from '../state/response-store-port.ts';
import type { StateBackend } from '../state/state-backend.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';
import { createLibraryAuditTrail, openLibraryState, type LibraryStatePorts } from './compose-state.ts';

export interface GatewayPartsOptions {
  config: GatewayConfig;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** listen.tls's material, read by the host. */
  tls?: ListenerTlsMaterial;
  /** The prefix Gateway.handle serves under (checked by the host). */
  basePath?: string;
  /** The gateway's metrics (kept across reloads). */
  metrics?: GatewayMetrics;
  /** A host's keys, usage store and limiter, in place of the backend's own (only the rest is opened). */
  ports?: LibraryStatePorts;
  /** A host's copy of each audit record, after the chain took it. */
  auditSink?: AuditSink;
  authenticate?: Authenticator;
  providerKey?: ProviderKeySource;
  traceExporter?: TraceExporter;
  countUnavailable?: (operation: StateOperation) => void;
  countBudgetJournalWriteFailure?: () => void;
  onAuditAppendFailure?: () => void;
  /** The timers of the gateway, its response store and the audit sink's timeout and drain; default the system's. */
  scheduler?: Scheduler;
}

export interface GatewayParts {
  backend: StateBackend;
  /** One trail for the admin listener, reloads and recovery. */
  audit: AuditTrail;
  gateway: Gateway;
}

/**
 * Which step could not be done: `state` (the backend cannot open: a broken
 * keys.json, an unwritable data directory, Redis), `budgets` (budgets.json
 * cannot be read: starting without it would hand every key its budget back),
 * `audit` (the chain cannot be continued), `config` (the config cannot be
 * served: a missing upstream credential). The cause is the original error.
 */
export class GatewayStartError extends Error {
  override name = 'GatewayStartError';
  readonly step: 'state' | 'budgets' | 'audit' | 'config';
  constructor(step: GatewayStartError['step'], cause: Error) {
    super(cause.message, { cause });
    this.step = step;
  }
}

/** A start failure in words that name what to fix (after "cannot start: " or a command's name). */
export function describeStartError(err: GatewayStartError, config: GatewayConfig): string {
  switch (err.step) {
    case 'state':
      return `cannot open the ${config.state.backend} state backend: ${err.message}`;
    case 'budgets':
      // Starting without the counts would hand every key its budget back: the operator decides.
      return `cannot open the ${config.state.backend} state backend: ${err.message}; restore it from a backup, or delete it with the server stopped (the current period's budgets restart at 0)`;
    case 'audit':
      return `cannot start on the audit log: ${err.message}`;
    case 'config':
      return `invalid configuration: ${err.message}`;
  }
}

/** Rejects with GatewayStartError for what an operator can fix; anything else is a bug and rejects as it was thrown. */
export async function openGatewayParts(options: GatewayPartsOptions): Promise<GatewayParts> {
  const { config, logger, env } = options;
  let backend: StateBackend;
  try {
    backend = await openLibraryState(config, options.ports ?? {}, {
      logger,
      env,
      onKeyStoreError: (err: Error) => logger.error('key store reload failed; keeping the last good keys', { error: err.message }),
      ...(options.countUnavailable === undefined ? {} : { countUnavailable: options.countUnavailable }),
      ...(options.countBudgetJournalWriteFailure === undefined ? {} : { countBudgetJournalWriteFailure: options.countBudgetJournalWriteFailure }),
    });
  } catch (err) {
    if (err instanceof BudgetJournalError) throw new GatewayStartError('budgets', err);
    if (err instanceof KeyStoreError || err instanceof FileError || err instanceof ConfigError || err instanceof RedisUnavailableError || err instanceof RedisReplyError) {
      throw new GatewayStartError('state', err);
    }
    throw err;
  }
  const scheduler = options.scheduler ?? systemScheduler;
  const audit = createLibraryAuditTrail(backend, options.auditSink, logger, {
    scheduler,
    ...(options.onAuditAppendFailure === undefined ? {} : { onAppendFailure: options.onAuditAppendFailure }),
  });
  try {
    await recoverAuditChain({ log: backend.audit, keys: backend.keys, tokens: backend.tokens, trail: audit, logger });
  } catch (err) {
    await backend.close();
    if (err instanceof AuditLogError || err instanceof KeyStoreError || err instanceof FileError || err instanceof RedisUnavailableError || err instanceof RedisReplyError) {
      throw new GatewayStartError('audit', err);
    }
    throw err;
  }
  try {
    const storeConfig = config.responses.store;
    const responseStore = storeConfig.enabled ? await backend.openResponseStore(responseStoreLimits(storeConfig), scheduler, (message) => logger.warn('response store', { problem: message })) : undefined;
    const gateway = createGateway({
      config,
      state: backend,
      logger,
      env,
      scheduler,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      ...(responseStore === undefined ? {} : { responseStore }),
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
      ...(options.providerKey === undefined ? {} : { providerKey: options.providerKey }),
      ...(options.traceExporter === undefined ? {} : { traceExporter: options.traceExporter }),
    });
    return { backend, audit, gateway };
  } catch (err) {
    await backend.close();
    if (err instanceof ConfigError) throw new GatewayStartError('config', err);
    throw err;
  }
}
