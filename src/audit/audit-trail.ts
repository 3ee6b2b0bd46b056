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
//
// A host's AuditSink gets a copy of each record once the chain took it, in chain
// order, without anyone waiting for it: a sink that rejects, hangs or falls behind
// is logged and counted (./audit-sink-tee.ts), and neither the change nor the
// chain's record depends on it. drainAuditSink() is the close's last call to it.
import type { AuditSink } from '../api/ports.ts';
import type { Logger } from '../log/logger.ts';
import type { AuditEvent, AuditIntent, AuditTrail } from './audit-event.ts';
import { AuditLogError, type AuditLog } from './audit-log.ts';
import { AuditSecretError, assertNoSecrets, canonicalJson, redactSecrets, type AuditRecord } from './audit-record.ts';
import { createAuditSinkTee, type AuditSinkDrain, type AuditSinkTee } from './audit-sink-tee.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

export interface AuditTrailOptions {
  logger: Logger;
  /** The hash chain (StateBackend.audit, or openAuditLog for a CLI run). */
  log?: AuditLog;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /**
   * Each event that could not be appended (portcullis_audit_append_failures_total); `changeMade`
   * false for a write-ahead record (begin), whose change is then not made.
   */
  onAppendFailure?: (changeMade: boolean) => void;
  /** A host's copy of each chained record (a SIEM); see the file's head. */
  sink?: AuditSink | undefined;
  /** Each record the sink did not confirm: rejected, thrown on, unanswered in time, dropped or never handed. */
  onSinkFailure?: () => void;
  /** The sink's timers (per-append timeout, drain deadline); default the system's. */
  scheduler?: Scheduler;
  /** Per-append timeout (default DEFAULT_AUDIT_SINK_TIMEOUT_MS). */
  sinkTimeoutMs?: number;
  /** Records waiting for the sink at most (default DEFAULT_AUDIT_SINK_MAX_QUEUED). */
  sinkMaxQueued?: number;
}

/** The sink tee of each trail that has one, for drainAuditSink. */
const tees = new WeakMap<AuditTrail, AuditSinkTee>();

/**
 * At close: waits until the trail's sink has every record handed to it, at most
 * `deadlineMs` (on the trail's scheduler), then stops feeding it; what it never
 * confirmed is logged by seq and counted. A trail without a sink resolves at once.
 */
export function drainAuditSink(trail: AuditTrail, deadlineMs: number): Promise<AuditSinkDrain> {
  return tees.get(trail)?.drain(deadlineMs) ?? Promise.resolve({ undelivered: [] });
}

export function createAuditTrail(options: AuditTrailOptions): AuditTrail {
  const { logger, log } = options;
  const clock = options.clock ?? Date.now;
  const failed = options.onAppendFailure ?? (() => {});
  const tee =
    options.sink === undefined
      ? null
      : createAuditSinkTee({
          sink: options.sink,
          logger,
          scheduler: options.scheduler ?? systemScheduler,
          onFailure: options.onSinkFailure ?? (() => {}),
          ...(options.sinkTimeoutMs === undefined ? {} : { timeoutMs: options.sinkTimeoutMs }),
          ...(options.sinkMaxQueued === undefined ? {} : { maxQueued: options.sinkMaxQueued }),
        });
  /** The event with secret-like values replaced (a warning names the paths); null when it still holds one (logged, counted). */
  const prepare = (event: AuditEvent, ahead: boolean): AuditEvent | null => {
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
      failed(!ahead);
      logger.error('audit event refused: it holds a secret-like field; nothing was recorded', { action: event.action, problem: error.message });
      return null;
    }
    return event;
  };

  const append = async (log: AuditLog, time: string, event: AuditEvent, open: boolean): Promise<AuditRecord> => {
    const body = { time, actor: event.actor, source: event.source, action: event.action, target: event.target, before: event.before, after: event.after };
    const record = await log.append(event.detail === undefined ? body : { ...body, detail: event.detail }, { open });
    logger.info('audit', recordFields(record));
    tee?.take(record);
    return record;
  };

  const appendFailed = (time: string, event: AuditEvent, error: unknown, ahead: boolean): void => {
    logger.error(ahead ? 'audit append failed; the change was not made' : 'audit append failed; the event is only in this log line', {
      action: event.action,
      error: error instanceof Error ? error.message : String(error),
      event: safeJson({ time, ...event }),
    });
    failed(!ahead);
  };

  const trail: AuditTrail = {
    async record(event) {
      const time = new Date(clock()).toISOString();
      const prepared = prepare(event, false);
      if (prepared === null) return;
      if (log === undefined) {
        logger.info('audit', { audit: safeJson({ time, ...prepared }) });
        return;
      }
      try {
        await append(log, time, prepared, false);
      } catch (error) {
        appendFailed(time, prepared, error, false);
      }
    },

    async begin(event) {
      const time = new Date(clock()).toISOString();
      const prepared = prepare(event, true);
      if (prepared === null) throw new AuditLogError(`the audit event ${event.action} holds a secret-like field and cannot be recorded; the change was not made`);
      if (log === undefined) {
        logger.info('audit', { audit: safeJson({ time, ...prepared }) });
        return { seq: null, done: async () => {}, failed: async () => {} };
      }
      let record: AuditRecord;
      try {
        record = await append(log, time, prepared, true);
      } catch (error) {
        appendFailed(time, prepared, error, true);
        throw error instanceof AuditLogError ? error : new AuditLogError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      return intentOf(log, record, prepared);
    },
  };

  /** Settling is bookkeeping: when it fails, the record stays open and the next start checks its change against the store. */
  const intentOf = (chain: AuditLog, record: AuditRecord, event: AuditEvent): AuditIntent => {
    const settle = async (): Promise<void> => {
      try {
        await chain.settle(record.seq);
      } catch (error) {
        logger.warn('audit: a write-ahead record could not be settled; the next start checks its change', { seq: record.seq, error: error instanceof Error ? error.message : String(error) });
      }
    };
    return {
      seq: record.seq,
      done: settle,
      async failed(reason) {
        await trail.record(incompleteEvent(event, record, reason));
        await settle();
      },
    };
  };

  if (tee !== null) tees.set(trail, tee);
  return trail;
}


/** The record that says the change of write-ahead record `record` was not made, and why. */
export function incompleteEvent(event: Pick<AuditEvent, 'actor' | 'source'>, record: Pick<AuditRecord, 'seq' | 'action' | 'target'>, reason: string): AuditEvent {
  return { actor: event.actor, source: event.source, action: 'change.incomplete', target: record.target, before: null, after: null, detail: { seq: record.seq, action: record.action, reason } };
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

export type { AuditEvent, AuditIntent, AuditSinkDrain, AuditTrail };
