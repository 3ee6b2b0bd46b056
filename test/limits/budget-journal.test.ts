// The budget journal's format and the restart math: which counts a limiter started at
// a given time takes back, and that a limiter restarted from a journal refuses at the
// same point as one that never stopped (in-process limiter, an in-memory journal).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { liveEntries, parseBudgetJournal, serializeBudgetJournal, windowEndMs, type JournalEntry } from '../../src/limits/budget-journal.ts';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';
import type { Charge } from '../../src/limits/limiter.ts';
import { createMemoryLimiter, type BudgetJournal } from '../../src/limits/memory-limiter.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

test('window ids: a UTC day ends at the next midnight, a month on the first of the next; anything else is null', () => {
  assert.equal(windowEndMs('2026-11-22'), Date.UTC(2026, 10, 23));
  assert.equal(windowEndMs('2026-12-31'), Date.UTC(2027, 0, 1));
  assert.equal(windowEndMs('2028-02-29'), Date.UTC(2028, 2, 1));
  assert.equal(windowEndMs('2026-12'), Date.UTC(2027, 0, 1));
  assert.equal(windowEndMs('2026-02'), Date.UTC(2026, 2, 1));
  for (const bad of ['2026-02-30', '2027-02-29', '2026-13', '2026-00', '2026-1-1', '2026-11-22T05', '']) assert.equal(windowEndMs(bad), null, bad);
});

test('serialize then parse gives the entries back, sorted; the text is stable', () => {
  const entries: JournalEntry[] = [
    { keyId: 'key_b', kind: 'cost', windowId: '2026-11', used: 61_700_000 },
    { keyId: 'key_a', kind: 'tokens', windowId: '2026-11-22', used: 4180 },
    { keyId: 'key_a', kind: 'cost', windowId: '2026-11-22', used: 6600 },
  ];
  const text = serializeBudgetJournal(entries);
  assert.equal(text, '{"version":1,"keys":{"key_a":{"cost":{"2026-11-22":6600},"tokens":{"2026-11-22":4180}},"key_b":{"cost":{"2026-11":61700000}}}}\n');
  assert.deepEqual(parseBudgetJournal(text, 'budgets.json'), [entries[2], entries[1], entries[0]]);
});

test('a broken journal is an error naming the file and the field', () => {
  const cases: Array<[string, string]> = [
    ['{', 'b.json: is not valid JSON'],
    ['{"version":2,"keys":{}}', 'b.json: expected {"version":1,"keys":{...}}'],
    ['{"version":1,"keys":{"k":[]}}', 'b.json: keys.k must be an object'],
    ['{"version":1,"keys":{"k":{"money":{}}}}', 'b.json: keys.k.money is not a budget; the budgets are tokens, cost'],
    ['{"version":1,"keys":{"k":{"tokens":{"2026-11-31":1}}}}', 'b.json: keys.k.tokens has a window "2026-11-31" that is not a UTC day (YYYY-MM-DD) or month (YYYY-MM)'],
    ['{"version":1,"keys":{"k":{"cost":{"2026-11":1.5}}}}', 'b.json: keys.k.cost.2026-11 must be an integer from 0 to 4000000000000000'],
    ['{"version":1,"keys":{"k":{"cost":{"2026-11":-1}}}}', 'b.json: keys.k.cost.2026-11 must be an integer from 0 to 4000000000000000'],
  ];
  for (const [text, message] of cases) assert.throws(() => parseBudgetJournal(text, 'b.json'), { name: 'BudgetJournalError', message });
});

test('a restart takes back the windows that have not ended, and nothing at 0', () => {
  const entries: JournalEntry[] = [
    { keyId: 'k', kind: 'tokens', windowId: '2026-11-21', used: 10 },
    { keyId: 'k', kind: 'tokens', windowId: '2026-11-22', used: 20 },
    { keyId: 'k', kind: 'cost', windowId: '2026-11', used: 30 },
    { keyId: 'z', kind: 'cost', windowId: '2026-11', used: 0 },
  ];
  assert.deepEqual(liveEntries(entries, T0), [entries[1], entries[2]]);
  // One millisecond before midnight the day still counts; at midnight it has ended.
  assert.deepEqual(liveEntries(entries, Date.UTC(2026, 10, 23) - 1), [entries[1], entries[2]]);
  assert.deepEqual(liveEntries(entries, Date.UTC(2026, 10, 23)), [entries[2]]);
  assert.deepEqual(liveEntries(entries, Date.UTC(2026, 11, 1)), []);
});

/** A journal in memory: what the last write held, and how many writes. */
function memoryJournal(entries: JournalEntry[] = []): BudgetJournal & { saved: JournalEntry[]; writes: number } {
  const journal = {
    entries,
    saved: entries,
    writes: 0,
    async save(snapshot: () => JournalEntry[]) {
      journal.saved = snapshot();
      journal.writes++;
    },
  };
  return journal;
}

