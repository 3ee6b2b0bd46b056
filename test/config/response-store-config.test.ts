import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { restartOnlyChanges } from '../../src/gateway/restart-settings.ts';
import { responseStoreLimits } from '../../src/state/response-store-port.ts';

const base = embeddedConfigValue() as Record<string, unknown>;
const parse = (responses: unknown) => parseConfig({ ...base, responses }, '/etc/portcullis.json', '/tmp');
const DEFAULTS = { enabled: false, ttlSeconds: 86_400, maxRecordBytes: 8_388_608, maxTotalBytes: 268_435_456, maxChainDepth: 1000 };

function fails(responses: unknown, at: string, message: string): void {
  assert.throws(
    () => parse(responses),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.issues.map((i) => `${i.path}: ${i.message}`), [`${at}: ${message}`]);
      return true;
    },
  );
}

test('responses.store is off by default, with the documented defaults', () => {
  assert.deepEqual(parseConfig(base, null, '/tmp').responses, { store: DEFAULTS });
  assert.deepEqual(parse({}).responses, { store: DEFAULTS });
  assert.deepEqual(parse({ store: {} }).responses, { store: DEFAULTS });
  assert.deepEqual(parse({ store: { enabled: true } }).responses, { store: { ...DEFAULTS, enabled: true } });
});

test('responses.store: every setting, and its limits as the store takes them', () => {
  const store = { enabled: true, ttlSeconds: 3600, maxRecordBytes: 1024, maxTotalBytes: 1024, maxChainDepth: 1 };
  assert.deepEqual(parse({ store }).responses.store, store);
  assert.deepEqual(responseStoreLimits(store), { ttlMs: 3_600_000, maxRecordBytes: 1024, maxTotalBytes: 1024, maxChainDepth: 1 });
  assert.equal(parse({ store: { ttlSeconds: 2_592_000 } }).responses.store.ttlSeconds, 2_592_000);
});

test('responses.store: each wrong value names its path and what to write', () => {
  fails([], 'responses', 'must be an object');
  fails({ stor: {} }, 'responses.stor', "unknown setting; did you mean 'store'?");
  fails({ store: { enable: true } }, 'responses.store.enable', "unknown setting; did you mean 'enabled'?");
  fails({ store: { enabled: 'yes' } }, 'responses.store.enabled', 'must be true or false');
  fails({ store: { ttlSeconds: 0 } }, 'responses.store.ttlSeconds', 'must be an integer from 1 to 2592000');
  fails({ store: { ttlSeconds: 2_592_001 } }, 'responses.store.ttlSeconds', 'must be an integer from 1 to 2592000');
  fails({ store: { maxRecordBytes: '8MiB' } }, 'responses.store.maxRecordBytes', 'must be a number of bytes, an integer from 1024 to 268435456, e.g. 8388608 for 8 MiB');
  fails({ store: { maxRecordBytes: 1023 } }, 'responses.store.maxRecordBytes', 'must be a number of bytes, an integer from 1024 to 268435456, e.g. 8388608 for 8 MiB');
  fails({ store: { maxTotalBytes: 1.5 } }, 'responses.store.maxTotalBytes', 'must be a number of bytes, an integer from 1024 to 1099511627776, e.g. 268435456 for 256 MiB');
  fails({ store: { maxChainDepth: 0 } }, 'responses.store.maxChainDepth', 'must be an integer from 1 to 100000');
  fails(
    { store: { maxRecordBytes: 4096, maxTotalBytes: 2048 } },
    'responses.store.maxTotalBytes',
    '2048 is below maxRecordBytes (4096), so one conversation could never be stored: raise maxTotalBytes or lower maxRecordBytes',
  );
});

test('responses.store needs a restart: a reload names each changed setting', () => {
  const running = parse({});
  const next = parse({ store: { enabled: true, ttlSeconds: 60 } });
  assert.deepEqual(restartOnlyChanges(running, next), [
    { setting: 'responses.store.enabled', running: false, configured: true },
    { setting: 'responses.store.ttlSeconds', running: 86_400, configured: 60 },
  ]);
});
