// The audit trail of a `portcullis` command that changes keys or the admin
// password: the same chain `serve` appends to (audit.jsonl in the data
// directory, or the shared Redis list), opened on the first record only, so
// commands that change nothing never open it. Problems (a torn last line
// repaired, an append that failed, the event then written whole) go to stderr
// as sentences; the trail's `audit` info lines are not printed: a command's
// records are on the chain, not in any log stream.
import { AuditLogError, type AuditLog } from '../audit/audit-log.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import type { GatewayConfig } from '../config/config.ts';
import type { Logger } from '../log/logger.ts';
import { openAuditLogAlone } from '../state/open-audit-log.ts';

export interface CliAuditTrail extends AuditTrail {
  /** Closes the chain's connection (Redis) if a record opened one. */
  close(): Promise<void>;
}

/**
 * What a command's trail says on stderr: sentences for a person at a terminal,
 * not the gateway's JSON log lines. Warnings and errors only.
 */
export function cliAuditLogger(stderr: NodeJS.WritableStream): Logger {
  const say = (prefix: string) => (msg: string, fields?: Record<string, unknown>) => {
    const lines = Object.entries(fields ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `  ${name}: ${String(value)}\n`);
    stderr.write(`portcullis: ${prefix}${msg}\n${lines.join('')}`);
  };
  return { debug: () => {}, info: () => {}, warn: say('warning: '), error: say('error: ') };
}

/** Said after an append failed: the change stands, its record does not. */
export const NOT_RECORDED = 'portcullis: this change is made, but it is NOT in the audit log: keep the event above (docs/audit.md, "When a record cannot be appended")\n';

export function cliAuditTrail(config: GatewayConfig, io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }): CliAuditTrail {
  const logger = cliAuditLogger(io.stderr);
  let opened: Promise<{ log: AuditLog; close(): Promise<void> }> | undefined;
  let trail: AuditTrail | undefined;
  /** The trail on the opened chain; throws when the chain cannot be opened. */
  const chainTrail = async (): Promise<AuditTrail> => {
    if (trail !== undefined) return trail;
    opened ??= openAuditLogAlone(config, { logger, env: io.env });
    let log: AuditLog;
    try {
      ({ log } = await opened);
    } catch (err) {
      opened = undefined;
      throw err;
    }
    trail = createAuditTrail({ logger, log, onAppendFailure: (changeMade) => changeMade && io.stderr.write(NOT_RECORDED) });
    return trail;
  };
  return {
    async record(event) {
      let chain: AuditTrail;
      try {
        chain = await chainTrail();
      } catch (err) {
        // The change is made: say loudly that its record is not, with the event (never a secret) for the operator to keep.
        io.stderr.write(`portcullis: the audit log could not be opened; this change is NOT recorded: ${err instanceof Error ? err.message : String(err)}\n  event: ${JSON.stringify(event)}\n`);
        return;
      }
      await chain.record(event);
    },
    async begin(event) {
      let chain: AuditTrail;
      try {
        chain = await chainTrail();
      } catch (err) {
        throw new AuditLogError(`the audit log could not be opened, so the change was not made: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      return chain.begin(event);
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
