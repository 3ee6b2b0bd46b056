// The login screen's words for a refused single sign-on, and the header's "who".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchWithoutSsoError, signedInAs, SSO_ERROR_MESSAGES, ssoErrorMessage } from '../../src/dashboard/sign-in.ts';

const SESSION = { csrfToken: 'c', expiresAt: '2026-11-27T00:00:00.000Z', mustSetPassword: false };

test('each refusal code the callback sends has its own words', () => {
  const codes = ['sso_state_invalid', 'sso_id_token_invalid', 'sso_user_not_allowed', 'sso_provider_error'];
  assert.deepEqual(Object.keys(SSO_ERROR_MESSAGES).sort(), [...codes].sort());
  const messages = codes.map((code) => ssoErrorMessage(`?sso_error=${code}`));
  assert.equal(new Set(messages).size, codes.length, 'no two codes share a message');
  assert.equal(ssoErrorMessage('?sso_error=sso_user_not_allowed'), SSO_ERROR_MESSAGES['sso_user_not_allowed']);
});

test('no code, no message; an unknown code gets a general one, never the code echoed', () => {
  assert.equal(ssoErrorMessage(''), null);
  assert.equal(ssoErrorMessage('?x=1'), null);
  assert.equal(ssoErrorMessage('?sso_error=<script>'), 'Single sign-on failed. Try again.');
  assert.equal(ssoErrorMessage('?sso_error=toString'), 'Single sign-on failed. Try again.', 'not read off Object.prototype');
});

test('the address keeps the rest of its query once the message is shown', () => {
  assert.equal(searchWithoutSsoError('?sso_error=sso_state_invalid'), '');
  assert.equal(searchWithoutSsoError('?a=1&sso_error=sso_state_invalid&b=2'), '?a=1&b=2');
  assert.equal(searchWithoutSsoError(''), '');
});

test('who is signed in: name or id, and how; nothing from an older server', () => {
  assert.deepEqual(signedInAs({ ...SESSION, actor: { kind: 'sso', id: '2482', name: 'alice@example.com' } }), { name: 'alice@example.com', kind: 'single sign-on' });
  assert.deepEqual(signedInAs({ ...SESSION, actor: { kind: 'password', id: 'admin' } }), { name: 'admin', kind: 'password' });
  assert.deepEqual(signedInAs({ ...SESSION, actor: { kind: 'bootstrap', id: 'bootstrap' } }), { name: 'bootstrap', kind: 'bootstrap token' });
  assert.equal(signedInAs(SESSION), null);
});
