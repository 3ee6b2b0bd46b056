// Audit bodies and events for the audit tests: realistic shapes, no secrets.
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import type { AuditRecordBody } from '../../src/audit/audit-record.ts';

/** A key.create body, its time and target numbered by `n`. */
export function keyCreate(n: number, overrides: Partial<AuditRecordBody> = {}): AuditRecordBody {
  return {
    time: new Date(Date.UTC(2026, 10, 26, 12, 0, 0, 0) + n * 1000).toISOString(),
    actor: { kind: 'cli', id: 'alice', uid: 1000, name: 'alice' },
    source: 'cli',
    action: 'key.create',
    target: `key_${String(n).padStart(4, '0')}`,
    before: null,
    after: { id: `key_${String(n).padStart(4, '0')}`, name: `app-${n}`, prefix: 'pcl_abcd1234', status: 'active', expiresAt: null, allowedAliases: null, limits: { requestsPerMinute: 60 } },
    ...overrides,
  };
}

export function loginEvent(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    actor: { kind: 'password', id: 'admin' },
    source: '127.0.0.1',
    action: 'admin.login',
    target: 'admin',
    before: null,
    after: null,
    ...overrides,
  };
}
