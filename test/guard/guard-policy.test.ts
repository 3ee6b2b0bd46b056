// The effective guard policy: top level, alias override, key stricter-only;
// and the check of a `detectors` object shared by the config and key settings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DETECTOR_GROUPS, DETECTOR_NAMES, PERSONAL_DETECTORS, SECRET_DETECTORS, groupOf } from '../../src/guard/detector-names.ts';
import { ANSWERS_OFF, checkGuardDetectors, effectiveGuardPolicy, stricterAction, type GuardAction, type GuardConfig, type GuardPattern, type GuardPolicy } from '../../src/guard/guard-policy.ts';
import { compileCustomPattern, type CustomPattern } from '../../src/guard/guard-types.ts';

const top = (detectors: GuardConfig['detectors'], patterns: GuardConfig['patterns'] = []): GuardConfig => ({ detectors, patterns, answers: ANSWERS_OFF });
const actions = (policy: GuardPolicy): Record<string, GuardAction> => Object.fromEntries(DETECTOR_NAMES.map((d) => [d, policy.actionOf(d)]));
const every = (action: GuardAction): Record<string, GuardAction> => Object.fromEntries(DETECTOR_NAMES.map((d) => [d, action]));

test('the detector names and their groups, exactly', () => {
  assert.deepEqual(DETECTOR_NAMES, [
    'private_key', 'aws_access_key', 'github_token', 'slack_token', 'stripe_key', 'google_api_key', 'openai_key', 'anthropic_key', 'jwt', 'portcullis_key', 'secret_assignment',
    'card_number', 'iban', 'email', 'phone', 'us_ssn',
  ]);
  assert.deepEqual(DETECTOR_GROUPS.personal, ['card_number', 'iban', 'email', 'phone', 'us_ssn']);
  assert.equal(SECRET_DETECTORS.length + PERSONAL_DETECTORS.length, DETECTOR_NAMES.length);
  assert.equal(groupOf('jwt'), 'secrets');
  assert.equal(groupOf('us_ssn'), 'personal');
});

test('actions are ordered off < log < mask < block', () => {
  assert.equal(stricterAction('off', 'log'), 'log');
  assert.equal(stricterAction('mask', 'log'), 'mask');
  assert.equal(stricterAction('block', 'mask'), 'block');
  assert.equal(stricterAction('log', 'block'), 'block');
  assert.equal(stricterAction('off', 'off'), 'off');
});

test('nothing configured: every detector off, the policy inactive', () => {
  const policy = effectiveGuardPolicy(null, null, null);
  assert.equal(policy.active, false);
  assert.deepEqual(actions(policy), every('off'));
  assert.equal(policy.actionOf('custom:x'), 'off');
  assert.equal(policy.actionOf('no_such'), 'off');
  assert.equal(effectiveGuardPolicy(top({}), { detectors: {} }, { detectors: {} }).active, false);
  assert.equal(effectiveGuardPolicy(top({ secrets: 'off' }), null, null).active, false);
});

test('a group sets each of its detectors; a name beats its group either way round', () => {
  const policy = effectiveGuardPolicy(top({ card_number: 'block', secrets: 'mask', personal: 'log' }), null, null);
  assert.equal(policy.active, true);
  assert.deepEqual(actions(policy), { ...every('mask'), card_number: 'block', iban: 'log', email: 'log', phone: 'log', us_ssn: 'log' });
  const other = effectiveGuardPolicy(top({ secrets: 'block', jwt: 'off' }), null, null);
  assert.deepEqual(actions(other), { ...every('block'), jwt: 'off', card_number: 'off', iban: 'off', email: 'off', phone: 'off', us_ssn: 'off' });
});

test("an alias's setting (name or group) overrides the top level for that alias, even to weaker", () => {
  const t = top({ secrets: 'mask', card_number: 'block', email: 'log' });
  const policy = effectiveGuardPolicy(t, { detectors: { personal: 'off', jwt: 'block' } }, null);
  assert.deepEqual(actions(policy), { ...every('mask'), jwt: 'block', card_number: 'off', iban: 'off', email: 'off', phone: 'off', us_ssn: 'off' });
  // Left unnamed by the alias: the top level's.
  assert.equal(effectiveGuardPolicy(t, { detectors: { iban: 'log' } }, null).actionOf('card_number'), 'block');
  // An alias may turn the guard on without a top level.
  assert.deepEqual(actions(effectiveGuardPolicy(null, { detectors: { email: 'mask' } }, null)), { ...every('off'), email: 'mask' });
});

test("a key's setting counts only where it is stricter than the alias's", () => {
  const t = top({ secrets: 'mask', card_number: 'block' });
  const policy = effectiveGuardPolicy(t, { detectors: { email: 'log' } }, { detectors: { secrets: 'log', card_number: 'off', email: 'block', openai_key: 'block', iban: 'mask' } });
  assert.deepEqual(actions(policy), { ...every('mask'), openai_key: 'block', card_number: 'block', email: 'block', iban: 'mask', phone: 'off', us_ssn: 'off' });
  // A key alone turns the guard on for its requests.
  const alone = effectiveGuardPolicy(null, null, { detectors: { personal: 'log' } });
  assert.equal(alone.active, true);
  assert.equal(alone.actionOf('phone'), 'log');
  assert.equal(alone.actionOf('jwt'), 'off');
});

function pattern(source: CustomPattern, action: GuardAction): GuardPattern {
  const compiled = compileCustomPattern(source);
  if ('problem' in compiled) throw new Error(compiled.problem);
  return { ...source, action, compiled };
}

test("patterns keep their own action as custom:<name>; alias and key settings leave them alone", () => {
  const t = top({}, [
    pattern({ name: 'project-x', literals: ['Project X'] }, 'block'),
    pattern({ name: 'ticket', regex: 'INC-[0-9]{6}' }, 'off'),
  ]);
  const policy = effectiveGuardPolicy(t, { detectors: { secrets: 'off' } }, { detectors: { personal: 'off' } });
  assert.equal(policy.actionOf('custom:project-x'), 'block');
  assert.equal(policy.actionOf('custom:ticket'), 'off');
  assert.equal(policy.actionOf('project-x'), 'off');
  assert.equal(policy.active, true);
  assert.equal(effectiveGuardPolicy(top({}, [pattern({ name: 't', literals: ['a'] }, 'off')]), null, null).active, false);
});

test('checkGuardDetectors: names, groups and actions; every problem with its key', () => {
  assert.deepEqual(checkGuardDetectors({ secrets: 'mask', email: 'off' }), { detectors: { secrets: 'mask', email: 'off' }, problems: [] });
  const names = 'use a group (secrets, personal) or one of ' + DETECTOR_NAMES.join(', ');
  assert.deepEqual(checkGuardDetectors({ emails: 'log', card_number: 'deny', 'custom:x': 'block', jwt: 3, iban: 'block' }), {
    detectors: { iban: 'block' },
    problems: [
      { key: 'emails', message: `unknown detector; ${names}` },
      { key: 'card_number', message: 'must be one of "off", "log", "mask", "block"' },
      { key: 'custom:x', message: `unknown detector; a pattern has its own "action" in the top-level guard.patterns; ${names}` },
      { key: 'jwt', message: 'must be one of "off", "log", "mask", "block"' },
    ],
  });
  for (const bad of [null, [], 'mask', 1]) {
    assert.deepEqual(checkGuardDetectors(bad), { detectors: {}, problems: [{ key: null, message: 'must be an object of detector or group names to actions' }] });
  }
});

