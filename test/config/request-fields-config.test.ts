// "requestFields": which of OpenAI's request fields beyond the contract's
// table the gateway takes, at the top level and per alias, and how a wrong
// list is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, type GatewayConfig } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { REQUEST_FIELD_NAMES } from '../../src/config/request-fields-config.ts';

const providers = { demo: { type: 'demo' } };

function parse(extra: Record<string, unknown>, alias: Record<string, unknown> = {}): GatewayConfig {
  return parseConfig({ providers, aliases: { chat: { provider: 'demo', ...alias }, other: { provider: 'demo' } }, ...extra }, '/etc/p.json', '/etc');
}

function problems(extra: Record<string, unknown>, alias: Record<string, unknown> = {}): string[][] {
  try {
    parse(extra, alias);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.issues.map((i) => [i.path, i.message]);
  }
  assert.fail('the config parsed');
}

test('the default is the contract alone: no list at the top level, none of its own on an alias', () => {
  const c = parse({});
  assert.deepEqual(c.requestFields, []);
  assert.equal(c.aliases['chat']?.requestFields, null);
});

test('a top-level list and an alias list are kept apart, in the order given, without repeats', () => {
  const c = parse({ requestFields: ['user', 'json_schema', 'user'] }, { requestFields: ['seed'] });
  assert.deepEqual(c.requestFields, ['user', 'json_schema']);
  assert.deepEqual(c.aliases['chat']?.requestFields, ['seed']);
  assert.equal(c.aliases['other']?.requestFields, null);
  assert.deepEqual(parse({ requestFields: ['user'] }, { requestFields: [] }).aliases['chat']?.requestFields, []);
});

test('every name can be listed', () => {
  assert.deepEqual(parse({ requestFields: [...REQUEST_FIELD_NAMES] }).requestFields, REQUEST_FIELD_NAMES);
});

test('a wrong list names its path and what fits', () => {
  assert.deepEqual(problems({ requestFields: 'seed' }), [['requestFields', 'must be an array of request field names, e.g. ["json_schema", "seed"]']]);
  assert.deepEqual(problems({}, { requestFields: ['sead', 'temperature'] }), [
    ['aliases.chat.requestFields[0]', '"sead" is not a request field the gateway can accept; did you mean "seed"?'],
    ['aliases.chat.requestFields[1]', `"temperature" is in the contract's table: every alias takes it already`],
  ]);
  const [issue] = problems({ requestFields: [7] });
  assert.equal(issue?.[0], 'requestFields[0]');
  assert.match(issue?.[1] ?? '', /^must be one of "json_schema", "seed", /);
  assert.deepEqual(problems({ requestFields: ['audio', 'functions'] }), [
    ['requestFields[0]', '"audio" cannot be accepted: the gateway answers text only'],
    ['requestFields[1]', `"functions" cannot be accepted: it is deprecated; the contract's tools take its place`],
  ]);
  assert.deepEqual(problems({ requestFields: ['top_logprobs'] }), [
    ['requestFields', '"top_logprobs" needs "logprobs" in the same list (OpenAI takes top_logprobs only with logprobs true)'],
  ]);
});
