// Opens the state backend the config names: the data directory's files (one
// instance) or a shared Redis (several). Used by `serve` and by the CLI, so
// `portcullis keys create` writes where the running gateways read.
import type { GatewayConfig } from '../config/config.ts';
import type { KeyStoreOptions } from './file-key-store.ts';
import type { Logger } from '../log/logger.ts';
import { openFileBackend } from './file-backend.ts';
import { openRedisBackend, type StateOperation } from './redis-backend.ts';
import type { StateBackend } from './state-backend.ts';

interface OpenBackendOptions {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** File store only: watch the data directory for CLI changes (a CLI run passes false). */
  watch?: boolean;
  /** Key store background failures (a broken keys.json on reload). */
  onKeyStoreError?: KeyStoreOptions['onError'];
  countUnavailable?: (operation: StateOperation) => void;
  /** File store only: a budgets.json write failed. */
  countBudgetJournalWriteFailure?: () => void;
}

/** Rejects with KeyStoreError (a broken keys.json), FileError (a data directory file that cannot be written or locked), ConfigError (a Redis password) or a Redis connection error. */
export async function openStateBackend(config: GatewayConfig, options: OpenBackendOptions): Promise<StateBackend> {
  if (config.state.backend === 'memory' || config.state.redis === null) {
    return openFileBackend(config.dataDir, {
      ...(options.watch === undefined ? {} : { watch: options.watch }),
      ...(options.onKeyStoreError === undefined ? {} : { onError: options.onKeyStoreError }),
    }, { rotateBytes: config.audit.rotateBytes, onProblem: (message) => options.logger.warn(message) }, {
      logger: options.logger,
      ...(options.countBudgetJournalWriteFailure === undefined ? {} : { countJournalWriteFailure: options.countBudgetJournalWriteFailure }),
    });
  }
  return openRedisBackend(config.state.redis, {
    onUnavailable: config.state.onUnavailable,
    logger: options.logger,
    env: options.env,
    configSource: config.source,
    ...(options.countUnavailable === undefined ? {} : { countUnavailable: options.countUnavailable }),
  });
}
