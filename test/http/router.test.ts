import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRouter, pathParams } from '../../src/http/router.ts';

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

test('router: :name segments match one non-empty segment, after exact paths', () => {
  const r = createRouter<string>();
  r.add('GET', '/api/keys', 'list');
  r.add('GET', '/api/keys/:id', 'get');
  r.add('PATCH', '/api/keys/:id', 'patch');
  r.add('POST', '/api/keys/:id/revoke', 'revoke');
  r.add('GET', '/api/keys/new', 'exact wins');
  assert.deepEqual(r.match('GET', '/api/keys/key_1'), { kind: 'found', handler: 'get' });
  assert.deepEqual(r.match('PATCH', '/api/keys/key_1'), { kind: 'found', handler: 'patch' });
  assert.deepEqual(r.match('GET', '/api/keys/new'), { kind: 'found', handler: 'exact wins' });
  assert.deepEqual(r.match('POST', '/api/keys/key_1/revoke'), { kind: 'found', handler: 'revoke' });
  assert.deepEqual(r.match('DELETE', '/api/keys/key_1'), { kind: 'method_not_allowed', allow: ['GET', 'HEAD', 'PATCH'] });
  assert.deepEqual(r.match('GET', '/api/keys/'), { kind: 'not_found' });
  assert.deepEqual(r.match('GET', '/api/keys/a/b'), { kind: 'not_found' });
  assert.deepEqual(r.match('POST', '/api/keys/key_1/rotate'), { kind: 'not_found' });
  assert.deepEqual(pathParams('/api/keys/:id/revoke', '/api/keys/key%5F1/revoke'), { id: 'key_1' });
  assert.deepEqual(pathParams('/api/keys/:id', '/api/keys/%E0%A4%A'), { id: '%E0%A4%A' });
});
