// The audit trail of a `portcullis` command that changes keys or the admin
// password: the same chain `serve` appends to (audit.jsonl in the data
// directory, or the shared Redis list), opened on the first record only, so
// commands that change nothing never open it. Problems (a torn last line
// repaired, an append that failed) go to stderr; the trail's own `audit` log
// lines are the gateway's log stream's, not a command's output.
import type { AuditLog } from '../audit/audit-log.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import type { GatewayConfig } from '../config/config.ts';
import { createLogger } from '../log/logger.ts';
import { openAuditLogAlone } from '../state/open-audit-log.ts';

export interface CliAuditTrail extends AuditTrail {
  /** Closes the chain's connection (Redis) if a record opened one. */
  close(): Promise<void>;
}

export function cliAuditTrail(config: GatewayConfig, io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }): CliAuditTrail {
  const logger = createLogger({ level: 'warn', write: (line) => io.stderr.write(line) });
  let opened: Promise<{ log: AuditLog; close(): Promise<void> }> | undefined;
  let trail: AuditTrail | undefined;
  return {
    async record(event) {
      if (trail === undefined) {
        opened ??= openAuditLogAlone(config, { logger, env: io.env });
        let log: AuditLog;
        try {
          ({ log } = await opened);
        } catch (err) {
          // The change is made: say loudly that its record is not, with the event (never a secret) for the operator to keep.
          io.stderr.write(`portcullis: the audit log could not be opened; this change is NOT recorded: ${err instanceof Error ? err.message : String(err)}\n  event: ${JSON.stringify(event)}\n`);
          opened = undefined;
          return;
        }
        trail = createAuditTrail({ logger, log });
      }
      await trail.record(event);
    },
    async close() {
      if (opened === undefined) return;
      try {
        await (await opened).close();
      } catch {
        // already reported when it was opened
      }
    },
  };
}
