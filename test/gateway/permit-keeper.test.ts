// The permit keeper renews held permits every leaseMs / 3, at the scheduler's
// now, one round at a time, and stops at release; on a manual scheduler each
// renewal is asserted with its moment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Limiter, Permit } from '../../src/limits/limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createPermitKeeper } from '../../src/gateway/permit-keeper.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const START_MS = Date.UTC(2026, 0, 1);

function fakeLimiter(leaseMs: number, answer: (p: Permit) => Promise<boolean>): Limiter & { renewals: string[] } {
  const renewals: string[] = [];
  return {
    leaseMs,
    renewals,
    admit: () => Promise.reject(new Error('not used')),
    settle: () => Promise.resolve(),
    budgetUsed: () => Promise.resolve({ tokens: 0, costNanos: 0 }),
    renew: (p, nowMs) => {
      renewals.push(`${p.id}@${nowMs - START_MS}`);
      return answer(p);
    },
    close: () => Promise.resolve(),
  };
}

const permit = (id: string): Permit => ({ keyId: 'key_1', id, reservation: { tokens: 1, costNanos: 0 }, admittedAtMs: 0, budgetPeriod: null, costBudgetPeriod: null });

test('held permits are renewed every leaseMs / 3 at the scheduler’s now until released; the timer stops when none is held', async () => {
  const scheduler = new ManualScheduler({ startMs: START_MS });
  const lines: string[] = [];
  const limiter = fakeLimiter(60, async () => true);
  const keeper = createPermitKeeper(limiter, createLogger({ level: 'debug', write: (l) => lines.push(l) }), scheduler);
  const a = permit('a');
  const b = permit('b');
  keeper.hold(a);
  keeper.hold(b);
  assert.deepEqual(scheduler.pending(), [20]);
  await scheduler.advance(19);
  assert.deepEqual(limiter.renewals, []);
  await scheduler.advance(1);
  assert.deepEqual(limiter.renewals, ['a@20', 'b@20']);
  await scheduler.advance(20);
  assert.deepEqual(limiter.renewals, ['a@20', 'b@20', 'a@40', 'b@40']);
  keeper.release(a);
  await scheduler.advance(20);
  assert.deepEqual(limiter.renewals.slice(4), ['b@60']);
  keeper.release(b);
  assert.equal(keeper.size, 0);
  assert.deepEqual(scheduler.pending(), []);
  await scheduler.advance(1000);
  assert.equal(limiter.renewals.length, 5);
  assert.deepEqual(lines, []);
  keeper.close();
});

test('a permit the limiter no longer holds is dropped and warned about; a failing renewal is warned about and retried', async () => {
  const scheduler = new ManualScheduler({ startMs: START_MS });
  const lines: Array<Record<string, unknown>> = [];
  let fail = true;
  const limiter = fakeLimiter(30, async (p) => {
    if (p.id === 'gone') return false;
    if (fail) throw new Error('redis down');
    return true;
  });
  const keeper = createPermitKeeper(limiter, createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }), scheduler);
  keeper.hold(permit('gone'));
  keeper.hold(permit('kept'));
  await scheduler.advance(10);
  assert.equal(keeper.size, 1);
  assert.deepEqual(
    lines.map((l) => [l['level'], l['msg'], l['permits'], l['leaseMs']]),
    [
      ['warn', 'could not renew concurrency permits; they expire after the lease unless a later renewal succeeds', 1, 30],
      ['warn', 'concurrency permits expired before their requests ended; the key may briefly exceed its concurrency limit', 1, undefined],
    ],
  );
  fail = false;
  await scheduler.advance(10);
  assert.deepEqual(limiter.renewals, ['gone@10', 'kept@10', 'kept@20']);
  assert.equal(lines.length, 2);
  keeper.close();
  assert.deepEqual(scheduler.pending(), []);
});

test('a slow backend does not pile up rounds: a tick while a round is out starts none; the timer stops once the last permit goes with the round', async () => {
  const scheduler = new ManualScheduler({ startMs: START_MS });
  let answer: (held: boolean) => void = () => {};
  const limiter = fakeLimiter(30, () => new Promise<boolean>((resolve) => (answer = resolve)));
  const keeper = createPermitKeeper(limiter, createLogger({ level: 'error', write: () => {} }), scheduler);
  const p = permit('slow');
  keeper.hold(p);
  await scheduler.advance(30);
  assert.deepEqual(limiter.renewals, ['slow@10']);
  // Released while its renewal is out: the timer runs until the round ends.
  keeper.release(p);
  assert.deepEqual(scheduler.pending(), [10]);
  answer(true);
  await scheduler.advance(0);
  assert.deepEqual(scheduler.pending(), []);
});

test('on the system scheduler: a held permit is renewed, at the wall clock', async () => {
  const seen: number[] = [];
  const limiter = fakeLimiter(30, async () => true);
  limiter.renew = async (_p, nowMs) => {
    seen.push(nowMs);
    return true;
  };
  const keeper = createPermitKeeper(limiter, createLogger({ level: 'error', write: () => {} }));
  const before = Date.now();
  keeper.hold(permit('real'));
  try {
    await eventually(() => seen.length >= 2, 'two renewals');
    assert.ok((seen[0] as number) >= before && (seen[1] as number) >= (seen[0] as number), seen.join());
  } finally {
    keeper.close();
  }
});
