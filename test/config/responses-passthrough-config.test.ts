// responses and responsesPassthrough: what an openai provider does with a
// Responses client's request, each mistake with its own message, the
// settings refused on other types, and the union of names the Responses
// validator accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Checker } from '../../src/config/config-checker.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { OpenAIProviderConfig, ProviderConfig } from '../../src/config/config.ts';
import { parseProvider } from '../../src/config/provider-types.ts';
import { DOCUMENTED_RESPONSES_FIELDS, responsesPassthroughFields } from '../../src/config/responses-passthrough-config.ts';
import { createProviderBinding } from '../../src/providers/provider-factories.ts';
import { ProviderKind } from '../../src/upstream/provider.ts';
import { origin, originRequest } from '../providers/responses-origin-fixtures.ts';

function parse(value: Record<string, unknown>): { config: ProviderConfig | undefined; issues: Checker['issues'] } {
  const c = new Checker('f.json');
  return { config: parseProvider(c, value, 'providers.p'), issues: c.issues };
}

function openai(settings: Record<string, unknown>): { config: OpenAIProviderConfig; issues: Checker['issues'] } {
  const { config, issues } = parse({ type: 'openai', baseUrl: 'http://h/v1', ...settings });
  assert.equal(config?.type, 'openai');
  return { config: config as OpenAIProviderConfig, issues };
}

/** Where the provider built from `config` sends a Responses request. */
function endpointOf(config: OpenAIProviderConfig): string | undefined {
  const { provider } = createProviderBinding(config, undefined);
  assert.equal(provider.kind, ProviderKind.Http);
  return provider.kind === ProviderKind.Http ? provider.codec.endpoint?.(originRequest(origin())) : undefined;
}

test('default: translate, no passthrough field; the provider sends a Responses request to its chat endpoint', () => {
  const { config, issues } = openai({});
  assert.deepEqual(issues, []);
  assert.equal(config.responses, 'translate');
  assert.deepEqual(config.responsesPassthrough, []);
  assert.equal(endpointOf(config), undefined);
});

test('passthrough with allowed fields: kept, and the provider sends a Responses request to {baseUrl}/responses', () => {
  const { config, issues } = openai({ responses: 'passthrough', responsesPassthrough: ['beta_knob', 'new_knob'] });
  assert.deepEqual(issues, []);
  assert.equal(config.responses, 'passthrough');
  assert.deepEqual(config.responsesPassthrough, ['beta_knob', 'new_knob']);
  assert.equal(endpointOf(config), 'http://h/v1/responses');
});

test('responses: a value outside the two modes is named with both', () => {
  assert.deepEqual(openai({ responses: 'pass' }).issues, [{ code: 'not_one_of', path: 'providers.p.responses', message: 'must be "passthrough" or "translate"' }]);
});

test('responsesPassthrough: each mistake named with its own message', () => {
  assert.deepEqual(openai({ responses: 'passthrough', responsesPassthrough: 'x' }).issues, [
    { code: 'not_array', path: 'providers.p.responsesPassthrough', message: 'must be an array of at most 32 top-level Responses field names, e.g. ["new_field"]' },
  ]);
  const { config, issues } = openai({ responses: 'passthrough', responsesPassthrough: ['Knob', 'reasoning', 'instruction', 'knob', 'knob'] });
  assert.deepEqual(issues, [
    {
      code: 'invalid_value',
      path: 'providers.p.responsesPassthrough[0]',
      message: 'must be a plain top-level field name: lower-case letters, digits and underscores, starting with a letter (at most 64)',
    },
    { code: 'invalid_value', path: 'providers.p.responsesPassthrough[1]', message: '"reasoning" is a documented Responses field, which the gateway checks itself: remove it' },
    {
      code: 'invalid_value',
      path: 'providers.p.responsesPassthrough[2]',
      message: '"instruction" is close to the documented field "instructions" (checked by the gateway, no passthrough needed): fix the name or remove it',
    },
    { code: 'conflict', path: 'providers.p.responsesPassthrough[4]', message: '"knob" is listed twice' },
  ]);
  assert.deepEqual(config.responsesPassthrough, ['knob']);
});

