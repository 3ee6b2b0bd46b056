import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { choices, didYouMean, editDistance, formatIssue, issueMessage } from '../../src/config/config-issues.ts';

test('didYouMean: another case, a swap, a typo; nothing for a key far from every allowed one', () => {
  const upstream = ['type', 'baseUrl', 'apiKeyEnv', 'apiKeyFile', 'headers', 'timeoutMs'];
  assert.equal(didYouMean('baseURL', upstream), 'baseUrl');
  assert.equal(didYouMean('baseurl', upstream), 'baseUrl');
  assert.equal(didYouMean('prot', ['host', 'port']), 'port');
  assert.equal(didYouMean('modle', ['provider', 'model', 'targets']), 'model');
  assert.equal(didYouMean('apiKeyEnvv', upstream), 'apiKeyEnv');
  assert.equal(didYouMean('timeoutSec', upstream), null);
  assert.equal(didYouMean('bind', ['enabled', 'host', 'port']), null);
  // Short keys get one edit at most: "hst" is host, "xyz" is nothing.
  assert.equal(didYouMean('hst', ['host', 'port']), 'host');
  assert.equal(didYouMean('xyz', ['host', 'port']), null);
});

test('editDistance counts a swap of neighbours as one edit', () => {
  assert.equal(editDistance('prot', 'port'), 1);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(editDistance('same', 'same'), 0);
});

test('the wording of each generic code', () => {
  assert.equal(issueMessage({ code: 'not_object' }), 'must be an object');
  assert.equal(issueMessage({ code: 'not_string' }), 'must be a non-empty string');
  assert.equal(issueMessage({ code: 'not_boolean' }), 'must be true or false');
  assert.equal(issueMessage({ code: 'required' }), 'is required');
  assert.equal(issueMessage({ code: 'required', hint: '(or give "targets")' }), 'is required (or give "targets")');
  assert.equal(issueMessage({ code: 'not_integer', min: 0, max: 65535 }), 'must be an integer from 0 to 65535');
  assert.equal(issueMessage({ code: 'unknown_setting', allowed: ['host', 'port'], suggestion: 'port' }), "unknown setting; did you mean 'port'?");
  assert.equal(issueMessage({ code: 'unknown_setting', allowed: ['host', 'port'], suggestion: null }), 'unknown setting (allowed here: host, port)');
  assert.equal(issueMessage({ code: 'unknown_reference', kind: 'alias', name: 'x' }), `names alias 'x', which is not defined under "aliases"`);
  assert.equal(issueMessage({ code: 'conflict', message: 'set a or b, not both' }), 'set a or b, not both');
  assert.equal(choices(['memory', 'redis']), '"memory" or "redis"');
  assert.equal(choices(['openai', 'anthropic', 'demo']), '"openai", "anthropic" or "demo"');
  assert.equal(choices(['debug', 'info', 'warn', 'error']), 'one of "debug", "info", "warn", "error"');
  assert.equal(formatIssue({ code: 'unreadable', path: '', message: 'file not found' }), 'file not found');
});

test('ConfigError: one problem is one line; several are a count and one indented line each', () => {
  const one = new ConfigError('/etc/p.json', 'listen.port', 'must be an integer from 0 to 65535', 'not_integer');
  assert.equal(one.message, '/etc/p.json: listen.port: must be an integer from 0 to 65535');
  assert.deepEqual(one.issues, [{ code: 'not_integer', path: 'listen.port', message: 'must be an integer from 0 to 65535' }]);
  assert.equal(one.problem, 'listen.port: must be an integer from 0 to 65535');
  const many = new ConfigError(null, [
    { code: 'required', path: 'providers', message: 'is required' },
    { code: 'unknown_setting', path: 'lisen', message: "unknown setting; did you mean 'listen'?" },
  ]);
  assert.equal(many.message, "embedded config: 2 problems\n  providers: is required\n  lisen: unknown setting; did you mean 'listen'?");
  assert.equal(many.path, 'providers');
});
