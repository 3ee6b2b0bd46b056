// The request guard's shell: fail closed when the scanner faults, and no cost
// when no policy is configured anywhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { createRequestGuard, type GuardSinks } from '../../src/gateway/request-guard.ts';
import type { KeyPolicy } from '../../src/gateway/key-policy.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';

const KEY: KeyPolicy = { id: 'key_1', expiresAt: null, allowedAliases: null, limits: NO_LIMITS };

function sinks(): GuardSinks & { errors: Array<[string, Record<string, unknown>]> } {
  const errors: Array<[string, Record<string, unknown>]> = [];
  const logger = { error: (msg: string, fields: Record<string, unknown>) => errors.push([msg, fields]), warn: () => undefined, info: () => undefined, debug: () => undefined };
  return { log: {}, requestId: 'req_1', logger: logger as unknown as GuardSinks['logger'], errors };
}

function configWith(guard: unknown): ReturnType<typeof parseConfig> {
  return parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { chat: { provider: 'demo' } }, ...(guard === undefined ? {} : { guard }) }, null, '/tmp');
}

test('a scanner that throws fails the request closed: 500 guard_failed, the error logged by name, never the text', () => {
  const faulty = { lastSteps: 0, scan: () => { throw new TypeError('boom'); } };
  const guard = createRequestGuard(configWith({ detectors: { secrets: 'mask' } }), faulty);
  const s = sinks();
  assert.throws(() => guard.inspect(s, { messages: [{ role: 'user', content: 'AKIAQ3EGRTWXZ7PLMN4K' }] }, 'chat', KEY), (error: unknown) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.code, 'guard_failed');
    assert.equal(error.status, 500);
    return true;
  });
  assert.deepEqual(s.errors, [['the egress guard failed; the request was refused', { requestId: 'req_1', error: 'TypeError' }]]);
});

test('no policy anywhere: the body is returned as it is, unscanned', () => {
  let scans = 0;
  const counting = { lastSteps: 0, scan: () => void scans++ };
  const guard = createRequestGuard(configWith(undefined), counting);
  const body = { messages: [{ role: 'user', content: 'AKIAQ3EGRTWXZ7PLMN4K' }] };
  assert.equal(guard.inspect(sinks(), body, 'chat', KEY), body);
  assert.equal(scans, 0);
});
