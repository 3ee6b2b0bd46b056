// `portcullis serve` (in-process) on a data directory whose budgets.json is
// broken: it stops before listening, naming the file, the fault and the remedy.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { portcullis } from '../cli/portcullis-in-process.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('serve-budget-file');

test('a budgets.json that is not JSON: serve refuses to start, naming it and how to recover', async () => {
  const dataDir = freshPath(tmp, 'data');
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'budgets.json');
  writeFileSync(file, '{"version":1,"keys":{');
  const { code, stdout, stderr } = await portcullis(['serve', '--port', '0', '--admin-port', '0'], { cwd: tmp, env: { HOME: tmp, PORTCULLIS_DATA_DIR: dataDir } });
  assert.equal(code, 1);
  assert.equal(
    stderr,
    `portcullis serve: cannot open the memory state backend: ${file}: is not valid JSON; restore it from a backup, or delete it with the server stopped (the current period's budgets restart at 0)\n`,
  );
  assert.doesNotMatch(stdout, /"msg":"listening"/);
});
