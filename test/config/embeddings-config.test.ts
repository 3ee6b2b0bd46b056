// The top-level "embeddings" section: its defaults, its ranges, and the
// bounds that cannot pass the JSON parser's own limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import type { ConfigIssue } from '../../src/config/config-issues.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { DEFAULT_EMBEDDINGS } from '../../src/config/embeddings-config.ts';

const base = { providers: { d: { type: 'demo' } }, aliases: { c: { provider: 'd' } } };
const parse = (value: Record<string, unknown>) => parseConfig({ ...base, ...value }, 'f.json', '/tmp').embeddings;

function issues(value: Record<string, unknown>): ConfigIssue[] {
  try {
    parse(value);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  assert.fail('the config parsed');
}

test('unset: the documented defaults', () => {
  assert.deepEqual(DEFAULT_EMBEDDINGS, { maxInputs: 2048, maxInputBytes: 65_536, maxInputTokens: 8192, maxTotalBytes: 4_194_304, maxConcurrentCalls: 4 });
  assert.deepEqual(parse({}), DEFAULT_EMBEDDINGS);
  assert.deepEqual(parse({ embeddings: {} }), DEFAULT_EMBEDDINGS);
});

test('every setting is kept, at the edges of its range', () => {
  const low = { maxInputs: 1, maxInputBytes: 1, maxInputTokens: 1, maxTotalBytes: 1, maxConcurrentCalls: 1 };
  assert.deepEqual(parse({ embeddings: low }), low);
  const high = { maxInputs: 1_000_000, maxInputBytes: 64 * 1024 * 1024, maxInputTokens: 1_000_000, maxTotalBytes: 1024 * 1024 * 1024, maxConcurrentCalls: 64 };
  assert.deepEqual(parse({ limits: { maxMembers: 1_000_000, maxStringBytes: 64 * 1024 * 1024 }, embeddings: high }), high);
});

test('each wrong value named by its path; an unknown setting by its near miss', () => {
  assert.deepEqual(issues({ embeddings: { maxInputs: 0, maxInputBytes: 1.5, maxInputTokens: '8', maxTotalBytes: -1, maxConcurrentCalls: 65, maxInput: 3 } }), [
    { code: 'unknown_setting', path: 'embeddings.maxInput', message: "unknown setting; did you mean 'maxInputs'?" },
    { code: 'not_integer', path: 'embeddings.maxInputs', message: 'must be an integer from 1 to 1000000' },
    { code: 'not_integer', path: 'embeddings.maxInputBytes', message: 'must be an integer from 1 to 67108864' },
    { code: 'not_integer', path: 'embeddings.maxInputTokens', message: 'must be an integer from 1 to 1000000' },
    { code: 'not_integer', path: 'embeddings.maxTotalBytes', message: 'must be an integer from 1 to 1073741824' },
    { code: 'not_integer', path: 'embeddings.maxConcurrentCalls', message: 'must be an integer from 1 to 64' },
  ]);
  assert.deepEqual(issues({ embeddings: [] }), [{ code: 'not_object', path: 'embeddings', message: 'must be an object' }]);
});

test('a count past limits.maxMembers, or a string past limits.maxStringBytes, is a conflict naming both ways out', () => {
  assert.deepEqual(issues({ embeddings: { maxInputs: 10_001, maxInputTokens: 20_000, maxInputBytes: 3 * 1024 * 1024 } }), [
    {
      code: 'conflict',
      path: 'embeddings.maxInputs',
      message: 'must not exceed limits.maxMembers (10000): the JSON parser refuses a longer input array first; lower it, or raise limits.maxMembers',
    },
    {
      code: 'conflict',
      path: 'embeddings.maxInputTokens',
      message: 'must not exceed limits.maxMembers (10000): the JSON parser refuses a longer token array first; lower it, or raise limits.maxMembers',
    },
    {
      code: 'conflict',
      path: 'embeddings.maxInputBytes',
      message: 'must not exceed limits.maxStringBytes (2097152): the JSON parser refuses a longer string first; lower it, or raise limits.maxStringBytes',
    },
  ]);
  assert.deepEqual(issues({ embeddings: { maxInputBytes: 2000, maxTotalBytes: 1000 } }), [
    { code: 'conflict', path: 'embeddings.maxInputBytes', message: 'must not exceed embeddings.maxTotalBytes (1000): one input is part of the total' },
  ]);
});

test('unset bounds follow lowered limits, so such a config stays valid', () => {
  assert.deepEqual(parse({ limits: { maxMembers: 1000, maxStringBytes: 4096 } }), { ...DEFAULT_EMBEDDINGS, maxInputs: 1000, maxInputTokens: 1000, maxInputBytes: 4096 });
  assert.deepEqual(parse({ limits: { maxMembers: 1000 }, embeddings: { maxInputs: 1000 } }).maxInputTokens, 1000);
});
