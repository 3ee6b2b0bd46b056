// An AuditTrail for tests that keeps every event it is given, in order, so a
// test can assert that an action left exactly the records it should.
import type { AuditEvent, AuditTrail } from '../../src/audit/audit-event.ts';

export interface RecordingAuditTrail extends AuditTrail {
  readonly events: AuditEvent[];
}

export function recordingAuditTrail(): RecordingAuditTrail {
  const events: AuditEvent[] = [];
  return {
    events,
    async record(event) {
      events.push(structuredClone(event));
    },
    async begin(event) {
      events.push(structuredClone(event));
      return { seq: null, done: async () => {}, failed: async () => {} };
    },
  };
}
