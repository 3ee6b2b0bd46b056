// The CLI's doors, run in-process through runCli with a
// recording trail: keys create, update, rotate and revoke and admin
// set-password each leave exactly one record with the OS user as actor (and
// the sudo user when run under sudo); reads and refused changes leave none;
// no record holds a raw key or its hash.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, test } from 'node:test';
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import { cliWho } from '../../src/cli/cli-actor.ts';
import { runCli } from '../../src/cli/main.ts';
import { hashApiKey } from '../../src/keys/api-key.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { sink } from '../support/collect.ts';
import { tempDir } from '../support/temp-dir.ts';

const root = tempDir('audit-cli');

const PASSWORD = 'correct horse battery staple';
const NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };
const me = os.userInfo();
const ACTOR = { kind: 'cli', id: me.username, uid: me.uid } as const;
const trail = recordingAuditTrail();

/** runCli on `dataDir` with `env` (no config file: the embedded one), the recording trail and `stdin`. */
async function cli(args: string[], dataDir: string, env: NodeJS.ProcessEnv = {}, stdin = ''): Promise<{ code: number; stdout: string; stderr: string; events: AuditEvent[] }> {
  const stdout = sink();
  const stderr = sink();
  const input = new PassThrough();
  input.end(stdin);
  const mark = trail.events.length;
  const code = await runCli(['--data-dir', dataDir, ...args], { stdout: stdout.stream, stderr: stderr.stream, env, cwd: root, stdin: input, audit: trail });
  return { code, stdout: stdout.text(), stderr: stderr.text(), events: trail.events.slice(mark) };
}

test('cliWho: the OS user, and the sudo user from SUDO_USER and SUDO_UID as name and detail, never as id', () => {
  assert.deepEqual(cliWho({}), { actor: ACTOR, source: 'cli' });
  assert.deepEqual(cliWho({ SUDO_USER: 'alice', SUDO_UID: '1000' }), { actor: { ...ACTOR, name: 'alice' }, source: 'cli', detail: { sudoUser: 'alice', sudoUid: 1000 } });
  assert.deepEqual(cliWho({ SUDO_USER: 'alice', SUDO_UID: 'x1' }), { actor: { ...ACTOR, name: 'alice' }, source: 'cli', detail: { sudoUser: 'alice', sudoUid: null } });
  assert.deepEqual(cliWho({ SUDO_USER: '' }), { actor: ACTOR, source: 'cli' });
  assert.equal((cliWho({ SUDO_USER: 'b'.repeat(1000) }).actor.name ?? '').length, 256);
});

