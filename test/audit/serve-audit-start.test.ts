// `portcullis serve` (in-process) and the audit chain at start: records forged
// past the head (write access to audit.jsonl only) stop it before it listens,
// with the message that names them and what to do; nothing is appended.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { chainRecord, recordLine, type AuditRecord } from '../../src/audit/audit-record.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { portcullis } from '../cli/portcullis-in-process.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';
import { keyCreate } from './audit-fixtures.ts';

const tmp = tempDir('serve-audit-start');

test('records forged past the head: serve refuses to start, naming them, and appends nothing', async () => {
  const dataDir = freshPath(tmp, 'data');
  const log = createFileAuditLog({ dataDir });
  let last: AuditRecord = await log.append(keyCreate(1));
  last = await log.append(keyCreate(2));
  const file = path.join(dataDir, 'audit.jsonl');
  for (let i = 0; i < 2; i++) {
    last = chainRecord(keyCreate(100 + i, { target: 'key_forged' }), last);
    appendFileSync(file, recordLine(last) + '\n');
  }
  const before = readFileSync(file, 'utf8');
  const { code, stdout, stderr } = await portcullis(['serve', '--port', '0', '--admin-port', '0'], { cwd: tmp, env: { HOME: tmp, PORTCULLIS_DATA_DIR: dataDir } });
  assert.equal(code, 1);
  assert.equal(
    stderr,
    `portcullis serve: cannot start on the audit log: the audit log in ${dataDir} is not extended: records 3 to 4 (2) are past the stored head (seq 2); a crash leaves one at most, the one the head announced: they were appended by something other than portcullis, or the head was replaced with an older copy. List them (portcullis audit list --before 5 --json), compare with the "audit" lines of the log stream, then move them out of the log (docs/audit.md, "Records past the head"); until then appends are refused\n`,
  );
  assert.doesNotMatch(stdout, /"msg":"listening"/);
  assert.equal(readFileSync(file, 'utf8'), before);
});
