// The audit chain a config names, for a process that has no running gateway
// (a CLI command): audit.jsonl in the data directory, or the Redis backend's
// shared list. The gateway uses StateBackend.audit directly.
import { statSync } from 'node:fs';
import type { AuditLog } from '../audit/audit-log.ts';
import { createFileAuditLog } from '../audit/file-audit-log.ts';
import type { GatewayConfig } from '../config/config.ts';
import type { Logger } from '../log/logger.ts';
import { openStateBackend } from './open-backend.ts';
import type { StateBackend } from './state-backend.ts';

/**
 * The chain for `config`: the open backend's when one is given; otherwise the
 * data directory's file log (memory backend). With the Redis backend and no
 * backend given, throws TypeError: the Redis chain needs the open connection.
 * `onProblem` hears about repairs of a torn last line (a CLI writes it to stderr).
 */
export function openAuditLog(config: GatewayConfig, backend?: StateBackend, onProblem?: (message: string) => void): AuditLog {
  if (backend !== undefined) return backend.audit;
  if (config.state.backend === 'redis' && config.state.redis !== null) {
    throw new TypeError('openAuditLog: with state.backend "redis" the audit chain is the open backend\'s: pass the backend (openStateBackend) as the second argument');
  }
  return createFileAuditLog({ dataDir: config.dataDir, rotateBytes: config.audit.rotateBytes, ...(onProblem === undefined ? {} : { onProblem }) });
}

/**
 * For commands that read the chain alone (`portcullis audit`): opens the Redis backend when the config names it.
 * A data directory that does not exist is refused: it is a wrong --data-dir or config (or a user
 * whose ./data is not the gateway's), and verify must not call an absent log whole.
 */
export async function openAuditLogAlone(config: GatewayConfig, options: { logger: Logger; env: NodeJS.ProcessEnv }): Promise<{ log: AuditLog; close(): Promise<void> }> {
  if (config.state.backend !== 'redis' || config.state.redis === null) {
    if (missingDirectory(config.dataDir)) {
      throw new Error(`there is no data directory at ${config.dataDir}, so no audit log to read; name the gateway's with --config FILE or --data-dir DIR`);
    }
    return { log: openAuditLog(config, undefined, (message) => options.logger.warn(message)), close: async () => {} };
  }
  const backend = await openStateBackend(config, { logger: options.logger, env: options.env, watch: false });
  return { log: backend.audit, close: () => backend.close() };
}

/** Only a directory that is not there: one the user may not look into is the log's to report (EACCES, with its advice). */
function missingDirectory(dir: string): boolean {
  try {
    statSync(dir);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
