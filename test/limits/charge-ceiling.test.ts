// countedCharge, the pure rule both limiters settle through, and the setting
// that feeds it (limits.maxChargeMultiple).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, DEFAULT_LIMITS } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { countedCharge, DEFAULT_MAX_CHARGE_MULTIPLE, MAX_CHARGE_MULTIPLE } from '../../src/limits/charge-ceiling.ts';
import { MAX_CHARGE_NANOS, MAX_REQUEST_TOKENS } from '../../src/limits/limiter.ts';

const RESERVED = { tokens: 88, costNanos: 295_000 };

test('a charge within the ceiling is returned as it is (the same object); one above is cut to the ceiling, tokens and cost each on its own', () => {
  const cases: Array<[{ tokens: number; costNanos: number }, number | null, { tokens: number; costNanos: number }]> = [
    [{ tokens: 0, costNanos: 0 }, 2, { tokens: 0, costNanos: 0 }],
    [{ tokens: 88, costNanos: 295_000 }, 1, { tokens: 88, costNanos: 295_000 }],
    [{ tokens: 176, costNanos: 590_000 }, 2, { tokens: 176, costNanos: 590_000 }],
    [{ tokens: 177, costNanos: 590_000 }, 2, { tokens: 176, costNanos: 590_000 }],
    [{ tokens: 100, costNanos: 590_001 }, 2, { tokens: 100, costNanos: 590_000 }],
    [{ tokens: 1000, costNanos: 9_925_000 }, 2, { tokens: 176, costNanos: 590_000 }],
    [{ tokens: 1000, costNanos: 9_925_000 }, 1, { tokens: 88, costNanos: 295_000 }],
    [{ tokens: 1000, costNanos: 9_925_000 }, 100, { tokens: 1000, costNanos: 9_925_000 }],
    [{ tokens: 1000, costNanos: 9_925_000 }, null, { tokens: 1000, costNanos: 9_925_000 }],
  ];
  for (const [charge, multiple, expected] of cases) {
    const counted = countedCharge(RESERVED, charge, multiple);
    assert.deepEqual(counted, expected, `${JSON.stringify(charge)} at ${multiple}`);
    assert.equal(counted === charge, charge.tokens === expected.tokens && charge.costNanos === expected.costNanos);
  }
});

test('a reservation of nothing counts nothing, and the largest values stay exact', () => {
  assert.deepEqual(countedCharge({ tokens: 0, costNanos: 0 }, { tokens: 5, costNanos: 7 }, 100), { tokens: 0, costNanos: 0 });
  const largest = { tokens: MAX_REQUEST_TOKENS, costNanos: MAX_CHARGE_NANOS };
  assert.equal(countedCharge(largest, largest, 100), largest);
  assert.deepEqual(countedCharge({ tokens: 1, costNanos: 1 }, largest, 100), { tokens: 100, costNanos: 100 });
});

test('a multiple that is not a whole number from 1 to 100 is a RangeError', () => {
  for (const bad of [0, -1, 1.5, 101, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => countedCharge(RESERVED, RESERVED, bad), { name: 'RangeError', message: `maxChargeMultiple must be an integer from 1 to 100; got ${bad}.` });
  }
});

test('limits.maxChargeMultiple: 2 unless set, a whole number from 1 to 100, refused otherwise naming the setting', () => {
  const minimal = { providers: { d: { type: 'demo' } }, aliases: { x: { provider: 'd' } } };
  assert.deepEqual([DEFAULT_LIMITS.maxChargeMultiple, DEFAULT_MAX_CHARGE_MULTIPLE, MAX_CHARGE_MULTIPLE], [2, 2, 100]);
  assert.equal(parseConfig(minimal, null, '/nonexistent').limits.maxChargeMultiple, 2);
  assert.equal(parseConfig({ ...minimal, limits: { maxChargeMultiple: 1 } }, null, '/nonexistent').limits.maxChargeMultiple, 1);
  assert.equal(parseConfig({ ...minimal, limits: { maxChargeMultiple: 100 } }, null, '/nonexistent').limits.maxChargeMultiple, 100);
  for (const bad of [0, 1.5, 101, '2', null]) {
    assert.throws(() => parseConfig({ ...minimal, limits: { maxChargeMultiple: bad } }, '/etc/portcullis.json', '/nonexistent'), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, '/etc/portcullis.json: limits.maxChargeMultiple: must be an integer from 1 to 100');
      assert.equal(error.path, 'limits.maxChargeMultiple');
      return true;
    });
  }
});
