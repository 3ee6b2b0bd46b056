// The top-level "guard" and an alias's "guard": absent is off, every problem
// named by its path, patterns checked at load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import type { ConfigIssue } from '../../src/config/config-issues.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { DETECTOR_NAMES } from '../../src/guard/detector-names.ts';

const base = { providers: { d: { type: 'demo' } }, aliases: { c: { provider: 'd' } } };
const parse = (value: Record<string, unknown>) => parseConfig({ ...base, ...value }, 'f.json', '/tmp');
const OFF = { scan: false, restore: false, holdBackChars: 256 };
const NAMES = `use a group (secrets, personal) or one of ${DETECTOR_NAMES.join(', ')}`;

function issues(value: Record<string, unknown>): ConfigIssue[] {
  try {
    parse(value);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  assert.fail('the config parsed');
}

test('absent: null at the top level and on every alias', () => {
  const config = parse({});
  assert.equal(config.guard, null);
  assert.equal(config.aliases['c']?.guard, null);
});

test("the design's example is kept as written", () => {
  const guard = {
    detectors: { secrets: 'mask', card_number: 'block', email: 'log' },
    patterns: [
      { name: 'project-x', literals: ['Project X'], action: 'block' },
      { name: 'ticket', regex: 'INC-[0-9]{6}', action: 'mask' },
    ],
  };
  const parsed = parse({ guard }).guard;
  // Each pattern also carries its compiled form, made once here.
  assert.deepEqual({ ...parsed, patterns: parsed?.patterns.map(({ compiled, ...pattern }) => (assert.equal(compiled.detector, `custom:${pattern.name}`), pattern)) }, { ...guard, answers: OFF });
  assert.deepEqual(parse({ guard: {} }).guard, { detectors: {}, patterns: [], answers: OFF });
});

test("an alias's guard takes detectors and answers, no patterns", () => {
  const config = parse({ aliases: { c: { provider: 'd', guard: { detectors: { personal: 'off', jwt: 'block' } } }, e: { provider: 'd', guard: { answers: { restore: true } } } } });
  assert.deepEqual(config.aliases['c']?.guard, { detectors: { personal: 'off', jwt: 'block' }, answers: null });
  assert.deepEqual(config.aliases['e']?.guard, { detectors: {}, answers: { ...OFF, restore: true } });
  assert.deepEqual(issues({ aliases: { c: { provider: 'd', guard: { detectors: { emial: 'log' }, patterns: [] } } } }), [
    { code: 'unknown_setting', path: 'aliases.c.guard.patterns', message: 'unknown setting (allowed here: detectors, answers)' },
    { code: 'invalid_value', path: 'aliases.c.guard.detectors.emial', message: `unknown detector; ${NAMES}` },
  ]);
  assert.deepEqual(issues({ aliases: { c: { provider: 'd', guard: 'on' } } }), [{ code: 'not_object', path: 'aliases.c.guard', message: 'must be an object' }]);
});

test('wrong detectors: each named by its path, unknown names with the list', () => {
  assert.deepEqual(issues({ guard: { detectors: { secret: 'mask', card_number: 'refuse', 'custom:ticket': 'log' }, detector: {} } }), [
    { code: 'unknown_setting', path: 'guard.detector', message: "unknown setting; did you mean 'detectors'?" },
    { code: 'invalid_value', path: 'guard.detectors.secret', message: `unknown detector; ${NAMES}` },
    { code: 'invalid_value', path: 'guard.detectors.card_number', message: 'must be one of "off", "log", "mask", "block"' },
    { code: 'invalid_value', path: 'guard.detectors.custom:ticket', message: `unknown detector; a pattern has its own "action" in the top-level guard.patterns; ${NAMES}` },
  ]);
  assert.deepEqual(issues({ guard: { detectors: ['secrets'] } }), [{ code: 'not_object', path: 'guard.detectors', message: 'must be an object' }]);
  assert.deepEqual(issues({ guard: true }), [{ code: 'not_object', path: 'guard', message: 'must be an object' }]);
});

test('wrong patterns: each named by its path', () => {
  assert.deepEqual(
    issues({
      guard: {
        patterns: [
          { name: 'a', literals: ['x'], regex: 'y', action: 'mask' },
          { name: 'bad name', literals: [], action: 'deny' },
          { literals: ['x', ''], action: 'log' },
          { name: 'c' },
          { name: 'd', regex: '(a)\\1', action: 'block' },
          { name: 'e', literals: ['ok'], action: 'log', kind: 1 },
          'f',
        ],
      },
    }),
    [
      { code: 'conflict', path: 'guard.patterns[0]', message: 'give either "literals" or "regex", not both' },
      { code: 'invalid_name', path: 'guard.patterns[1].name', message: 'pattern names use lower-case letters, digits, "_" and "-" (at most 64): they name a metric label and a placeholder' },
      { code: 'not_one_of', path: 'guard.patterns[1].action', message: 'must be one of "off", "log", "mask", "block"' },
      { code: 'not_array', path: 'guard.patterns[1].literals', message: 'must be a non-empty array of strings' },
      { code: 'required', path: 'guard.patterns[2].name', message: 'is required' },
      { code: 'not_string', path: 'guard.patterns[2].literals[1]', message: 'must be a non-empty string' },
      { code: 'required', path: 'guard.patterns[3].action', message: 'is required' },
      { code: 'required', path: 'guard.patterns[3].literals', message: 'is required (or give "regex")' },
      { code: 'invalid_value', path: 'guard.patterns[4].regex', message: 'cannot be used: regex cannot be run in linear time: a backreference at offset 3; rewrite it without that feature' },
      { code: 'unknown_setting', path: 'guard.patterns[5].kind', message: 'unknown setting (allowed here: name, literals, regex, action)' },
      { code: 'not_object', path: 'guard.patterns[6]', message: 'must be an object' },
    ],
  );
});

test('pattern names must differ; the list is bounded', () => {
  assert.deepEqual(issues({ guard: { patterns: [{ name: 'x', literals: ['a'], action: 'log' }, { name: 'x', regex: 'b', action: 'mask' }] } }), [
    { code: 'conflict', path: 'guard.patterns[1].name', message: "'x' is the name of an earlier pattern; pattern names must differ" },
  ]);
  const many = Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, literals: ['a'], action: 'log' }));
  assert.deepEqual(issues({ guard: { patterns: many } }), [{ code: 'too_many', path: 'guard.patterns', message: 'must have at most 100 entries' }]);
  assert.equal(parse({ guard: { patterns: many.slice(1) } }).guard?.patterns.length, 100);
  assert.deepEqual(issues({ guard: { patterns: {} } }), [
    { code: 'not_array', path: 'guard.patterns', message: 'must be an array of patterns ({ "name", "literals" or "regex", "action" })' },
  ]);
});

test('answers: scan, restore and the hold-back window; each wrong one named', () => {
  assert.deepEqual(parse({ guard: { answers: { scan: true, restore: true, holdBackChars: 1024 } } }).guard?.answers, { scan: true, restore: true, holdBackChars: 1024 });
  assert.deepEqual(parse({ guard: { answers: {} } }).guard?.answers, OFF);
  assert.deepEqual(issues({ guard: { answers: { scan: 'yes', restore: true, holdBackChars: 63, hold: 1 } } }), [
    { code: 'unknown_setting', path: 'guard.answers.hold', message: 'unknown setting (allowed here: scan, restore, holdBackChars)' },
    { code: 'not_boolean', path: 'guard.answers.scan', message: 'must be true or false' },
    { code: 'not_integer', path: 'guard.answers.holdBackChars', message: 'must be an integer from 64 to 65536' },
  ]);
  assert.deepEqual(issues({ aliases: { c: { provider: 'd', guard: { answers: [] } } } }), [{ code: 'not_object', path: 'aliases.c.guard.answers', message: 'must be an object' }]);
});
