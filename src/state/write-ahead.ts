// Write-ahead for an audited change (docs/audit.md, "Write-ahead"), whatever
// the store: the store decides the change and hands it to a hook before it
// writes it; the hook appends the change's record (durable, open). Once the
// store has written it the record is settled; should the write fail after the
// record, or the store decide again (a compare-and-set that lost), a
// `change.incomplete` record closes it. A crash in between leaves it open for
// the next start (change-recovery.ts).
import type { AuditEvent, AuditIntent, AuditTrail } from '../audit/audit-event.ts';

/** What a store hands its hook: the record as it is and as it will be written (null: none). */
export interface DecidedChange<R> {
  before: R | null;
  after: R;
}

/** Runs `change` with a hook that records `eventOf(decided)` ahead of the write; settles or closes the record by the outcome. */
export async function writeAhead<R, T>(trail: AuditTrail, eventOf: (decided: DecidedChange<R>) => AuditEvent, change: (ahead: (decided: DecidedChange<R>) => Promise<void>) => Promise<T>): Promise<T> {
  let intent: AuditIntent | null = null;
  const ahead = async (decided: DecidedChange<R>): Promise<void> => {
    // A second call: the attempt before lost a race (Redis) and was not written.
    if (intent !== null) await intent.failed('another writer changed the record first; the change was tried again in the next record');
    intent = null;
    intent = await trail.begin(eventOf(decided));
  };
  let result: T;
  try {
    result = await change(ahead);
  } catch (error) {
    if (intent !== null) await (intent as AuditIntent).failed(`the store did not write the change: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
  if (intent !== null) await (intent as AuditIntent).done();
  return result;
}
