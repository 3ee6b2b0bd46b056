// Every CLI door through the real chain, end to end, with the data
// directory's file: `portcullis` runs in-process (runCli) with the command's
// own trail, and `audit list --json` / `audit verify` read back what landed
// in audit.jsonl. No recording fake anywhere. The compiled bin, serve's doors
// and the Redis chain are in doors-e2e.system.test.ts.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { portcullis as runPortcullis } from '../cli/portcullis-in-process.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { assertNoSecret, CLI_ACTOR, CLI_SEQUENCE, cliDoors, ok, PASSWORD, readBack, summary, USER, type Portcullis } from './doors-e2e-fixtures.ts';

const root = tempDir('audit-e2e');

/** The command in `dir`, as a user at a terminal there runs it. */
function portcullisIn(dir: string): Portcullis {
  return (args, input, env = {}) => runPortcullis(args, { cwd: dir, env: { HOME: dir, USER, LOGNAME: USER, ...env }, ...(input === undefined ? {} : { input }) });
}

describe('every CLI door in-process, read back with audit list and verify', () => {
  test('file backend: each CLI action leaves exactly one record in audit.jsonl', async () => {
    const dir = freshDir(root);
    const portcullis = portcullisIn(dir);
    const flags = ['--data-dir', path.join(dir, 'data')];
    const { keyId, tokenId, secrets } = await cliDoors(portcullis, flags);
    const { records, verify } = await readBack(portcullis, flags);
    assert.deepEqual(records.map(summary), CLI_SEQUENCE(keyId, tokenId));
    assert.deepEqual(records.map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7]);
    for (const r of records) assert.deepEqual(r.actor, CLI_ACTOR);
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal(verify.stdout, `audit log in ${path.join(dir, 'data')} is whole: 7 records, seq 1 to 7\nhead: ${records[6]?.hash}\n`);
    for (const name of readdirSync(path.join(dir, 'data'))) assertNoSecret(readFileSync(path.join(dir, 'data', name), 'utf8'), secrets.slice(0, 3), name === 'audit.jsonl' ? 'audit.jsonl' : name);
    assertNoSecret(readFileSync(path.join(dir, 'data', 'audit.jsonl'), 'utf8'), secrets, 'audit.jsonl');
  });

  test('a key named like a key is still recorded, the name redacted (it used to leave no record)', async () => {
    const dir = freshDir(root);
    const portcullis = portcullisIn(dir);
    const flags = ['--data-dir', path.join(dir, 'data')];
    const name = 'pcl_' + 'A'.repeat(24);
    const created = JSON.parse(ok(await portcullis(['keys', 'create', '--name', name, '--json', ...flags]), 'keys create').stdout) as { id: string };
    const { records, verify } = await readBack(portcullis, flags);
    assert.deepEqual(
      records.map((r) => [r.action, r.target, r.after?.['name'], r.detail]),
      [['key.create', created.id, '[redacted]', { redacted: ['after.name'] }]],
    );
    assert.equal(verify.code, 0, verify.stderr);
    assert.ok(!readFileSync(path.join(dir, 'data', 'audit.jsonl'), 'utf8').includes(name));
  });

  test('run with sudo: keys, set-password and tokens name the same actor, with the sudo user in the detail', async () => {
    const dir = freshDir(root);
    const portcullis = portcullisIn(dir);
    const flags = ['--data-dir', path.join(dir, 'data')];
    const sudo = { SUDO_USER: 'alice', SUDO_UID: '1001' };
    ok(await portcullis(['keys', 'create', '--name', 'k', ...flags], undefined, sudo), 'keys create');
    ok(await portcullis(['admin', 'set-password', ...flags], `${PASSWORD}\n${PASSWORD}\n`, sudo), 'admin set-password');
    const token = JSON.parse(ok(await portcullis(['admin', 'tokens', 'create', '--name', 'ci', '--scope', 'read', '--json', ...flags], undefined, sudo), 'tokens create').stdout) as { id: string };
    ok(await portcullis(['admin', 'tokens', 'revoke', token.id, ...flags], undefined, sudo), 'tokens revoke');
    const { records, verify } = await readBack(portcullis, flags);
    assert.deepEqual(records.map((r) => r.action), ['key.create', 'admin.password_set', 'token.create', 'token.revoke']);
    for (const r of records) {
      assert.deepEqual([r.actor, r.source, r.detail], [{ ...CLI_ACTOR, name: 'alice' }, 'cli', { sudoUser: 'alice', sudoUid: 1001 }], r.action);
    }
    assert.equal(verify.code, 0, verify.stderr);
  });
});
