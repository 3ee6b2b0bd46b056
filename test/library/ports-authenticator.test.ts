// A host's Authenticator: held to the contract (a host-written one, public types
// only), and through a real embedded gateway: the policy it returns is what the
// request runs with; null is 401; a bad policy or a throw is a generic 500 and an
// error log naming the field, and the key store is never asked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AuthenticationRequest, Authenticator, KeyPolicy } from '../../src/api/keys.ts';
import { runAuthenticatorContract } from '../../src/testing/authenticator-contract.ts';
import { logged, postChat, startPortsGateway, type PortsGateway } from './ports-harness.ts';

/** As a host writes one: its own table of keys (its database), policies as data. */
function hostAuthenticator(table: ReadonlyMap<string, KeyPolicy | unknown>, seen: AuthenticationRequest[] = []): Authenticator {
  return async (request) => {
    seen.push(request);
    if (request.apiKey === null) return null;
    return (table.get(request.apiKey) as KeyPolicy | undefined) ?? null;
  };
}

runAuthenticatorContract('a host table', () => ({
  authenticate: hostAuthenticator(new Map([['host-key-1', { id: 'team-a', allowedAliases: ['service-fake'], limits: { requestsPerMinute: 100 } }]])),
  knownKey: 'host-key-1',
  unknownKey: 'host-key-2',
}));

describe('an embedded gateway with a host authenticator', () => {
  const seen: AuthenticationRequest[] = [];
  const table = new Map<string, unknown>([
    ['good', { id: 'team-a', allowedAliases: ['service-fake'] }],
    ['bad-limits', { id: 'team-b', limits: { requestsPerMinute: -5 } }],
    ['bad-field', { id: 'team-c', alowedAliases: ['service-fake'] }],
    ['empty-id', { id: '' }],
  ]);
  let gw: PortsGateway;
  before(async () => {
    gw = await startPortsGateway({
      authenticate: (request) => {
        if (request.apiKey === 'throws') throw new Error(`database down; query quoted key ${request.apiKey}`);
        return hostAuthenticator(table as ReadonlyMap<string, KeyPolicy>, seen)(request);
      },
    });
  });
  after(() => gw.close());

  test('a known key is served with its policy; the request the host saw', async () => {
    seen.length = 0;
    const answer = await postChat(gw, 'good');
    assert.equal(answer.status, 200);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.apiKey, 'good');
    assert.equal(seen[0]?.door, 'chat');
    assert.equal(seen[0]?.clientAddress, '127.0.0.1');
    assert.equal(seen[0]?.clientCertificate, null);
    assert.equal(seen[0]?.headers['authorization'], 'Bearer good');
    assert.equal(logged(gw, 'request').at(-1)?.['keyId'], 'team-a');
  });

  test('the policy decides the aliases: another is 403', async () => {
    const answer = await postChat(gw, 'good', 'service-other');
    assert.equal(answer.status, 403);
    assert.equal((answer.body['error'] as Record<string, unknown>)['code'], 'model_not_allowed');
  });

  test('null (unknown key, or no key: apiKey null) is 401', async () => {
    seen.length = 0;
    assert.equal((await postChat(gw, 'nobody')).status, 401);
    assert.equal((await postChat(gw, null)).status, 401);
    assert.deepEqual(seen.map((r) => r.apiKey), ['nobody', null]);
  });

  for (const [key, field, problem] of [
    ['bad-limits', 'limits.requestsPerMinute', 'limits.requestsPerMinute must be an integer from 1 to 1000000000 (or null for no limit); got -5'],
    ['bad-field', 'alowedAliases', 'is not a KeyPolicy field (id, expiresAt, allowedAliases, limits, guard)'],
    ['empty-id', 'id', 'must have 1 to 128 characters'],
  ] as const) {
    test(`a policy with a bad ${field}: generic 500, an error log naming the field, the upstream not called`, async () => {
      const calls = gw.upstream.count;
      const answer = await postChat(gw, key);
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body['error'], { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'internal_error' });
      const line = logged(gw, 'the authenticator returned an invalid KeyPolicy; the request failed with a 500').at(-1);
      assert.equal(line?.['field'], field);
      assert.equal(line?.['problem'], problem);
      assert.equal(gw.upstream.count, calls);
    });
  }

  test("a throw: generic 500 and an error log with the error's name, never the key its message quotes", async () => {
    const answer = await postChat(gw, 'throws');
    assert.equal(answer.status, 500);
    const line = logged(gw, 'the authenticator threw; the request failed with a 500').at(-1);
    assert.equal(line?.['error'], 'Error');
    assert.equal(JSON.stringify(gw.logs).includes('quoted key throws'), false);
  });

  test('the key store is not asked: a key it holds is refused when the host says null', async () => {
    const created = await gw.state.keys.create('stored');
    assert.equal((await postChat(gw, created.key)).status, 401);
  });
});
