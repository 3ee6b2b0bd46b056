import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { generateRequestId, isValidRequestId, requestIdFromHeader } from '../../src/http/request-id.ts';

test('request ids: letters, digits, dot, underscore, hyphen, 1 to 128 characters', () => {
  assert.equal(isValidRequestId('abc-DEF_123.x'), true);
  assert.equal(isValidRequestId('a'.repeat(128)), true);
  assert.equal(isValidRequestId('a'.repeat(129)), false);
  assert.equal(isValidRequestId(''), false);
  for (const bad of ['a b', 'a/b', 'a:b', 'é', 'a\u0000', 'a,b', 'a+b', '<script>']) assert.equal(isValidRequestId(bad), false, bad);
});

test('a generated id is valid and unique', () => {
  const a = generateRequestId();
  assert.match(a, /^req_[0-9a-f]{32}$/);
  assert.equal(isValidRequestId(a), true);
  assert.notEqual(a, generateRequestId());
});

test('requestIdFromHeader keeps a valid id, makes one when absent, rejects a bad one without echoing it', () => {
  assert.equal(requestIdFromHeader('client-42'), 'client-42');
  assert.match(requestIdFromHeader(undefined), /^req_/);
  assert.throws(
    () => requestIdFromHeader('bad id<x>'),
    (err: unknown) =>
      err instanceof InvalidRequestError && err.code === 'invalid_request_id' && !err.message.includes('bad id') && err.message.includes('x-request-id'),
  );
  assert.throws(() => requestIdFromHeader(['a', 'b']), InvalidRequestError);
});
