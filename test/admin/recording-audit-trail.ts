// An AuditTrail for tests that keeps every event it is given, in order, so a
// test can assert that an action left exactly the records it should.
import type { AuditEvent, AuditTrail } from '../../src/audit/audit-event.ts';

export interface RecordingAuditTrail extends AuditTrail {
  readonly events: AuditEvent[];
  /** When set, begin() rejects with it (a write-ahead record that cannot be appended) and keeps nothing. */
  refuseBegin: Error | null;
}

export function recordingAuditTrail(): RecordingAuditTrail {
  const events: AuditEvent[] = [];
  const trail: RecordingAuditTrail = {
    events,
    refuseBegin: null,
    async record(event) {
      events.push(structuredClone(event));
    },
    async begin(event) {
      if (trail.refuseBegin !== null) throw trail.refuseBegin;
      events.push(structuredClone(event));
      return { seq: null, done: async () => {}, failed: async () => {} };
    },
  };
  return trail;
}
