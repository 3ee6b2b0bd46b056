// request-accounting.ts at close: the permit is released and settled however the
// charge's recording ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestContext } from '../../src/http/request-context.ts';
import type { Limiter, Permit, SettleInput } from '../../src/limits/limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { UsageLedger } from '../../src/usage/usage-ledger.ts';
import { createPermitKeeper } from '../../src/gateway/permit-keeper.ts';
import { openAccounting } from '../../src/gateway/request-accounting.ts';
import { RequestPhase } from '../../src/gateway/request-charge.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';

const PERMIT: Permit = { keyId: 'key_1', id: 'p1', reservation: { tokens: 1200, costNanos: 0 }, admittedAtMs: 0, budgetPeriod: null, costBudgetPeriod: null };

function fakeContext(): { ctx: RequestContext; close(): void } {
  const hooks: Array<() => void> = [];
  const ctx = {
    requestId: 'req-1',
    log: {},
    res: { statusCode: 200 },
    signal: new AbortController().signal,
    onClose: (fn: () => void) => hooks.push(fn),
  } as unknown as RequestContext;
  return { ctx, close: () => hooks.forEach((hook) => assert.throws(hook, /ledger refused/)) };
}

test('a usage record that throws still releases the permit and settles it with the charge', async () => {
  const settled: SettleInput[] = [];
  const limiter: Limiter = {
    leaseMs: 60_000,
    admit: () => Promise.reject(new Error('not used')),
    settle: async (input) => void settled.push(input),
    renew: async () => true,
    budgetUsed: async () => ({ tokens: 0, costNanos: 0 }),
    close: async () => undefined,
  };
  const permits = createPermitKeeper(limiter, createLogger({ level: 'error', write: () => undefined }));
  const usage = { record: () => { throw new RangeError('ledger refused'); } } as unknown as UsageLedger;
  const { ctx, close } = fakeContext();
  const accounting = openAccounting(ctx, { id: 'key_1', limits: NO_LIMITS } as never, { usage, limiter, permits, logger: createLogger({ level: 'error', write: () => undefined }), clock: () => 5, maxChargeMultiple: 2 });
  accounting.reservation = { promptTokens: 1000, outputTokens: 200, tokens: 1200, costNanos: 0 };
  accounting.hold(PERMIT);
  accounting.phase = RequestPhase.Answered;
  accounting.noteUsage({ prompt_tokens: 700, completion_tokens: 50, total_tokens: 750, prompt_tokens_details: { cached_tokens: 0 } });
  assert.equal(permits.size, 1);
  close();
  assert.equal(permits.size, 0, 'the keeper no longer renews the permit');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(settled.map((s) => s.charge), [{ tokens: 750, costNanos: 0 }]);
  permits.close();
});
