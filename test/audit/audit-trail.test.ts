import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { AuditLog } from '../../src/audit/audit-log.ts';
import { createAuditTrail } from '../../src/audit/audit-trail.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { loginEvent } from './audit-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

const root = tempDir('audit-trail');
const CLOCK = () => Date.parse('2026-11-26T23:00:00.000Z');

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>), clock: () => new Date(CLOCK()) });
  return { logger, lines };
}

test('record() appends to the chain, then writes the chained record to the log stream as flat fields', async () => {
  const { logger, lines } = capture();
  const dataDir = path.join(root, 'a');
  const trail = createAuditTrail({ logger, log: createFileAuditLog({ dataDir }), clock: CLOCK });
  await trail.record(loginEvent({ detail: { via: 'password' } }));
  const stored = readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8');
  const record = JSON.parse(stored) as { seq: number; hash: string; time: string };
  assert.equal(record.seq, 1);
  assert.equal(record.time, '2026-11-26T23:00:00.000Z');
  assert.deepEqual(lines, [
    {
      time: '2026-11-26T23:00:00.000Z',
      level: 'info',
      msg: 'audit',
      seq: 1,
      action: 'admin.login',
      actor_kind: 'password',
      actor: 'admin',
      source: '127.0.0.1',
      target: 'admin',
      hash: record.hash,
      record: stored.trimEnd(),
    },
  ]);
});

test('an append that fails: record() resolves, the whole event is logged at error level and counted', async () => {
  const { logger, lines } = capture();
  let failures = 0;
  const failing: AuditLog = {
    location: 'nowhere',
    append: () => Promise.reject(new Error('disk full')),
    list: () => Promise.reject(new Error('unused')),
    head: () => Promise.reject(new Error('unused')),
    verify: () => Promise.reject(new Error('unused')),
    settle: () => Promise.reject(new Error('unused')),
    openSeqs: () => Promise.reject(new Error('unused')),
    checkTail: () => Promise.reject(new Error('unused')),
  };
  const trail = createAuditTrail({ logger, log: failing, clock: CLOCK, onAppendFailure: () => failures++ });
  await trail.record(loginEvent());
  assert.equal(failures, 1);
  assert.equal(lines.length, 1);
  assert.deepEqual(lines[0], {
    time: '2026-11-26T23:00:00.000Z',
    level: 'error',
    msg: 'audit append failed; the event is only in this log line',
    action: 'admin.login',
    error: 'disk full',
    event: '{"action":"admin.login","actor":{"id":"admin","kind":"password"},"after":null,"before":null,"source":"127.0.0.1","target":"admin","time":"2026-11-26T23:00:00.000Z"}',
  });
});

test('an event holding a secret-like value is recorded with it redacted: the action stays on the chain, the secret nowhere', async () => {
  // Review R2: the event used to be refused whole, so a key named like a key
  // ("pcl_..." pasted as its name) was created with no record at all.
  const { logger, lines } = capture();
  const dataDir = path.join(root, 'b');
  let failures = 0;
  const trail = createAuditTrail({ logger, log: createFileAuditLog({ dataDir }), clock: CLOCK, onAppendFailure: () => failures++ });
  const secret = 'pcl_' + '7'.repeat(49);
  await trail.record(loginEvent({ action: 'key.create', target: 'key_1', after: { id: 'key_1', name: secret, limits: { tokensPerMinute: 5 } } }));
  await trail.record(loginEvent({ action: 'key.rotate', target: 'key_1', after: { id: 'key_1', key: 'whatever' }, detail: { reason: 'x' } }));
  assert.deepEqual(lines.map((l) => [l['level'], l['msg'], l['action'], l['fields'] ?? l['error']]), [
    ['warn', 'audit event: secret-like fields were redacted before recording', 'key.create', 'after.name'],
    ['info', 'audit', 'key.create', undefined],
    ['warn', 'audit event: secret-like fields were redacted before recording', 'key.rotate', 'after.key'],
    ['info', 'audit', 'key.rotate', undefined],
  ]);
  assert.equal(failures, 0);
  assert.ok(!JSON.stringify(lines).includes(secret));
  assert.ok(!JSON.stringify(lines).includes('whatever'));
  const records = (await createFileAuditLog({ dataDir }).list({})).records;
  assert.deepEqual(
    records.map((r) => [r.action, r.after, r.detail]),
    [
      ['key.rotate', { id: 'key_1' }, { reason: 'x', redacted: ['after.key'] }],
      ['key.create', { id: 'key_1', name: '[redacted]', limits: { tokensPerMinute: 5 } }, { redacted: ['after.name'] }],
    ],
  );
});

test('without a log the event goes to the log stream only, as before', async () => {
  const { logger, lines } = capture();
  await createAuditTrail({ logger, clock: CLOCK }).record(loginEvent());
  assert.equal(lines[0]?.['msg'], 'audit');
  assert.equal(lines[0]?.['audit'], '{"action":"admin.login","actor":{"id":"admin","kind":"password"},"after":null,"before":null,"source":"127.0.0.1","target":"admin","time":"2026-11-26T23:00:00.000Z"}');
});

test('portcullis_audit_append_failures_total counts what serve passes as onAppendFailure', () => {
  const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => false, stateBackendUp: () => 1 });
  assert.match(metrics.expose(), /^portcullis_audit_append_failures_total 0$/m);
  metrics.auditAppendFailure();
  metrics.auditAppendFailure();
  assert.match(metrics.expose(), /^# TYPE portcullis_audit_append_failures_total counter$/m);
  assert.match(metrics.expose(), /^portcullis_audit_append_failures_total 2$/m);
});

test('an event that is not JSON (a bigint, a NaN) never makes record() reject', async () => {
  const { logger, lines } = capture();
  let failures = 0;
  const trail = createAuditTrail({ logger, log: createFileAuditLog({ dataDir: path.join(root, 'c') }), clock: CLOCK, onAppendFailure: () => failures++ });
  await trail.record(loginEvent({ detail: { n: 10n as unknown as number } }));
  await trail.record(loginEvent({ detail: { n: Number.NaN } }));
  assert.equal(failures, 2);
  assert.deepEqual(lines.map((l) => [l['level'], l['msg']]), [
    ['error', 'audit append failed; the event is only in this log line'],
    ['error', 'audit append failed; the event is only in this log line'],
  ]);
  assert.equal(lines[0]?.['event'], '"(the event cannot be written as JSON)"');
  assert.match(String(lines[1]?.['error']), /detail\.n is NaN: an audit record holds only JSON values/);
});
