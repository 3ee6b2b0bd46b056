// A host's ProviderKeySource: held to the contract (a host-written vault cache,
// public types only), and through a real embedded gateway: asked on every
// exchange, so a rotation is used by the next request without a reload;
// undefined sends the config's key; a throw or an unusable key is a generic 500
// with an error log that never holds a key.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderKeySource } from '../../src/api/ports.ts';
import { runProviderKeySourceContract } from '../../src/testing/provider-key-contract.ts';
import { logged, postChat, startPortsGateway, type PortsGateway } from './ports-harness.ts';

/** As a host writes one: a cache of its vault, refreshed by the host, read synchronously. */
function vaultCache(initial: Record<string, string>): { source: ProviderKeySource; put(provider: string, key: string | undefined): void } {
  const cache = new Map(Object.entries(initial));
  return {
    source: (provider) => cache.get(provider),
    put: (provider, key) => (key === undefined ? cache.delete(provider) : cache.set(provider, key)),
  };
}

runProviderKeySourceContract('a host vault cache', () => {
  const vault = vaultCache({ fake: 'sk-vault-1' });
  let version = 1;
  return { source: vault.source, provider: 'fake', unknownProvider: 'other', rotate: () => vault.put('fake', `sk-vault-${++version}`) };
});

describe('an embedded gateway with a host provider key source', () => {
  const vault = vaultCache({ fake: 'sk-vault-1' });
  let answer: unknown = undefined;
  let gw: PortsGateway;
  const authorizationSent = (): unknown => gw.upstream.received.at(-1)?.headers['authorization'];
  before(async () => {
    gw = await startPortsGateway({
      providerKey: (provider) => {
        if (answer instanceof Error) throw answer;
        return answer === undefined ? vault.source(provider) : (answer as string);
      },
    });
    const created = await gw.state.keys.create('client');
    key = created.key;
  });
  after(() => gw.close());
  let key = '';

  test("the host's key goes upstream; a rotation is used by the next request", async () => {
    assert.equal((await postChat(gw, key)).status, 200);
    assert.equal(authorizationSent(), 'Bearer sk-vault-1');
    vault.put('fake', 'sk-vault-2');
    assert.equal((await postChat(gw, key)).status, 200);
    assert.equal(authorizationSent(), 'Bearer sk-vault-2');
  });

  test("undefined: the config's key (apiKeyEnv)", async () => {
    vault.put('fake', undefined);
    assert.equal((await postChat(gw, key)).status, 200);
    assert.equal(authorizationSent(), 'Bearer sk-config-key');
    vault.put('fake', 'sk-vault-3');
  });

  for (const [what, given, problem] of [
    ['a number', 42, "it returned a number; return a string, or undefined for the config's key"],
    ['an empty string', '', "it returned an empty string; return undefined for the config's key"],
    ['a key with a line break', 'sk-vault\r\nx-injected: 1', 'the key holds whitespace or characters outside visible ASCII, which a header cannot carry'],
  ] as const) {
    test(`${what}: generic 500, an error log naming the provider and the problem, never the value; nothing sent upstream`, async () => {
      answer = given;
      const calls = gw.upstream.count;
      try {
        const response = await postChat(gw, key);
        assert.equal(response.status, 500);
        assert.equal((response.body['error'] as Record<string, unknown>)['code'], 'internal_error');
      } finally {
        answer = undefined;
      }
      assert.equal(gw.upstream.count, calls);
      const line = logged(gw, 'the provider key source gave an unusable key; the request failed with a 500').at(-1);
      assert.deepEqual([line?.['provider'], line?.['problem']], ['fake', problem]);
    });
  }

  test("a throw: generic 500 and an error log with the error's name only (its message may hold a key)", async () => {
    answer = new Error('vault sealed; cached key sk-vault-3 expired');
    try {
      assert.equal((await postChat(gw, key)).status, 500);
    } finally {
      answer = undefined;
    }
    const line = logged(gw, 'the provider key source threw; the request failed with a 500').at(-1);
    assert.deepEqual([line?.['provider'], line?.['error']], ['fake', 'Error']);
    assert.equal(JSON.stringify(gw.logs).includes('sk-vault'), false);
    assert.equal(JSON.stringify(gw.logs).includes('sk-config-key'), false);
  });
});

describe('a provider key source at start', () => {
  test("a key from the host: the config's apiKeyEnv need not be set", async () => {
    const gw = await startPortsGateway({ env: {}, providerKey: (provider) => (provider === 'fake' ? 'sk-vault-only' : undefined) });
    try {
      const { key } = await gw.state.keys.create('client');
      assert.equal((await postChat(gw, key)).status, 200);
      assert.equal(gw.upstream.received.at(-1)?.headers['authorization'], 'Bearer sk-vault-only');
    } finally {
      await gw.close();
    }
  });

  test('the host stops giving a key and the config has none: a generic 500, an error log naming the provider, no upstream call', async () => {
    let vault: string | undefined = 'sk-vault-1';
    const gw = await startPortsGateway({ env: {}, providerKey: () => vault, authenticate: () => ({ id: 'team-a' }) });
    try {
      assert.equal((await postChat(gw, 'any')).status, 200);
      vault = undefined;
      const calls = gw.upstream.count;
      const answer = await postChat(gw, 'any');
      assert.equal(answer.status, 500);
      assert.equal((answer.body['error'] as Record<string, unknown>)['code'], 'internal_error');
      assert.equal(gw.upstream.count, calls);
      const lines = logged(gw, 'the provider key source gave no key and the config has none; the request failed with a 500');
      assert.deepEqual(lines.map((line) => line['provider']), ['fake']);
      assert.equal(JSON.stringify(gw.logs).includes('sk-vault-1'), false);
    } finally {
      await gw.close();
    }
  });

  test('no key from the host and none in the environment: the config problem as without a source', async () => {
    await assert.rejects(startPortsGateway({ env: {}, providerKey: () => undefined }), {
      name: 'ConfigError',
      message: /providers\.fake\.apiKeyEnv.*environment variable FAKE_UPSTREAM_KEY is not set or empty/,
    });
  });
});
