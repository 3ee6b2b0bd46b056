// budgets.json on disk: read at open (absent: nothing; broken: an error naming it),
// written by rename, writes grouped so concurrent callers share one.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openBudgetFile } from '../../src/state/budget-file.ts';
import type { JournalEntry } from '../../src/limits/budget-journal.ts';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('budget-file');
let dirs = 0;
function dataDir(): string {
  const dir = path.join(tmp, `d${++dirs}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

test('absent: no counts; each save replaces the file with the counts of its start, leaving no temp file', async () => {
  const dir = dataDir();
  const file = openBudgetFile(dir);
  assert.deepEqual(file.entries, []);
  const entries: JournalEntry[] = [{ keyId: 'k', kind: 'tokens', windowId: '2026-11-22', used: 5 }];
  await file.save(() => entries);
  assert.equal(readFileSync(path.join(dir, 'budgets.json'), 'utf8'), '{"version":1,"keys":{"k":{"tokens":{"2026-11-22":5}}}}\n');
  assert.deepEqual(readdirSync(dir), ['budgets.json']);
  assert.deepEqual(openBudgetFile(dir).entries, entries);
});

test('saves that arrive during a write share the next one, which holds the latest counts', async () => {
  const dir = dataDir();
  const file = openBudgetFile(dir);
  let used = 0;
  const snapshot = (): JournalEntry[] => [{ keyId: 'k', kind: 'cost', windowId: '2026-11', used }];
  const saves: Promise<void>[] = [];
  for (let i = 0; i < 50; i++) {
    used = i + 1;
    saves.push(file.save(snapshot));
  }
  await Promise.all(saves);
  // The first write, then one for the 49 that waited.
  assert.equal(file.writes(), 2);
  assert.deepEqual(openBudgetFile(dir).entries, [{ keyId: 'k', kind: 'cost', windowId: '2026-11', used: 50 }]);
});

test('a broken budgets.json stops the open with the file and the field named', () => {
  const dir = dataDir();
  writeFileSync(path.join(dir, 'budgets.json'), '{"version":1,"keys":{"k":{"tokens":{"2026-11-22":"5"}}}}');
  assert.throws(() => openBudgetFile(dir), { name: 'BudgetJournalError', message: `${path.join(dir, 'budgets.json')}: keys.k.tokens.2026-11-22 must be an integer from 0 to 4000000000000000` });
});

test('a failed write rejects the callers of that write, and the next save writes again', async () => {
  const dir = path.join(dataDir(), 'gone');
  const file = openBudgetFile(dir);
  await assert.rejects(file.save(() => []), { code: 'ENOENT' });
  mkdirSync(dir);
  await file.save(() => []);
  assert.equal(readFileSync(path.join(dir, 'budgets.json'), 'utf8'), '{"version":1,"keys":{}}\n');
});
