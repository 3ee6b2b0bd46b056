// `portcullis audit verify|list` through the real command line (runCli), on a
// data directory; on the Redis backend in audit-command.system.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { canonicalJson, type AuditRecord } from '../../src/audit/audit-record.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { runCli } from '../../src/cli/main.ts';
import { sink } from '../support/collect.ts';
import { tempDir } from '../support/temp-dir.ts';
import { keyCreate } from './audit-fixtures.ts';

const root = tempDir('audit-cli');
let counter = 0;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(args, { stdout: stdout.stream, stderr: stderr.stream, env: {}, cwd: root });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A data directory with `n` key.create records (and the stderr line every command starts with). */
async function dataDirWith(n: number): Promise<{ dir: string; records: AuditRecord[]; where: string }> {
  const dir = path.join(root, `data-${counter++}`);
  const log = createFileAuditLog({ dataDir: dir });
  const records: AuditRecord[] = [];
  for (let i = 1; i <= n; i++) records.push(await log.append(keyCreate(i, i === 3 ? { actor: { kind: 'token', id: 'tok_1', name: 'ci' }, action: 'key.revoke', target: 'key_0001' } : {})));
  return { dir, records, where: `portcullis audit: data directory ${dir} (from --data-dir)\n` };
}

describe('portcullis audit verify', () => {
  test('a whole chain: exit 0, count, seq span and head', async () => {
    const { dir, records, where } = await dataDirWith(4);
    const result = await cli(['audit', 'verify', '--data-dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, where);
    assert.equal(result.stdout, `audit log in ${dir} is whole: 4 records, seq 1 to 4\nhead: ${records[3]?.hash}\n`);
  });

  test('an edited record: exit 1 naming file, line, seq and what happened', async () => {
    const { dir, where } = await dataDirWith(4);
    const file = path.join(dir, 'audit.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"name":"app-2"', '"name":"app-two"'));
    const result = await cli(['audit', 'verify', '--data-dir', dir]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `${where}portcullis audit verify: the audit log in ${dir} is BROKEN (hash_mismatch): audit.jsonl line 2 (seq 2): hash does not match its content: the record was edited\n`,
    );
  });

  test('a deleted record and a truncated log: exit 1', async () => {
    const deleted = await dataDirWith(4);
    const file = path.join(deleted.dir, 'audit.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, [lines[0], lines[2], lines[3], ''].join('\n'));
    const gap = await cli(['audit', 'verify', '--data-dir', deleted.dir]);
    assert.equal(gap.code, 1);
    assert.match(gap.stderr, /BROKEN \(seq_gap\): audit.jsonl line 2 \(seq 3\): seq 3 follows seq 1: record 2 is missing here/);
    const truncated = await dataDirWith(4);
    const tfile = path.join(truncated.dir, 'audit.jsonl');
    writeFileSync(tfile, readFileSync(tfile, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
    const cut = await cli(['audit', 'verify', '--data-dir', truncated.dir]);
    assert.equal(cut.code, 1);
    assert.match(cut.stderr, /BROKEN \(missing_records\): .*records 3 to 4 were removed \(the log was truncated\)/);
  });

  test('--expect-head: a hash in the chain passes; another fails; a malformed one is a usage error', async () => {
    const { dir, records } = await dataDirWith(3);
    assert.equal((await cli(['audit', 'verify', '--data-dir', dir, '--expect-head', records[1]?.hash as string])).code, 0);
    const other = await cli(['audit', 'verify', '--data-dir', dir, '--expect-head', 'c'.repeat(64)]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /BROKEN \(head_mismatch\): the chain: no record has the expected head hash c{64}/);
    const bad = await cli(['audit', 'verify', '--data-dir', dir, '--expect-head', 'xyz']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /portcullis audit verify: --expect-head must be a record hash: 64 lowercase hex digits\nRun "portcullis audit --help" for usage.\n$/);
  });

  test('--json prints the verification as one object, with exit 0 or 1', async () => {
    const { dir, records } = await dataDirWith(2);
    const ok = await cli(['audit', 'verify', '--data-dir', dir, '--json']);
    assert.equal(ok.code, 0);
    assert.deepEqual(JSON.parse(ok.stdout), {
      location: dir,
      ok: true,
      count: 2,
      firstSeq: 1,
      lastSeq: 2,
      head: { seq: 2, hash: records[1]?.hash },
      trimmed: false,
      message: `audit chain intact: 2 records, seq 1 to 2, head ${records[1]?.hash}`,
    });
    writeFileSync(path.join(dir, 'audit.jsonl'), 'garbage\n');
    const bad = await cli(['audit', 'verify', '--data-dir', dir, '--json']);
    assert.equal(bad.code, 1);
    assert.deepEqual(JSON.parse(bad.stdout), { location: dir, ok: false, reason: 'malformed', file: 'audit.jsonl', line: 1, seq: null, message: 'audit.jsonl line 1: not a valid audit record: is not JSON' });
  });

  test('usage errors exit 2', async () => {
    const { dir } = await dataDirWith(1);
    for (const [args, problem] of [
      [['audit'], 'portcullis audit: missing command (verify or list)'],
      [['audit', 'check'], "portcullis audit: unknown command 'check' (verify or list)"],
      [['audit', 'verify', '--fast'], "portcullis audit verify: unknown option '--fast'"],
      [['audit', 'list', '--limit', '0'], 'portcullis audit list: --limit must be a whole number from 1 to 1000.\n'],
      [['audit', 'list', '--action', 'key.delete'], 'portcullis audit list: --action must be one of: key.create, key.update'],
      [['audit', 'list', '--since', 'yesterday'], 'portcullis audit list: --since must be an ISO 8601 time'],
      [['audit', 'list', 'extra'], "portcullis audit list: unexpected argument 'extra'"],
    ] as const) {
      const result = await cli([...args, '--data-dir', dir]);
      assert.equal(result.code, 2, args.join(' '));
      assert.ok(result.stderr.includes(problem), `${args.join(' ')}: ${result.stderr}`);
    }
  });

  test('a data directory that does not exist: exit 1 naming it (not "whole"), and nothing is created; an empty one has no records yet', async () => {
    const missing = path.join(root, `missing-${counter++}`);
    for (const command of ['verify', 'list']) {
      const result = await cli(['audit', command, '--data-dir', missing]);
      assert.equal(result.code, 1, command);
      assert.equal(result.stdout, '', command);
      assert.equal(
        result.stderr,
        `portcullis audit: data directory ${missing} (from --data-dir)\n` +
          `portcullis audit ${command}: cannot open the audit log: there is no data directory at ${missing}, so no audit log to read; name the gateway's with --config FILE or --data-dir DIR\n`,
      );
    }
    assert.equal(existsSync(missing), false);
    const empty = path.join(root, `empty-${counter++}`);
    mkdirSync(empty);
    const fresh = await cli(['audit', 'verify', '--data-dir', empty]);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout, `audit log in ${empty} is whole: no records yet\nhead: ${'0'.repeat(64)}\n`);
  });

  test('--help prints the usage and exits 0', async () => {
    const result = await cli(['audit', '--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^Usage: portcullis audit <command> \[options\]/);
  });
});

describe('portcullis audit list', () => {
  test('a table newest first with time, seq, actor, source, action and target', async () => {
    const { dir, where } = await dataDirWith(3);
    const result = await cli(['audit', 'list', '--data-dir', dir]);
    assert.equal(result.code, 0);
    assert.equal(result.stderr, where);
    assert.equal(
      result.stdout,
      'TIME                      SEQ  ACTOR      SOURCE  ACTION      TARGET    DETAIL\n' +
        '2026-11-26T12:00:03.000Z  3    token:ci   cli     key.revoke  key_0001  -\n' +
        '2026-11-26T12:00:02.000Z  2    cli:alice  cli     key.create  key_0002  -\n' +
        '2026-11-26T12:00:01.000Z  1    cli:alice  cli     key.create  key_0001  -\n',
    );
  });

  test('the DETAIL column: a refusal\'s reason, what a token did, a refused reload\'s setting, the sudo user, what was redacted; terminal controls as "?"', async () => {
    const dir = path.join(root, `data-${counter++}`);
    const log = createFileAuditLog({ dataDir: dir });
    const token = { kind: 'token', id: 'tok_1', name: 'ci' } as const;
    await log.append(keyCreate(1, { actor: token, action: 'token.refused', target: 'tok_1', after: null, detail: { reason: 'admin_token_revoked' } }));
    await log.append(keyCreate(2, { actor: token, action: 'token.use', target: 'tok_1', after: null, detail: { method: 'GET', path: '/api/keys\u001b[2J', status: 200 } }));
    await log.append(keyCreate(3, { detail: { sudoUser: 'bob', sudoUid: 1001, redacted: ['after.name'] } }));
    const system = { kind: 'system', id: 'serve' } as const;
    await log.append(keyCreate(4, { actor: system, source: 'signal', action: 'config.reload_refused', target: '/etc/portcullis.json', after: null, detail: { path: 'admin.oidc.issuer', problem: 'admin.oidc.issuer: must be an https:// URL' } }));
    const counted = { method: 'GET', route: '/api/keys/:id', count: 12, statuses: { 200: 11, 404: 1 }, first: '2026-11-26T12:00:00.000Z', last: '2026-11-26T12:00:59.000Z' };
    await log.append(keyCreate(5, { actor: token, action: 'token.use', target: 'tok_1', after: null, detail: counted }));
    const digests = { digest: 'b'.repeat(64), previousDigest: 'a'.repeat(64), restartNeeded: [] };
    await log.append(keyCreate(6, { actor: system, source: 'signal', action: 'config.reload', target: '/etc/portcullis.json', after: null, detail: { ...digests, changes: 5, changed: ['log.level', 'limits.maxConnections', 'aliases.a', 'aliases.b', 'aliases.c'] } }));
    await log.append(keyCreate(7, { actor: system, source: 'signal', action: 'config.reload', target: '/etc/portcullis.json', after: null, detail: { ...digests, changes: 0, changed: [] } }));
    const result = await cli(['audit', 'list', '--data-dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      // The last column: after the last run of two spaces (a detail has single spaces only).
      result.stdout.split('\n').slice(1, 8).map((line) => line.slice(line.lastIndexOf('  ') + 2)),
      [
        'nothing changed',
        'changed: log.level, limits.maxConnections, aliases.a and 2 more',
        'GET /api/keys/:id x12 (200 x11, 404 x1)',
        'at admin.oidc.issuer',
        'sudo by bob; redacted: after.name',
        'GET /api/keys?[2J 200',
        'admin_token_revoked',
      ],
    );
  });

  test('filters, --json lines and the hint for the next page', async () => {
    const { dir, records } = await dataDirWith(5);
    const byKey = await cli(['audit', 'list', '--data-dir', dir, '--key', 'key_0001', '--json']);
    assert.equal(byKey.stdout, `${canonicalJson(records[2])}\n${canonicalJson(records[0])}\n`);
    const byActor = await cli(['audit', 'list', '--data-dir', dir, '--actor', 'ci', '--json']);
    assert.equal(byActor.stdout, `${canonicalJson(records[2])}\n`);
    // As the table shows the actor (kind:name or kind:id): a value copied from it finds the same records.
    assert.equal((await cli(['audit', 'list', '--data-dir', dir, '--actor', 'token:ci', '--json'])).stdout, byActor.stdout);
    assert.equal((await cli(['audit', 'list', '--data-dir', dir, '--actor', 'token:tok_1', '--json'])).stdout, byActor.stdout);
    assert.equal((await cli(['audit', 'list', '--data-dir', dir, '--actor', 'cli:ci', '--json'])).stdout, '', 'the kind must be the actor\'s');
    const byAction = await cli(['audit', 'list', '--data-dir', dir, '--action', 'key.create', '--since', '2026-11-26T12:00:02Z', '--until', '2026-11-26T12:00:05Z', '--json']);
    assert.deepEqual(byAction.stdout.trim().split('\n').map((l) => (JSON.parse(l) as AuditRecord).seq), [4, 2]);
    const paged = await cli(['audit', 'list', '--data-dir', dir, '--limit', '2', '--json']);
    assert.deepEqual(paged.stdout.trim().split('\n').map((l) => (JSON.parse(l) as AuditRecord).seq), [5, 4]);
    assert.ok(paged.stderr.endsWith('portcullis audit list: more records: add --before 4\n'), paged.stderr);
    const none = await cli(['audit', 'list', '--data-dir', dir, '--key', 'key_none']);
    assert.equal(none.stdout, 'No audit records match.\n');
  });

  test('a record that is not valid: exit 1 with the file and advice', async () => {
    const { dir } = await dataDirWith(2);
    writeFileSync(path.join(dir, 'audit.jsonl'), readFileSync(path.join(dir, 'audit.jsonl'), 'utf8').replace('"seq":2', '"seq":"2"'));
    const result = await cli(['audit', 'list', '--data-dir', dir]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /portcullis audit list: audit.jsonl holds a line that is not a valid record \(field seq must be a whole number from 1\); run portcullis audit verify\n$/);
  });
});
