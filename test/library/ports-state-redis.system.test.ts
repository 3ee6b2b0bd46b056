// openLibraryState on the Redis backend (a real redis-server): the backend is one
// connection, opened whole; a host's usage store and limiter take the place of
// Redis's own, Redis keeps the keys, and close() closes the connection but not
// the host's ports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { openLibraryState } from '../../src/library/compose-state.ts';
import { createMemoryLimiter } from '../../src/limits/memory-limiter.ts';
import { createLogger } from '../../src/log/logger.ts';
import { sharedRedis } from '../support/redis-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { createHostUsageStore } from './host-usage-store.ts';

test('redis: host usage and limiter in place of Redis\'s; keys in Redis; close() leaves the host limiter open', async () => {
  const redis = await sharedRedis();
  const dataDir = tempDir('ports-redis');
  const config = parseConfig(
    { dataDir, state: { backend: 'redis', redis: { url: redis.url, keyPrefix: 'ports-test:' } }, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } },
    null,
    dataDir,
  );
  const usage = createHostUsageStore();
  const limiter = createMemoryLimiter();
  const state = await openLibraryState(config, { usage, limiter }, { logger: createLogger({ write: () => {} }), env: {} });
  assert.equal(state.kind, 'redis');
  assert.equal(state.usage, usage);
  assert.equal(state.limiter, limiter);
  const { key, record } = await state.keys.create('in redis');
  assert.equal(state.keys.authenticate(key)?.id, record.id);
  assert.deepEqual(await state.checkWritable(), { ok: true });
  await state.close();
  await assert.rejects(state.keys.list(), { name: 'KeyStoreClosedError' });
  // The host's limiter is still open: it admits.
  const decision = await limiter.admit({ keyId: 'k', limits: { requestsPerMinute: 1, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null }, reservation: { tokens: 0, costNanos: 0 }, nowMs: Date.parse('2026-11-22T12:00:00Z') });
  assert.equal(decision.allowed, true);
  await limiter.close();
});
