// The authenticator port (Authenticator in src/api/keys.ts): a host's decision
// of each API request's key. A known key gives a policy the gateway accepts as it
// is (the gateway's own check, which fails a request with a 500 on a bad one), the
// same on every door and every ask; an unknown key and a request without one give
// null (a 401), never a throw; the request is only read.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiDoor, AuthenticationRequest, Authenticator, KeyPolicy } from '../api/keys.ts';
import { parseHostPolicy } from '../gateway/host-policy.ts';

/** The authenticator to hold to the contract, with a key it knows and one it does not. */
export interface AuthenticatorUnderTest {
  authenticate: Authenticator;
  /** A key it knows (sent as `Authorization: Bearer <key>`). */
  knownKey: string;
  /** A key it does not know. */
  unknownKey: string;
}

const DOORS: readonly ApiDoor[] = ['chat', 'messages', 'count_tokens', 'responses', 'embeddings', 'models'];

function requestFor(apiKey: string | null, door: ApiDoor): AuthenticationRequest {
  const headers = apiKey === null ? { host: 'gateway.test' } : { host: 'gateway.test', authorization: `Bearer ${apiKey}` };
  return Object.freeze({ apiKey, headers: Object.freeze(headers), clientAddress: '203.0.113.7', clientCertificate: null, door });
}

/**
 * Registers the authenticator cases as node:test tests in a describe block named after `name`:
 * the known key's policy passes the gateway's check the same on every door and
 * ask; an unknown key and no key give null, never a throw; the request is only read.
 */
export function runAuthenticatorContract(name: string, make: () => AuthenticatorUnderTest | Promise<AuthenticatorUnderTest>): void {
  describe(`authenticator contract: ${name}`, () => {
    test('a known key: a policy the gateway accepts, the same on every door', async () => {
      const { authenticate, knownKey } = await make();
      const policies: KeyPolicy[] = [];
      for (const door of DOORS) {
        const policy = await authenticate(requestFor(knownKey, door));
        assert.notEqual(policy, null, `the known key was refused on the ${door} door`);
        parseHostPolicy(policy);
        policies.push(policy as KeyPolicy);
      }
      for (const policy of policies) assert.deepEqual(parseHostPolicy(policy), parseHostPolicy(policies[0]));
    });

    test('asked twice for the same key: the same policy', async () => {
      const { authenticate, knownKey } = await make();
      const first = await authenticate(requestFor(knownKey, 'chat'));
      const second = await authenticate(requestFor(knownKey, 'chat'));
      assert.deepEqual(parseHostPolicy(second), parseHostPolicy(first));
    });

    test('an unknown key: null, not a throw', async () => {
      const { authenticate, unknownKey } = await make();
      for (const door of DOORS) assert.equal(await authenticate(requestFor(unknownKey, door)), null);
    });

    test('no key at all: null, not a throw', async () => {
      const { authenticate } = await make();
      assert.equal(await authenticate(requestFor(null, 'chat')), null);
    });

    test('the request is only read (it is frozen here)', async () => {
      const { authenticate, knownKey } = await make();
      const request = requestFor(knownKey, 'responses');
      await authenticate(request);
      assert.deepEqual(request, requestFor(knownKey, 'responses'));
    });
  });
}
