// auditedTokenStore over the real file token store: each create and revoke is
// recorded write-ahead (before admin-tokens.json holds it), with the token's
// non-secret fields as the store decided them; a record that cannot be
// appended stops the change; refusals and reads record nothing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { AuditEvent, AuditTrail } from '../../src/audit/audit-event.ts';
import { AuditLogError } from '../../src/audit/audit-log.ts';
import { AdminTokenAlreadyRevokedError, AdminTokenNotFoundError } from '../../src/keys/admin-token-errors.ts';
import { adminTokenAuditFields } from '../../src/keys/admin-token.ts';
import { auditedTokenStore } from '../../src/state/audited-token-store.ts';
import { openFileAdminTokenStore } from '../../src/state/file-admin-token-store.ts';
import { freshPath, memoryTempDir } from '../support/temp-dir.ts';

const root = memoryTempDir('audited-tokens');
const NOW = Date.parse('2026-11-28T10:00:00.000Z');
const WHO = { actor: { kind: 'cli', id: 'alice', uid: 1000 }, source: 'cli', detail: { sudoUser: 'bob', sudoUid: 1001 } } as const;
const INPUT = { name: 'ci', scopes: ['keys'], expiresAt: '2026-12-28T10:00:00.000Z', createdBy: 'cli:alice' };

/** A trail that notes each event begun and what admin-tokens.json held for its target then. */
function steppingTrail(dir: string, refuse: Error | null = null) {
  const steps: string[] = [];
  const events: AuditEvent[] = [];
  const onDisk = (id: string | null): string => {
    let tokens: Array<{ id: string; revokedAt: string | null }> = [];
    try {
      ({ tokens } = JSON.parse(readFileSync(path.join(dir, 'admin-tokens.json'), 'utf8')) as { tokens: typeof tokens });
    } catch {
      // no file yet
    }
    const token = tokens.find((t) => t.id === id);
    return token === undefined ? 'absent' : token.revokedAt === null ? 'active' : 'revoked';
  };
  const trail: AuditTrail = {
    async record(event) {
      steps.push(`record ${event.action}`);
    },
    async begin(event) {
      steps.push(`begin ${event.action}, admin-tokens.json: ${onDisk(event.target)}`);
      if (refuse !== null) throw refuse;
      events.push(event);
      return { seq: events.length, done: async () => void steps.push(`done ${events.length}`), failed: async (reason) => void steps.push(`failed: ${reason}`) };
    },
  };
  return { trail, steps, events };
}

test('create and revoke: recorded before admin-tokens.json holds them, with the fields as the store decided them', async () => {
  const dir = freshPath(root, 'data');
  const store = openFileAdminTokenStore(dir);
  const { trail, steps, events } = steppingTrail(dir);
  const tokens = auditedTokenStore(store, trail, WHO);
  const { record } = await tokens.create(INPUT, NOW);
  const revoked = await tokens.revoke(record.id, NOW + 1000);
  assert.deepEqual(steps, ['begin token.create, admin-tokens.json: absent', 'done 1', 'begin token.revoke, admin-tokens.json: active', 'done 2']);
  assert.deepEqual(events, [
    { ...WHO, action: 'token.create', target: record.id, before: null, after: adminTokenAuditFields(record) },
    { ...WHO, action: 'token.revoke', target: record.id, before: adminTokenAuditFields(record), after: adminTokenAuditFields(revoked) },
  ]);
  // Refusals before a change is decided record nothing; reads pass through.
  await assert.rejects(tokens.revoke(record.id, NOW), AdminTokenAlreadyRevokedError);
  await assert.rejects(tokens.revoke('tok_ZZZZZZZZZZZZZZZZ', NOW), AdminTokenNotFoundError);
  assert.deepEqual((await tokens.list()).map((t) => t.id), [record.id]);
  assert.equal(tokens.location, store.location);
  assert.equal(events.length, 2);
});

test('a record that cannot be appended stops the change: no token is stored', async () => {
  const dir = freshPath(root, 'data');
  const store = openFileAdminTokenStore(dir);
  const { trail, steps } = steppingTrail(dir, new AuditLogError('disk full'));
  await assert.rejects(auditedTokenStore(store, trail, WHO).create(INPUT, NOW), (error: unknown) => error instanceof AuditLogError && error.message === 'disk full');
  assert.deepEqual(await store.list(), []);
  assert.deepEqual(steps, ['begin token.create, admin-tokens.json: absent']);
});
