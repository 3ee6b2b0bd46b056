import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { openAuditLog } from '../../src/state/open-audit-log.ts';
import { keyCreate } from './audit-fixtures.ts';
import { tempDir } from '../support/temp-dir.ts';

const root = tempDir('open-audit');
const providers = { demo: { type: 'demo' } };
const aliases = { 'service-chat': { provider: 'demo' } };

test('openAuditLog: the data directory\'s file log, the same chain the file backend appends to', async () => {
  const config = parseConfig({ dataDir: './data', providers, aliases, audit: { rotateBytes: 65_536 } }, null, root);
  const log = openAuditLog(config);
  assert.equal(log.location, path.join(root, 'data'));
  await log.append(keyCreate(1));
  assert.ok(existsSync(path.join(root, 'data', 'audit.jsonl')));
  const backend = openFileBackend(config.dataDir, { watch: false });
  try {
    assert.equal(openAuditLog(config, backend), backend.audit);
    assert.equal((await backend.audit.append(keyCreate(2))).seq, 2);
    const result = await log.verify();
    assert.equal(result.ok && result.count, 2);
  } finally {
    await backend.close();
  }
});

test('openAuditLog with the Redis backend and no open backend is a TypeError saying what to pass', () => {
  const config = parseConfig({ dataDir: './data', providers, aliases, state: { backend: 'redis', redis: { url: 'redis://127.0.0.1:1/0' } } }, null, root);
  assert.throws(() => openAuditLog(config), (e: unknown) => e instanceof TypeError && /pass the backend \(openStateBackend\)/.test(e.message));
});
