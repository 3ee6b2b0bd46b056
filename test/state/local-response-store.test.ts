// The local response store: the contract in memory and in a directory, then what only
// the directory has (records outliving a restart, files removed at their deadline,
// debris of a crashed write).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { openLocalResponseStore } from '../../src/state/local-response-store.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { DEFAULT_TEST_LIMITS, runResponseStoreContract, turn } from './response-store-contract.ts';

const root = memoryTempDir('response-store');
runResponseStoreContract('memory', (scheduler, limits) => openLocalResponseStore({ dir: null, scheduler, limits }));
runResponseStoreContract('directory', (scheduler, limits) => openLocalResponseStore({ dir: join(freshDir(root), 'responses'), scheduler, limits }));

test('directory: records outlive a restart with their owners; one expired meanwhile is removed at the start', async () => {
  const dir = join(freshDir(root), 'responses');
  const scheduler = new ManualScheduler();
  const first = await openLocalResponseStore({ dir, scheduler, limits: DEFAULT_TEST_LIMITS });
  const early = turn(scheduler, 'resp_early', 'key_a', 'one');
  await first.put(early);
  await scheduler.advance(30_000);
  const late = turn(scheduler, 'resp_late', 'key_b', 'two');
  await first.put(late);
  await first.close();
  assert.equal(statSync(join(dir, 'resp_late.json')).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);

  await scheduler.advance(30_000);
  const problems: string[] = [];
  const second = await openLocalResponseStore({ dir, scheduler, limits: DEFAULT_TEST_LIMITS, onProblem: (m) => problems.push(m) });
  assert.deepEqual(readdirSync(dir), ['resp_late.json']);
  assert.equal(await second.get('resp_early', 'key_a'), null);
  assert.deepEqual(await second.get('resp_late', 'key_b'), late);
  assert.equal(await second.get('resp_late', 'key_a'), null);
  assert.deepEqual(problems, []);
  await second.close();
});

test('directory: the file is there 1 ms before the deadline and removed at it, by the scheduler’s timer', async () => {
  const dir = join(freshDir(root), 'responses');
  const scheduler = new ManualScheduler();
  const store = await openLocalResponseStore({ dir, scheduler, limits: DEFAULT_TEST_LIMITS });
  await store.put(turn(scheduler, 'resp_x', 'key_a', 'one'));
  await scheduler.advance(10_000);
  await store.put(turn(scheduler, 'resp_y', 'key_a', 'two'));
  assert.deepEqual(scheduler.pending(), [50_000]);
  await scheduler.advance(49_999);
  assert.deepEqual(readdirSync(dir).sort(), ['resp_x.json', 'resp_y.json']);
  await scheduler.advance(1);
  await store.close();
  assert.deepEqual(readdirSync(dir), ['resp_y.json']);
  assert.deepEqual(scheduler.pending(), [], 'close() clears the timer');
});

test('directory: debris of a crashed write and a file that is no record are removed at the start, and reported', async () => {
  const dir = join(freshDir(root), 'responses');
  const scheduler = new ManualScheduler();
  const store = await openLocalResponseStore({ dir, scheduler, limits: DEFAULT_TEST_LIMITS });
  const kept = turn(scheduler, 'resp_ok', 'key_a', 'one');
  await store.put(kept);
  await store.close();
  writeFileSync(join(dir, 'resp_ok.json.123.abcdef.tmp'), '{"id":');
  writeFileSync(join(dir, 'resp_bad.json'), '{"id":"resp_bad"}');
  const problems: string[] = [];
  const again = await openLocalResponseStore({ dir, scheduler, limits: DEFAULT_TEST_LIMITS, onProblem: (m) => problems.push(m) });
  assert.deepEqual(readdirSync(dir), ['resp_ok.json']);
  assert.deepEqual(problems, [`response store: ${join(dir, 'resp_bad.json')} is not a stored response; it is removed`]);
  assert.deepEqual(await again.get('resp_ok', 'key_a'), kept);
  await again.close();
});

test('an id that is not a safe file name is refused before anything is written', async () => {
  const dir = join(freshDir(root), 'responses');
  const scheduler = new ManualScheduler();
  const store = await openLocalResponseStore({ dir, scheduler, limits: DEFAULT_TEST_LIMITS });
  await assert.rejects(store.put(turn(scheduler, '../escape', 'key_a', 'one')), { name: 'TypeError', message: 'A stored response id is 1 to 200 of [A-Za-z0-9_-]; got "../escape".' });
  assert.equal(await store.get('../escape', 'key_a'), null);
  assert.equal(existsSync(join(dir, '..', 'escape.json')), false);
  assert.deepEqual(readdirSync(dir), []);
  await store.close();
});

test('the file backend opens the store in <dataDir>/responses', async () => {
  const dataDir = freshDir(root);
  const backend = openFileBackend(dataDir, { watch: false });
  const scheduler = new ManualScheduler();
  const store = await backend.openResponseStore(DEFAULT_TEST_LIMITS, scheduler, () => {});
  const record = turn(scheduler, 'resp_fb', 'key_a', 'one');
  await store.put(record);
  assert.deepEqual(readdirSync(join(dataDir, 'responses')), ['resp_fb.json']);
  assert.deepEqual(JSON.parse(readFileSync(join(dataDir, 'responses', 'resp_fb.json'), 'utf8')), record);
  await store.close();
  await backend.close();
});
