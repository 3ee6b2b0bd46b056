// The call object at close: the permit is released and settled however the
// charge's recording ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestContext } from '../../src/http/request-context.ts';
import type { Limiter, Permit, SettleInput } from '../../src/limits/limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createUsageLedger, type UsageLedger } from '../../src/usage/usage-ledger.ts';
import { createPermitKeeper } from '../../src/gateway/permit-keeper.ts';
import { Call } from '../../src/gateway/call.ts';
import { CallPhase } from '../../src/gateway/request-charge.ts';
import { openChatTrace, describeTargets, type ChatTrace } from '../../src/telemetry/chat-trace.ts';
import { createContextOnlyTracer } from '../../src/telemetry/tracer.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';

const PERMIT: Permit = { keyId: 'key_1', id: 'p1', reservation: { tokens: 1200, costNanos: 0 }, admittedAtMs: 0, budgetPeriod: null, costBudgetPeriod: null };

function fakeContext(): RequestContext {
  return { requestId: 'req-1', log: {}, res: { statusCode: 200, headersSent: true }, aborted: false, req: { headers: {} } } as unknown as RequestContext;
}

test('a usage record that throws still releases the permit and settles it with the charge, and the access fields and the trace still end', async () => {
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
  const ctx = fakeContext();
  const finished: unknown[] = [];
  // A recording trace's end is part of the close, whatever the charge did.
  const trace = { ...openChatTrace(createContextOnlyTracer(), {}, 'req-1', describeTargets({ providers: {} } as never)), recording: true, finish: (r: unknown) => void finished.push(r) } as unknown as ChatTrace;
  const scheduler = new ManualScheduler({ startMs: 5 });
  const call = new Call(ctx, { usage, limiter, permits, logger: createLogger({ level: 'error', write: () => undefined }), scheduler, maxChargeMultiple: 2 }, trace);
  call.key = { id: 'key_1', limits: NO_LIMITS } as never;
  call.route = { alias: 'service-chat', reason: 'service-chat', skipped: [] } as never;
  call.target = 'local/llama';
  call.reservation = { promptTokens: 1000, outputTokens: 200, tokens: 1200, costNanos: 0 };
  call.hold(PERMIT);
  call.phase = CallPhase.Answered;
  call.noteUsage({ prompt_tokens: 700, completion_tokens: 50, total_tokens: 750, prompt_tokens_details: { cached_tokens: 0 } });
  assert.equal(permits.size, 1);
  assert.throws(() => call.close(), /ledger refused/);
  assert.deepEqual(ctx.log, { alias: 'service-chat', route: 'service-chat', stream: false, target: 'local/llama', promptTokens: 700, completionTokens: 50, cachedTokens: 0 }, 'the access fields are written though the charge failed');
  assert.equal(finished.length, 1, 'the trace ended');
  assert.equal(call.phase, CallPhase.Closed);
  assert.equal(permits.size, 0, 'the keeper no longer renews the permit');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(settled.map((s) => s.charge), [{ tokens: 750, costNanos: 0 }]);
  permits.close();
});

test("the guard's tally goes into the usage record, charged or not", () => {
  const limiter: Limiter = {
    leaseMs: 60_000,
    admit: () => Promise.reject(new Error('not used')),
    settle: async () => undefined,
    renew: async () => true,
    budgetUsed: async () => ({ tokens: 0, costNanos: 0 }),
    close: async () => undefined,
  };
  const logger = createLogger({ level: 'error', write: () => undefined });
  const permits = createPermitKeeper(limiter, logger);
  const usage = createUsageLedger(() => Date.UTC(2026, 10, 22, 5));
  const trace = openChatTrace(createContextOnlyTracer(), {}, 'req-1', describeTargets({ providers: {} } as never));
  const deps = { usage, limiter, permits, logger, scheduler: new ManualScheduler({ startMs: 5 }), maxChargeMultiple: 2 };

  // Refused by the guard before any reservation: nothing charged, the findings counted.
  const context = (statusCode: number): RequestContext => ({ ...fakeContext(), error: null, res: { statusCode, headersSent: true } }) as unknown as RequestContext;
  const refused = new Call(context(400), deps, trace);
  refused.key = { id: 'key_1', limits: NO_LIMITS } as never;
  refused.guardTally = { blocked: 1, masked: 0, logged: 2 };
  refused.close();
  // Answered with a reservation: charged, its findings counted.
  const answered = new Call(context(200), deps, trace);
  answered.key = { id: 'key_1', limits: NO_LIMITS } as never;
  answered.reservation = { promptTokens: 10, outputTokens: 10, tokens: 20, costNanos: 0 };
  answered.phase = CallPhase.Answered;
  answered.noteUsage({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } });
  answered.guardTally = { blocked: 0, masked: 5, logged: 0 };
  answered.close();
  // The guard did not look: nothing counted.
  const unguarded = new Call(context(200), deps, trace);
  unguarded.key = { id: 'key_1', limits: NO_LIMITS } as never;
  unguarded.close();

  const counted = usage.drain().get('key_1')?.get(Date.UTC(2026, 10, 22, 5));
  assert.deepEqual(counted, { requests: 3, promptTokens: 3, completionTokens: 4, cachedTokens: 0, errors: 1, costNanos: 0, guardBlocked: 1, guardMasked: 5, guardLogged: 2 });
  permits.close();
});