const limits = (l: Partial<KeyLimits>): KeyLimits => ({ ...NO_LIMITS, ...l });

/** Spends `charges` one request at a time (admitted at its reservation, settled at `charged`) until a refusal; how many passed. */
async function spendUntilRefused(limiter: ReturnType<typeof createMemoryLimiter>, l: KeyLimits, reservation: Charge, charged: Charge, nowMs: number, max: number): Promise<number> {
  for (let i = 0; i < max; i++) {
    const d = await limiter.admit({ keyId: 'k', limits: l, reservation, nowMs });
    if (!d.allowed) return i;
    await limiter.settle({ permit: d.permit, limits: l, charge: charged, nowMs });
  }
  return max;
}

test('spend, restart from the journal, spend again: the refusal comes at the same request as without a restart', async () => {
  const l = limits({ tokenBudget: { tokens: 10_000, period: 'day' }, costBudget: { amount: 0.01, period: 'month' } });
  const reservation = { tokens: 900, costNanos: 900_000 };
  const charged = { tokens: 700, costNanos: 650_000 };
  // Without a restart: 10_000 / 700 -> 13 fit (9100 used, 900 left fits one more: 14).
  const straight = createMemoryLimiter();
  const total = await spendUntilRefused(straight, l, reservation, charged, T0, 100);
  assert.equal(total, 14);
  await straight.close();

  const journal = memoryJournal();
  const before = createMemoryLimiter({ journal, nowMs: T0 });
  assert.equal(await spendUntilRefused(before, l, reservation, charged, T0, 5), 5);
  await before.close();
  assert.deepEqual(journal.saved, [
    { keyId: 'k', kind: 'tokens', windowId: '2026-11-22', used: 3500 },
    { keyId: 'k', kind: 'cost', windowId: '2026-11', used: 3_250_000 },
  ]);
  const after = createMemoryLimiter({ journal: memoryJournal(journal.saved), nowMs: T0 + 1000 });
  assert.deepEqual(await after.budgetUsed('k', l, T0 + 1000), { tokens: 3500, costNanos: 3_250_000 });
  assert.equal(await spendUntilRefused(after, l, reservation, charged, T0 + 1000, 100), total - 5);
  await after.close();
});

test('a crash with a request in flight: the journal holds its reservation, so the restart over-counts it, never under', async () => {
  const l = limits({ costBudget: { amount: 0.01, period: 'day' } });
  const journal = memoryJournal();
  const limiter = createMemoryLimiter({ journal, nowMs: T0 });
  const d = await limiter.admit({ keyId: 'k', limits: l, reservation: { tokens: 10, costNanos: 4_000_000 }, nowMs: T0 });
  assert.equal(d.allowed, true);
  // The admission returned only after a write holding the reservation.
  assert.deepEqual(journal.saved, [{ keyId: 'k', kind: 'cost', windowId: '2026-11-22', used: 4_000_000 }]);
  // kill -9 here: no settlement. The restarted limiter counts the reservation.
  const restarted = createMemoryLimiter({ journal: memoryJournal(journal.saved), nowMs: T0 });
  assert.deepEqual(await restarted.budgetUsed('k', l, T0), { tokens: 0, costNanos: 4_000_000 });
  // And no concurrency slot is left held: permits do not survive the process.
  const one = limits({ concurrentRequests: 1, costBudget: { amount: 0.01, period: 'day' } });
  assert.equal((await restarted.admit({ keyId: 'k', limits: one, reservation: { tokens: 1, costNanos: 1 }, nowMs: T0 })).allowed, true);
  await limiter.close();
  await restarted.close();
});

test('the next day starts at 0 after a restart; the month keeps its count; keys without budgets write nothing', async () => {
  const l = limits({ tokenBudget: { tokens: 1000, period: 'day' }, costBudget: { amount: 1, period: 'month' } });
  const journal = memoryJournal();
  const limiter = createMemoryLimiter({ journal, nowMs: T0 });
  await spendUntilRefused(limiter, l, { tokens: 100, costNanos: 100 }, { tokens: 100, costNanos: 100 }, T0, 3);
  const writes = journal.writes;
  await spendUntilRefused(limiter, limits({ requestsPerMinute: 100 }), { tokens: 1, costNanos: 0 }, { tokens: 1, costNanos: 0 }, T0, 3);
  assert.equal(journal.writes, writes);
  await limiter.close();
  const nextDay = Date.UTC(2026, 10, 23, 1);
  const restarted = createMemoryLimiter({ journal: memoryJournal(journal.saved), nowMs: nextDay });
  assert.deepEqual(await restarted.budgetUsed('k', l, nextDay), { tokens: 0, costNanos: 300 });
  await restarted.close();
});
