// parseHostPolicy: a host's KeyPolicy read as a stored key's settings are, each
// field's problem named by its path, and absent fields never wider than stated.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseHostPolicy } from '../../src/gateway/host-policy.ts';

const NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null };

describe('parseHostPolicy', () => {
  test('only an id: no expiry, every alias, no limits, no guard', () => {
    assert.deepEqual(parseHostPolicy({ id: 'team-a' }), { id: 'team-a', expiresAt: null, allowedAliases: null, limits: NO_LIMITS, guard: null });
  });

  test('every field given: normalised as a stored key', () => {
    assert.deepEqual(
      parseHostPolicy({ id: 'team-a', expiresAt: '2027-01-31T01:00:00+01:00', allowedAliases: ['service-chat'], limits: { tokensPerMinute: 1000, costBudget: { amount: 5, period: 'month' } }, guard: { detectors: { secrets: 'block' } } }),
      {
        id: 'team-a',
        expiresAt: '2027-01-31T00:00:00.000Z',
        allowedAliases: ['service-chat'],
        limits: { ...NO_LIMITS, tokensPerMinute: 1000, costBudget: { amount: 5, period: 'month' } },
        guard: { detectors: { secrets: 'block' } },
      },
    );
  });

  for (const [given, param, problem] of [
    [null, '(the policy)', 'must be an object { id, expiresAt?, allowedAliases?, limits?, guard? }, or null to refuse the key'],
    [{ id: 7 }, 'id', 'must be a string'],
    [{ id: 'x'.repeat(129) }, 'id', 'must have 1 to 128 characters'],
    [{ id: 'team\u0000a' }, 'id', 'contains control or invisible characters'],
    [{ id: 'a', allowedAliases: [] }, 'allowedAliases', 'must name at least one alias (a key allowed nothing is a revoked key)'],
    [{ id: 'a', limits: { requestsPerMinutes: 5 } }, 'limits.requestsPerMinutes', 'Unknown field limits.requestsPerMinutes; the fields are requestsPerMinute, tokensPerMinute, concurrentRequests, tokenBudget, costBudget'],
    [{ id: 'a', guard: { detectors: { email: 'hide' } } }, 'guard.detectors.email', 'must be one of "off", "log", "mask", "block"'],
    [{ id: 'a', scopes: ['x'] }, 'scopes', 'is not a KeyPolicy field (id, expiresAt, allowedAliases, limits, guard)'],
  ] as const) {
    test(`${JSON.stringify(given)}: ${param} ${problem}`, () => {
      assert.throws(() => parseHostPolicy(given), { name: 'InvalidKeySettingError', param, problem });
    });
  }
});
