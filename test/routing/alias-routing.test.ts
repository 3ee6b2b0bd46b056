import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelNotFoundError } from '../../src/errors.ts';
import { listAliases, resolveAlias } from '../../src/routing/alias-routing.ts';

const config = {
  aliases: {
    'service-chat': { provider: 'a', model: 'm1', maxOutputTokens: null },
    'service-code': { provider: 'a', model: 'm2', maxOutputTokens: 512 },
  },
  auto: { default: 'service-code' },
};

test('a named alias resolves to itself', () => {
  const r = resolveAlias({ model: 'service-chat' }, config);
  assert.deepEqual(r, { alias: 'service-chat', target: config.aliases['service-chat'], reason: 'requested' });
});

test('service-auto resolves to the default alias, never to itself', () => {
  const r = resolveAlias({ model: 'service-auto' }, config);
  assert.equal(r.alias, 'service-code');
  assert.equal(r.reason, 'default');
});

test('an unknown alias is 404 model_not_found; prototype names are not aliases', () => {
  for (const model of ['gpt-4o', 'constructor', '__proto__', 'toString']) {
    assert.throws(
      () => resolveAlias({ model }, config),
      (err: unknown) => err instanceof ModelNotFoundError && err.status === 404 && err.code === 'model_not_found' && err.param === 'model',
    );
  }
});

test('the listing holds every alias and service-auto last', () => {
  assert.deepEqual(listAliases(config), ['service-chat', 'service-code', 'service-auto']);
});
