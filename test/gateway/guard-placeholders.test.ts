// An operator pattern's placeholder is its own (`[CUSTOM_NAME_n]`): two
// different values never share a placeholder in one request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guardBody } from '../../src/guard/body-guard.ts';
import { effectiveGuardPolicy, type GuardPattern } from '../../src/guard/guard-policy.ts';
import { compileCustomPattern, createGuardScanner, DETECTOR_NAMES, type CompiledPattern } from '../../src/guard/guard-types.ts';

test('a pattern named card-number and a card: two values, two placeholders (or the name refused at load)', () => {
  const compiled = compileCustomPattern({ name: 'card-number', literals: ['Project X'] });
  assert.equal('problem' in compiled, false);
  const pattern: GuardPattern = { name: 'card-number', literals: ['Project X'], action: 'mask', compiled: compiled as CompiledPattern };
  const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [pattern.compiled] });
  const policy = effectiveGuardPolicy({ detectors: { card_number: 'mask' }, patterns: [pattern] }, null, null);
  const out = guardBody({ m: 'card 4111111111111111 and Project X' }, scanner, policy);
  // seen: "card [CARD_NUMBER_1] and [CARD_NUMBER_1]"
  assert.notEqual((out.masked as { m: string }).m, 'card [CARD_NUMBER_1] and [CARD_NUMBER_1]');
});
