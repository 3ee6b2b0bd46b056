// Write-ahead for an audited change (docs/audit.md, "Write-ahead"), whatever
// the store: the store decides the change and hands it to a hook before it
// writes it; the hook appends the change's record (durable, open). Once the
// store has written it the record is settled. When the store decides again (a
// compare-and-set that lost), a `change.incomplete` record closes the record
// before. When the store throws after the record, the error may have come
// after the write (a Redis reply that never came, a directory fsync after the
// rename), so the store is read again: the change is there, the record is
// settled; it is not, `change.incomplete` closes it; the store cannot be read,
// the record stays open and the next start decides (change-recovery.ts), as
// after a crash in between.
import type { AuditEvent, AuditIntent, AuditTrail } from '../audit/audit-event.ts';
import type { ChangeVerdict } from './change-verdict.ts';

/** What a store hands its hook: the record as it is and as it will be written (null: none). */
export interface DecidedChange<R> {
  before: R | null;
  after: R;
}

/** Reads the store again and judges the change of `event` (change-verdict.ts); rejects when the store cannot be read. */
export type ChangeCheck = (event: AuditEvent) => Promise<ChangeVerdict>;

interface OpenRecord {
  intent: AuditIntent;
  event: AuditEvent;
}

/** Runs `change` with a hook that records `eventOf(decided)` ahead of the write; settles or closes the record by the outcome. */
export async function writeAhead<R, T>(
  trail: AuditTrail,
  eventOf: (decided: DecidedChange<R>) => AuditEvent,
  change: (ahead: (decided: DecidedChange<R>) => Promise<void>) => Promise<T>,
  check: ChangeCheck,
): Promise<T> {
  // Set by the hook, inside `change`: typed by a cast so the checks after it are not narrowed away.
  let open = null as OpenRecord | null;
  const ahead = async (decided: DecidedChange<R>): Promise<void> => {
    // A second call: the attempt before lost a race (Redis) and was not written.
    if (open !== null) await open.intent.failed('another writer changed the record first; the change was tried again in the next record');
    open = null;
    const event = eventOf(decided);
    open = { intent: await trail.begin(event), event };
  };
  let result: T;
  try {
    result = await change(ahead);
  } catch (error) {
    if (open !== null) await judgeAfterError(open, error, check);
    throw error;
  }
  if (open !== null) await open.intent.done();
  return result;
}

async function judgeAfterError({ intent, event }: OpenRecord, error: unknown, check: ChangeCheck): Promise<void> {
  let verdict: ChangeVerdict;
  try {
    verdict = await check(event);
  } catch {
    // Neither made nor not made is known: the record stays open for the next start.
    return;
  }
  if (verdict.made) await intent.done();
  else await intent.failed(`the store did not write the change: ${error instanceof Error ? error.message : String(error)}`);
}