test('responsesPassthrough in translate mode (the default) is a conflict that says how to fix it', () => {
  const { config, issues } = openai({ responsesPassthrough: ['knob'] });
  assert.deepEqual(issues, [
    {
      code: 'conflict',
      path: 'providers.p.responsesPassthrough',
      message:
        'applies only with "responses": "passthrough" (in "translate" mode the upstream receives the gateway\'s chat translation of a Responses request, never the client\'s body): set "responses": "passthrough" or remove it',
    },
  ]);
  assert.deepEqual(config.responsesPassthrough, []);
});

test('other provider types: both settings refused, saying where they apply', () => {
  const where = (type: string): string =>
    `applies to "type": "openai" providers only (an "${type}" provider receives the gateway's chat translation of a Responses request, never the client's body): remove it`;
  assert.deepEqual(parse({ type: 'anthropic', responses: 'passthrough', responsesPassthrough: ['knob'] }).issues, [
    { code: 'conflict', path: 'providers.p.responses', message: where('anthropic') },
    { code: 'conflict', path: 'providers.p.responsesPassthrough', message: where('anthropic') },
  ]);
  assert.deepEqual(parse({ type: 'demo', responses: 'translate' }).issues, [{ code: 'conflict', path: 'providers.p.responses', message: where('demo') }]);
});

test('every documented Responses field is refused as a passthrough', () => {
  for (const name of DOCUMENTED_RESPONSES_FIELDS) {
    assert.deepEqual(openai({ responses: 'passthrough', responsesPassthrough: [name] }).issues, [
      { code: 'invalid_value', path: 'providers.p.responsesPassthrough[0]', message: `"${name}" is a documented Responses field, which the gateway checks itself: remove it` },
    ]);
  }
});

test('responsesPassthroughFields: the union over openai providers in passthrough mode, each name once', () => {
  const config = parseConfig(
    {
      dataDir: '/tmp/portcullis-responses-passthrough',
      providers: {
        a: { type: 'openai', baseUrl: 'http://a/v1', responses: 'passthrough', responsesPassthrough: ['beta_knob', 'knob'] },
        b: { type: 'openai', baseUrl: 'http://b/v1', responses: 'passthrough', responsesPassthrough: ['knob', 'other'] },
        c: { type: 'openai', baseUrl: 'http://c/v1' },
        d: { type: 'anthropic', messagesPassthrough: ['speed'] },
      },
      aliases: { x: { provider: 'c' } },
    },
    null,
    '/tmp',
  );
  assert.deepEqual([...responsesPassthroughFields(config)], ['beta_knob', 'knob', 'other']);
});

test('responsesHostedTools: web_search by default in passthrough, none in translate; unknown, client-run and repeated names refused; translate mode a conflict', () => {
  assert.deepEqual(openai({ responses: 'passthrough' }).config?.responsesHostedTools, ['web_search']);
  assert.deepEqual(openai({}).config?.responsesHostedTools, []);
  assert.deepEqual(openai({ responses: 'passthrough', responsesHostedTools: ['file_search', 'web_search'] }).config?.responsesHostedTools, ['file_search', 'web_search']);
  const { issues } = openai({ responses: 'passthrough', responsesHostedTools: ['shell', 'file_search', 'file_search'] });
  assert.deepEqual(issues.map((i) => [i.path, i.code]), [
    ['providers.p.responsesHostedTools[0]', 'invalid_value'],
    ['providers.p.responsesHostedTools[2]', 'conflict'],
  ]);
  assert.deepEqual(openai({ responsesHostedTools: ['web_search'] }).issues.map((i) => [i.path, i.code]), [['providers.p.responsesHostedTools', 'conflict']]);
});
