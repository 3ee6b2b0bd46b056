// What the end-to-end door tests share: every CLI door once, the chain read
// back with `audit list --json` and `audit verify`, and the record sequence
// they must leave. The CLI runs however the test file says (in-process with
// the command's own trail, or the compiled bin): the chain is always the
// real one, never a recording fake.
import assert from 'node:assert/strict';
import os from 'node:os';
import type { AuditRecord } from '../../src/audit/audit-record.ts';

export const PASSWORD = 'correct horse battery staple';
export const USER = os.userInfo().username;
export const CLI_ACTOR = { kind: 'cli', id: USER, uid: os.userInfo().uid };

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `portcullis ARGS...` with `input` on stdin and `env` added to the command's environment. */
export type Portcullis = (args: string[], input?: string, env?: Record<string, string>) => Promise<Run>;

export function ok(run: Run, what: string): Run {
  assert.equal(run.code, 0, `${what}: exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  return run;
}

/** The CLI's keys and tokens doors, each once; returns every secret it printed. */
export async function cliDoors(portcullis: Portcullis, flags: string[]): Promise<{ keyId: string; tokenId: string; secrets: string[] }> {
  const created = JSON.parse(ok(await portcullis(['keys', 'create', '--name', 'e2e', '--json', ...flags]), 'keys create').stdout) as { key: string; id: string };
  const keyId = created.id;
  ok(await portcullis(['keys', 'update', keyId, '--name', 'e2e-renamed', ...flags]), 'keys update');
  const rotated = JSON.parse(ok(await portcullis(['keys', 'rotate', keyId, '--json', ...flags]), 'keys rotate').stdout) as { key: string };
  ok(await portcullis(['keys', 'revoke', keyId, ...flags]), 'keys revoke');
  ok(await portcullis(['admin', 'set-password', ...flags], `${PASSWORD}\n${PASSWORD}\n`), 'admin set-password');
  const token = JSON.parse(ok(await portcullis(['admin', 'tokens', 'create', '--name', 'ci', '--scope', 'read', '--json', ...flags]), 'tokens create').stdout) as { token: string; id: string };
  ok(await portcullis(['admin', 'tokens', 'revoke', token.id, ...flags]), 'tokens revoke');
  return { keyId, tokenId: token.id, secrets: [created.key, rotated.key, token.token, PASSWORD] };
}

/** `audit list --json` oldest first, and `audit verify`'s verdict. */
export async function readBack(portcullis: Portcullis, flags: string[]): Promise<{ records: AuditRecord[]; verify: Run }> {
  const listed = ok(await portcullis(['audit', 'list', '--json', '--limit', '1000', ...flags]), 'audit list');
  const records = listed.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditRecord)
    .reverse();
  return { records, verify: await portcullis(['audit', 'verify', ...flags]) };
}

export const summary = (r: AuditRecord): [string, string, string, string | null] => [r.action, `${r.actor.kind}:${r.actor.id}`, r.source, r.target];

export const CLI_SEQUENCE = (keyId: string, tokenId: string): Array<[string, string, string, string | null]> => [
  ['key.create', `cli:${USER}`, 'cli', keyId],
  ['key.update', `cli:${USER}`, 'cli', keyId],
  ['key.rotate', `cli:${USER}`, 'cli', keyId],
  ['key.revoke', `cli:${USER}`, 'cli', keyId],
  ['admin.password_set', `cli:${USER}`, 'cli', 'admin'],
  ['token.create', `cli:${USER}`, 'cli', tokenId],
  ['token.revoke', `cli:${USER}`, 'cli', tokenId],
];

export function assertNoSecret(text: string, secrets: readonly string[], where: string): void {
  for (const secret of secrets) assert.ok(!text.includes(secret), `${where} holds a secret (${secret.slice(0, 8)}...)`);
}
