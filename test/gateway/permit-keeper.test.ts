// The permit keeper renews held permits every leaseMs / 3 and stops at release.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Limiter, Permit } from '../../src/limits/limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createPermitKeeper } from '../../src/gateway/permit-keeper.ts';

function fakeLimiter(leaseMs: number, answer: (p: Permit) => Promise<boolean>): Limiter & { renewals: string[] } {
  const renewals: string[] = [];
  return {
    leaseMs,
    renewals,
    admit: () => Promise.reject(new Error('not used')),
    settle: () => Promise.resolve(),
    budgetUsed: () => Promise.resolve({ tokens: 0, costNanos: 0 }),
    renew: (p) => {
      renewals.push(p.id);
      return answer(p);
    },
    close: () => Promise.resolve(),
  };
}

const permit = (id: string): Permit => ({ keyId: 'key_1', id, reservation: { tokens: 1, costNanos: 0 }, admittedAtMs: 0, budgetPeriod: null, costBudgetPeriod: null });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('held permits are renewed until released; the timer stops when none is held', async () => {
  const lines: string[] = [];
  const limiter = fakeLimiter(60, async () => true);
  const keeper = createPermitKeeper(limiter, createLogger({ level: 'debug', write: (l) => lines.push(l) }));
  const a = permit('a');
  const b = permit('b');
  keeper.hold(a);
  keeper.hold(b);
  await sleep(150);
  assert.ok(limiter.renewals.filter((id) => id === 'a').length >= 2, limiter.renewals.join());
  keeper.release(a);
  const seen = limiter.renewals.length;
  await sleep(100);
  assert.ok(limiter.renewals.slice(seen).every((id) => id === 'b'), 'a released permit is not renewed');
  keeper.release(b);
  assert.equal(keeper.size, 0);
  const after = limiter.renewals.length;
  await sleep(100);
  assert.equal(limiter.renewals.length, after, 'no renewals once nothing is held');
  assert.deepEqual(lines, []);
  keeper.close();
});

test('a permit the limiter no longer holds is dropped and warned about; a failing renewal is warned about and retried', async () => {
  const lines: Array<Record<string, unknown>> = [];
  let fail = true;
  const limiter = fakeLimiter(30, async (p) => {
    if (p.id === 'gone') return false;
    if (fail) throw new Error('redis down');
    return true;
  });
  const keeper = createPermitKeeper(limiter, createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }));
  keeper.hold(permit('gone'));
  keeper.hold(permit('kept'));
  await sleep(60);
  assert.equal(keeper.size, 1);
  assert.ok(lines.some((l) => l['msg'] === 'concurrency permits expired before their requests ended; the key may briefly exceed its concurrency limit'));
  assert.ok(lines.some((l) => l['msg'] === 'could not renew concurrency permits; they expire after the lease unless a later renewal succeeds'));
  fail = false;
  const count = limiter.renewals.length;
  await sleep(60);
  assert.ok(limiter.renewals.length > count, 'renewals go on after a failure');
  keeper.close();
});
