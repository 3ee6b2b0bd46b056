// The trail doors record to (docs/audit.md). With a log, each event is
// appended to the hash chain first, then written to the log stream as one
// `audit` line carrying the chained record (seq and hash included), so the log
// stream is a second copy outside the data directory and its last hash a
// witness for `portcullis audit verify --expect-head`. Without a log (a CLI
// not wired yet), events go to the log stream only.
//
// record() never rejects: the action it describes has happened. An append
// that fails is logged at error level with the whole event and counted; a
// secret-like value in an event is replaced by "[redacted]" (the paths in
// detail.redacted, and a warning naming them, never the values) and the event
// recorded: losing the record of a change would be worse than the redaction.
import type { Logger } from '../log/logger.ts';
import type { AuditEvent, AuditTrail } from './audit-event.ts';
import type { AuditLog } from './audit-log.ts';
import { AuditSecretError, assertNoSecrets, canonicalJson, redactSecrets, type AuditRecord } from './audit-record.ts';

export interface AuditTrailOptions {
  logger: Logger;
  /** The hash chain (StateBackend.audit, or openAuditLog for a CLI run). */
  log?: AuditLog;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /** Each event that could not be appended (portcullis_audit_append_failures_total). */
  onAppendFailure?: () => void;
}

export function createAuditTrail(options: AuditTrailOptions): AuditTrail {
  const { logger, log } = options;
  const clock = options.clock ?? Date.now;
  const failed = options.onAppendFailure ?? (() => {});
  return {
    async record(event) {
      const time = new Date(clock()).toISOString();
      // A secret-like value is replaced, not the record dropped: the action happened and
      // must be on the chain; the paths replaced are kept in detail.redacted.
      const { event: cleaned, redacted } = redactSecrets(event);
      if (redacted.length > 0) {
        event = { ...cleaned, detail: { ...cleaned.detail, redacted } };
        logger.warn('audit event: secret-like fields were redacted before recording', { action: event.action, fields: redacted.join(',') });
      }
      try {
        assertNoSecrets(event);
      } catch (error) {
        if (!(error instanceof AuditSecretError)) throw error;
        failed();
        logger.error('audit event refused: it holds a secret-like field; nothing was recorded', { action: event.action, problem: error.message });
        return;
      }
      if (log === undefined) {
        logger.info('audit', { audit: safeJson({ time, ...event }) });
        return;
      }
      try {
        const body = { time, actor: event.actor, source: event.source, action: event.action, target: event.target, before: event.before, after: event.after };
        const record = await log.append(event.detail === undefined ? body : { ...body, detail: event.detail });
        logger.info('audit', recordFields(record));
      } catch (error) {
        logger.error('audit append failed; the event is only in this log line', {
          action: event.action,
          error: error instanceof Error ? error.message : String(error),
          event: safeJson({ time, ...event }),
        });
        failed();
      }
    },
  };
}

/** The flat fields of an `audit` log line: the record's top fields, and the record itself as canonical JSON. */
export function recordFields(record: AuditRecord): Record<string, string | number | null> {
  return {
    seq: record.seq,
    action: record.action,
    actor_kind: record.actor.kind,
    actor: record.actor.id,
    source: record.source,
    target: record.target,
    hash: record.hash,
    record: canonicalJson(record),
  };
}

/** The event as text for a log line, whatever it holds (a NaN, a bigint, a cycle): logging it must not throw. */
function safeJson(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch {
    try {
      return JSON.stringify(value) ?? 'null';
    } catch {
      return '"(the event cannot be written as JSON)"';
    }
  }
}

export type { AuditEvent, AuditTrail };
