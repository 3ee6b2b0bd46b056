// The key store contract run against the file adapter: a fresh data directory per case.
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { runKeyStoreContract } from '../../src/testing/key-store-contract.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('key-contract');

runKeyStoreContract('file', async () => {
  const dir = freshPath(root, 'data');
  return { open: async (clock) => openKeyStore(dir, { clock, watch: false }) };
}, { exactMessages: true });
