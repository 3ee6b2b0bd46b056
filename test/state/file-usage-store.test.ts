// The usage store contract run against the file adapter: a fresh data directory per case
// (existing, as the backend's key store creates it before usage is written).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createFileUsageStore } from '../../src/state/file-usage-store.ts';
import { runUsageStoreContract } from './usage-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'portcullis-usage-contract-'));
after(() => rmSync(root, { recursive: true, force: true }));
runUsageStoreContract('file', () => createFileUsageStore(mkdtempSync(join(root, 'data-'))));
