// The provider key port (ProviderKeySource in src/api/ports.ts): asked on every
// upstream exchange, so it answers at once (never a promise), with a key a header
// can carry for a provider it knows and undefined for one it does not (the
// config's key is then sent), and a rotated key from the next ask on.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProviderKeySource } from '../api/ports.ts';
import { hostKey } from '../gateway/provider-keys.ts';
import type { Logger } from '../log/logger.ts';

/** The provider key source to hold to the contract, a provider it knows, one it does not, and a rotation. */
export interface ProviderKeySourceUnderTest {
  source: ProviderKeySource;
  /** A provider (its name in the config) the source has a key for. */
  provider: string;
  /** A provider it has none for. */
  unknownProvider: string;
  /** Replaces the provider's key where the source reads it (the vault), as an operator's rotation would. */
  rotate(): void | Promise<void>;
}

/** A logger that fails the case on any error line: a good source makes none. */
function strictLogger(): Logger {
  const fail = (msg: string): never => assert.fail(`the gateway logged an error: ${msg}`);
  return { debug: () => {}, info: () => {}, warn: () => {}, error: fail };
}

/**
 * Registers the provider key source cases as node:test tests in a
 * describe block named after `name`: an answer at once (never a promise), a usable key for a known
 * provider, undefined for an unknown one, the rotated key from the next ask on.
 */
export function runProviderKeySourceContract(name: string, make: () => ProviderKeySourceUnderTest | Promise<ProviderKeySourceUnderTest>): void {
  describe(`provider key source contract: ${name}`, () => {
    test('a known provider: a key at once (not a promise) that the gateway sends', async () => {
      const { source, provider } = await make();
      const key = source(provider);
      assert.equal(typeof key, 'string');
      assert.equal(hostKey(source, provider, 'config-key', strictLogger())(), key);
    });

    test("an unknown provider: undefined, not a throw; the gateway sends the config's key", async () => {
      const { source, unknownProvider } = await make();
      assert.equal(source(unknownProvider), undefined);
      assert.equal(hostKey(source, unknownProvider, 'config-key', strictLogger())(), 'config-key');
    });

    test('asked again without a change: the same key', async () => {
      const { source, provider } = await make();
      assert.equal(source(provider), source(provider));
    });

    test('after a rotation the next ask gives the new key', async () => {
      const under = await make();
      const ask = hostKey(under.source, under.provider, undefined, strictLogger());
      const before = ask();
      await under.rotate();
      const after = ask();
      assert.equal(typeof after, 'string');
      assert.notEqual(after, before);
    });
  });
}