test('keys create, update, rotate and revoke: one record each with the key before and after; reads and refusals none', async () => {
  const dataDir = path.join(root, 'keys');
  const rawKeys: string[] = [];

  const created = await cli(['keys', 'create', '--name', 'cli-app', '--allow', 'service-chat', '--rpm', '30', '--json'], dataDir);
  assert.equal(created.code, 0, created.stderr);
  const { id, key, prefix } = JSON.parse(created.stdout) as { id: string; key: string; prefix: string };
  rawKeys.push(key);
  const view = {
    id,
    name: 'cli-app',
    prefix,
    status: 'active',
    expiresAt: null,
    allowedAliases: ['service-chat'],
    limits: { ...NO_LIMITS, requestsPerMinute: 30 },
    guard: null,
    revokedAt: null,
    rotatedAt: null,
  };
  assert.deepEqual(created.events, [{ actor: ACTOR, source: 'cli', action: 'key.create', target: id, before: null, after: view }]);

  const updated = await cli(['keys', 'update', id, '--name', 'cli-app-2', '--rpm', 'none', '--expires', '2030-01-01T00:00:00Z', '--guard', 'secrets=block', '--guard', 'email=mask', '--json'], dataDir);
  assert.equal(updated.code, 0, updated.stderr);
  const viewUpdated = { ...view, name: 'cli-app-2', expiresAt: '2030-01-01T00:00:00.000Z', limits: NO_LIMITS, guard: { detectors: { secrets: 'block', email: 'mask' } } };
  assert.deepEqual(updated.events, [{ actor: ACTOR, source: 'cli', action: 'key.update', target: id, before: view, after: viewUpdated }]);

  const rotated = await cli(['keys', 'rotate', id, '--json'], dataDir);
  assert.equal(rotated.code, 0, rotated.stderr);
  const afterRotate = JSON.parse(rotated.stdout) as { key: string; prefix: string; rotatedAt: string };
  rawKeys.push(afterRotate.key);
  const viewRotated = { ...viewUpdated, prefix: afterRotate.prefix, rotatedAt: afterRotate.rotatedAt };
  assert.deepEqual(rotated.events, [{ actor: ACTOR, source: 'cli', action: 'key.rotate', target: id, before: viewUpdated, after: viewRotated }]);

  const revoked = await cli(['keys', 'revoke', id, '--json'], dataDir);
  assert.equal(revoked.code, 0, revoked.stderr);
  const { revokedAt } = JSON.parse(revoked.stdout) as { revokedAt: string };
  assert.deepEqual(revoked.events, [{ actor: ACTOR, source: 'cli', action: 'key.revoke', target: id, before: viewRotated, after: { ...viewRotated, status: 'revoked', revokedAt } }]);

  // Reads, an unknown id, a revoked key and a bad flag: exit codes as ever, no record.
  const quiet = [
    await cli(['keys', 'list'], dataDir),
    await cli(['keys', 'show', id], dataDir),
    await cli(['keys', 'update', 'key_ZZZZZZZZZZZZZZZZ', '--name', 'x'], dataDir),
    await cli(['keys', 'rotate', 'key_ZZZZZZZZZZZZZZZZ'], dataDir),
    await cli(['keys', 'revoke', 'key_ZZZZZZZZZZZZZZZZ'], dataDir),
    await cli(['keys', 'revoke', id], dataDir),
    await cli(['keys', 'rotate', id], dataDir),
    await cli(['keys', 'create', '--name', 'x', '--rpm', '0'], dataDir),
  ];
  assert.deepEqual(quiet.map((r) => r.code), [0, 0, 1, 1, 1, 1, 1, 2]);
  assert.deepEqual(quiet.flatMap((r) => r.events), []);

  const serialized = JSON.stringify(trail.events);
  for (const raw of rawKeys) {
    assert.equal(serialized.includes(raw.slice(12)), false, 'the secret after the display prefix');
    assert.equal(serialized.includes(hashApiKey(raw)), false);
  }
});

test('under sudo: the OS user stays the id, the sudo user is the name and the detail', async () => {
  const dataDir = path.join(root, 'sudo');
  const created = await cli(['keys', 'create', '--name', 'sudo-app', '--json'], dataDir, { SUDO_USER: 'alice', SUDO_UID: '1000' });
  assert.equal(created.code, 0, created.stderr);
  const { id, prefix } = JSON.parse(created.stdout) as { id: string; prefix: string };
  assert.deepEqual(created.events, [
    {
      actor: { ...ACTOR, name: 'alice' },
      source: 'cli',
      action: 'key.create',
      target: id,
      before: null,
      after: { id, name: 'sudo-app', prefix, status: 'active', expiresAt: null, allowedAliases: null, limits: NO_LIMITS, guard: null, revokedAt: null, rotatedAt: null },
      detail: { sudoUser: 'alice', sudoUid: 1000 },
    },
  ]);
});

test('admin set-password: one record naming the time of the password replaced; a refused one none', async () => {
  const dataDir = path.join(root, 'admin');
  const updatedAt = (): string => (JSON.parse(readFileSync(path.join(dataDir, 'admin.json'), 'utf8')) as { updatedAt: string }).updatedAt;

  const first = await cli(['admin', 'set-password'], dataDir, {}, `${PASSWORD}\n`);
  assert.equal(first.code, 0, first.stderr);
  const firstAt = updatedAt();
  assert.deepEqual(first.events, [{ actor: ACTOR, source: 'cli', action: 'admin.password_set', target: 'admin', before: null, after: { updatedAt: firstAt } }]);

  const weak = await cli(['admin', 'set-password'], dataDir, {}, 'short\n');
  assert.equal(weak.code, 1);
  assert.deepEqual(weak.events, []);

  const second = await cli(['admin', 'set-password'], dataDir, { SUDO_USER: 'bob', SUDO_UID: '1001' }, `${PASSWORD} again\n`);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(second.events, [
    {
      actor: { ...ACTOR, name: 'bob' },
      source: 'cli',
      action: 'admin.password_set',
      target: 'admin',
      before: { updatedAt: firstAt },
      after: { updatedAt: updatedAt() },
      detail: { sudoUser: 'bob', sudoUid: 1001 },
    },
  ]);
  assert.equal(JSON.stringify(trail.events).includes(PASSWORD), false);
});
