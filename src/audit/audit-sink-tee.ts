// A host's AuditSink fed a copy of each chained record, in chain order, one at a
// time, without anyone waiting for it. A sink is the host's code and may hang (a
// SIEM connection that never answers), so it is held to bounds:
// - each append gets `timeoutMs` on the gateway's scheduler; a sink that has not
//   answered by then is logged and counted, and the next record is handed over;
// - at most `maxQueued` records wait their turn; past that the oldest waiting one
//   is dropped (the newest records are what an investigation needs first);
// - drain(deadlineMs), at close, waits for the queue to empty until the deadline,
//   then gives up on what is left; records arriving after it are not handed.
// Every record the sink did not confirm is counted (onFailure) and reported in a
// log line naming its seq: an operator learns where the SIEM copy has gaps, and
// the chain has every record.
import type { AuditSink } from '../api/ports.ts';
import type { Logger } from '../log/logger.ts';
import type { Scheduler, Timer } from '../time/scheduler.ts';
import type { AuditRecord } from './audit-record.ts';

/** How long one append may take before the sink is handed the next record. */
export const DEFAULT_AUDIT_SINK_TIMEOUT_MS = 10_000;
/** Records waiting for the sink at most; the oldest waiting one is dropped past this. */
export const DEFAULT_AUDIT_SINK_MAX_QUEUED = 1000;

export interface AuditSinkTeeOptions {
  sink: AuditSink;
  logger: Logger;
  scheduler: Scheduler;
  /** Each record the sink refused, did not answer in time, or was never handed. */
  onFailure: () => void;
  timeoutMs?: number;
  maxQueued?: number;
}

/**
 * What drain() gave up on: the seqs the sink never confirmed, unanswered or still
 * queued at the deadline, and those dropped from the queue since the last report.
 */
export interface AuditSinkDrain {
  readonly undelivered: readonly number[];
}

export interface AuditSinkTee {
  /** Queues a chained record for the sink; returns at once. */
  take(record: AuditRecord): void;
  /** Waits until the sink has every queued record, at most `deadlineMs`; then stops taking records. Idempotent. */
  drain(deadlineMs: number): Promise<AuditSinkDrain>;
}

export function createAuditSinkTee(options: AuditSinkTeeOptions): AuditSinkTee {
  const { sink, logger, scheduler, onFailure } = options;
  const timeoutMs = positive(options.timeoutMs ?? DEFAULT_AUDIT_SINK_TIMEOUT_MS, 'timeoutMs');
  const maxQueued = positive(options.maxQueued ?? DEFAULT_AUDIT_SINK_MAX_QUEUED, 'maxQueued');
  const queue: AuditRecord[] = [];
  let inFlight: AuditRecord | null = null;
  let closed = false;
  let draining: Promise<AuditSinkDrain> | null = null;
  /** Dropped from the queue and not yet reported: reported when the sink is next handed a record, or at drain. */
  let dropped: number[] = [];
  const idle: (() => void)[] = [];

  const reportDropped = (): void => {
    if (dropped.length === 0) return;
    logger.warn('the audit sink fell behind; records were dropped from its queue and not handed to it (the chain has them)', { seqs: dropped.join(','), count: dropped.length, maxQueued });
    dropped = [];
  };

  /** The in-flight append's timeout, cleared when a drain gives up on it. */
  let inFlightTimer: Timer | undefined;

  const send = async (record: AuditRecord): Promise<void> => {
    let timer: Timer | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = inFlightTimer = scheduler.setTimeout(() => resolve('late'), timeoutMs);
      // A sink that hangs must not keep the host's process alive.
      timer.unref();
    });
    try {
      const outcome = await Promise.race([Promise.resolve().then(() => sink.append(record)).then(() => 'taken' as const), late]);
      if (outcome === 'late' && inFlight === record) {
        onFailure();
        logger.error('the audit sink did not answer a record in time; it is handed the next one (the chain has this one)', { seq: record.seq, action: record.action, hash: record.hash, timeoutMs });
      }
    } catch (error) {
      if (inFlight !== record) return;
      onFailure();
      logger.error('the audit sink refused a record; the chain has it', { seq: record.seq, action: record.action, hash: record.hash, error: error instanceof Error ? `${error.name}: ${error.message}` : typeof error });
    } finally {
      scheduler.clearTimer(timer);
    }
  };

  const next = (): void => {
    if (inFlight !== null || closed) return;
    const record = queue.shift();
    if (record === undefined) {
      for (const wake of idle.splice(0)) wake();
      return;
    }
    reportDropped();
    inFlight = record;
    void send(record).then(() => {
      // After a drain gave up on it, this record was already reported.
      if (inFlight !== record) return;
      inFlight = null;
      next();
    });
  };

  return {
    take(record) {
      if (closed) {
        onFailure();
        logger.warn('the audit sink is closed; a record was not handed to it (the chain has it)', { seqs: String(record.seq), count: 1 });
        return;
      }
      if (queue.length >= maxQueued) {
        const oldest = queue.shift() as AuditRecord;
        dropped.push(oldest.seq);
        onFailure();
      }
      queue.push(record);
      next();
    },

    drain(deadlineMs) {
      if (!(Number.isFinite(deadlineMs) && deadlineMs >= 0)) throw new RangeError(`the audit sink's drain deadline must be a finite number of milliseconds >= 0; it is ${String(deadlineMs)}`);
      draining ??= new Promise<AuditSinkDrain>((resolve) => {
        let timer: Timer | undefined;
        const finish = (): void => {
          if (closed) return;
          closed = true;
          scheduler.clearTimer(timer);
          scheduler.clearTimer(inFlightTimer);
          const left = [...(inFlight === null ? [] : [inFlight]), ...queue].map((record) => record.seq);
          inFlight = null;
          queue.length = 0;
          for (let i = 0; i < left.length; i++) onFailure();
          const undelivered = [...dropped, ...left];
          reportDropped();
          if (left.length > 0) {
            logger.warn('the audit sink did not take every record before the close deadline; these were not confirmed by it (the chain has them)', { seqs: left.join(','), count: left.length, deadlineMs });
          }
          resolve({ undelivered });
        };
        if ((inFlight === null && queue.length === 0) || deadlineMs === 0) return finish();
        idle.push(finish);
        timer = scheduler.setTimeout(finish, deadlineMs);
        timer.unref();
      });
      return draining;
    },
  };
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`the audit sink's ${name} must be a positive whole number; it is ${String(value)}`);
  return value;
}
