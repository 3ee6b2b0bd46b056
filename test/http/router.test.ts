import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRouter } from '../../src/http/router.ts';

test('router matches method and exact path', () => {
  const r = createRouter<string>();
  r.add('POST', '/v1/chat/completions', 'chat');
  r.add('GET', '/v1/models', 'models');
  assert.deepEqual(r.match('POST', '/v1/chat/completions'), { kind: 'found', handler: 'chat' });
  assert.deepEqual(r.match('GET', '/v1/models'), { kind: 'found', handler: 'models' });
});

test('router answers HEAD with the GET handler', () => {
  const r = createRouter<string>();
  r.add('GET', '/v1/models', 'models');
  assert.deepEqual(r.match('HEAD', '/v1/models'), { kind: 'found', handler: 'models' });
});

test('router reports the allowed methods for a known path, sorted, HEAD beside GET', () => {
  const r = createRouter<string>();
  r.add('POST', '/v1/chat/completions', 'chat');
  r.add('GET', '/v1/models', 'models');
  assert.deepEqual(r.match('GET', '/v1/chat/completions'), { kind: 'method_not_allowed', allow: ['POST'] });
  assert.deepEqual(r.match('DELETE', '/v1/models'), { kind: 'method_not_allowed', allow: ['GET', 'HEAD'] });
});

test('router does not normalise paths: trailing slash, case and prefixes are unknown', () => {
  const r = createRouter<string>();
  r.add('GET', '/v1/models', 'models');
  for (const p of ['/v1/models/', '/V1/models', '/api/v1/models', '/v1', '/', '/v1/models/x']) {
    assert.deepEqual(r.match('GET', p), { kind: 'not_found' }, p);
  }
});

test('router refuses a duplicated route', () => {
  const r = createRouter<string>();
  r.add('GET', '/a', 'x');
  assert.throws(() => r.add('get', '/a', 'y'), /already registered/);
});
