// The file backend when budgets.json cannot be written: a budgeted admission is
// undone and refused with 503 state_unavailable (a charge a restart would forget
// would hand the key its budget back), one error line says so, every failed
// write is counted, and the first good write is logged and admits again.
import assert from 'node:assert/strict';
import { mkdirSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { createLogger } from '../../src/log/logger.ts';
import { StateUnavailableError } from '../../src/state/errors.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('budget-journal-failure');
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

test('budgets.json cannot be written: budgeted admissions are undone and refused with 503, logged once, counted each time, and admitted again once it can', async () => {
  const dataDir = freshPath(tmp, 'data');
  mkdirSync(dataDir, { recursive: true });
  const logged: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'info', write: (text) => logged.push(...text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)), clock: () => new Date(T0) });
  let failures = 0;
  const backend = openFileBackend(dataDir, { watch: false }, {}, { logger, countJournalWriteFailure: () => failures++ });
  const file = path.join(dataDir, 'budgets.json');
  const budgeted: KeyLimits = { ...NO_LIMITS, tokenBudget: { tokens: 1000, period: 'day' }, concurrentRequests: 1 };
  const admit = (keyId: string, limits: KeyLimits) => backend.limiter.admit({ keyId, limits, reservation: { tokens: 100, costNanos: 0 }, nowMs: T0 });
  try {
    // A directory where the file goes: the rename fails, for root too (chmod would not stop root).
    mkdirSync(file);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(admit('key_budgeted', budgeted), (error: unknown) => {
        assert.ok(error instanceof StateUnavailableError);
        assert.equal(error.status, 503);
        assert.equal(error.code, 'state_unavailable');
        assert.deepEqual(error.headers, { 'retry-after': '2' });
        return true;
      });
    }
    // Nothing stayed charged or held: the count is 0 and the one concurrency slot is free.
    assert.deepEqual(await backend.limiter.budgetUsed('key_budgeted', budgeted, T0), { tokens: 0, costNanos: 0 });
    // A key without a budget writes nothing and is admitted.
    assert.equal((await admit('key_unbudgeted', { ...NO_LIMITS, requestsPerMinute: 10 })).allowed, true);
    assert.equal(failures, 2);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.['level'], 'error');
    assert.equal(logged[0]?.['msg'], 'budgets.json cannot be written; requests of keys with a budget are refused (503) until it can');
    assert.equal(logged[0]?.['file'], file);
    assert.match(String(logged[0]?.['error']), /^EISDIR: illegal operation on a directory, rename '.+\.tmp' -> '.+budgets\.json'$/);

    rmdirSync(file);
    const admitted = await admit('key_budgeted', budgeted);
    assert.equal(admitted.allowed, true);
    assert.deepEqual(await backend.limiter.budgetUsed('key_budgeted', budgeted, T0), { tokens: 100, costNanos: 0 });
    assert.equal(failures, 2);
    assert.deepEqual(logged.slice(1).map((l) => [l['level'], l['msg'], l['file']]), [['info', 'budgets.json is written again; keys with a budget are admitted', file]]);
  } finally {
    await backend.close();
  }
});

test('portcullis_budget_journal_write_failures_total counts what serve passes as countBudgetJournalWriteFailure', () => {
  const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => false, stateBackendUp: () => 1 });
  assert.match(metrics.expose(), /^portcullis_budget_journal_write_failures_total 0$/m);
  metrics.budgetJournalWriteFailure();
  metrics.budgetJournalWriteFailure();
  assert.match(metrics.expose(), /^# TYPE portcullis_budget_journal_write_failures_total counter$/m);
  assert.match(metrics.expose(), /^portcullis_budget_journal_write_failures_total 2$/m);
});
