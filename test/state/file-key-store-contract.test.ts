// The key store contract run against the file adapter: a fresh data directory per case.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { runKeyStoreContract } from './key-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'portcullis-key-contract-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

runKeyStoreContract('file', async () => {
  const dir = join(root, `data-${counter++}`);
  return { open: async (clock) => openKeyStore(dir, { clock, watch: false }) };
});
