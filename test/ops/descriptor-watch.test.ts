// The descriptor watch with a probe that fails as open(2) does when the
// process is out of descriptors: one error line per exhaustion whatever the
// number of failed probes, the count for metrics, the line when descriptors
// are back; other probe errors are not an exhaustion. The limit read from
// /proc/self/limits, and what a limit of "unlimited" or a missing file gives.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { connectionsForDescriptors, descriptorsNeeded, readDescriptorLimit, startDescriptorWatch, watchDescriptors } from '../../src/ops/descriptor-watch.ts';
import { createLogger } from '../../src/log/logger.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-fd-watch-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function fsError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: open '/dev/null'`), { code });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `timed out waiting for ${what}`);
}

test('an exhaustion: one error line however many probes fail, counted once, then the line when descriptors are back', async () => {
  const logs: Record<string, unknown>[] = [];
  let failing: string | null = 'EMFILE';
  let probes = 0;
  let exhaustions = 0;
  const watch = watchDescriptors({
    logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
    openConnections: () => ({ api: 7, admin: 1 }),
    onExhausted: () => exhaustions++,
    limit: 1024,
    intervalMs: 5,
    probe: () => {
      probes++;
      if (failing !== null) throw fsError(failing);
    },
  });
  try {
    await until(() => probes >= 10, 'ten probes');
    assert.equal(watch.exhausted, true);
    const lines = logs.map(({ time: _time, ...rest }) => rest);
    assert.deepEqual(lines, [
      { level: 'error', msg: 'out of file descriptors: new connections are reset until some close', code: 'EMFILE', descriptorLimit: 1024, openConnectionsApi: 7, openConnectionsAdmin: 1 },
    ]);
    assert.equal(exhaustions, 1);
    failing = null;
    await until(() => logs.length === 2, 'the recovery line');
    assert.equal(logs[1]?.['msg'], 'file descriptors available again');
    assert.ok((logs[1]?.['failedProbes'] as number) >= 10);
    assert.equal(watch.exhausted, false);
    // ENFILE (the whole system out) is the same condition, a new exhaustion.
    failing = 'ENFILE';
    await until(() => logs.length === 3, 'the second exhaustion');
    assert.equal(logs[2]?.['code'], 'ENFILE');
    assert.equal(exhaustions, 2);
  } finally {
    watch.stop();
  }
  // stop() reports an exhaustion still on as over.
  assert.equal(logs[3]?.['msg'], 'file descriptors available again');
});

test('a probe failing for another reason is not an exhaustion', async () => {
  const logs: string[] = [];
  let probes = 0;
  const watch = watchDescriptors({
    logger: createLogger({ write: (l) => logs.push(l) }),
    openConnections: () => ({}),
    limit: null,
    intervalMs: 5,
    probe: () => {
      probes++;
      throw fsError('EACCES');
    },
  });
  await until(() => probes >= 5, 'five probes');
  watch.stop();
  assert.equal(watch.exhausted, false);
  assert.deepEqual(logs, []);
});

test('the real probe on this machine finds descriptors', async () => {
  const logs: string[] = [];
  const watch = watchDescriptors({ logger: createLogger({ write: (l) => logs.push(l) }), openConnections: () => ({}), limit: null, intervalMs: 5 });
  await new Promise((r) => setTimeout(r, 50));
  watch.stop();
  assert.equal(watch.exhausted, false);
  assert.deepEqual(logs, []);
});

test('readDescriptorLimit: the soft limit of "Max open files"; null for unlimited or no file', () => {
  const file = path.join(tmp, 'limits');
  writeFileSync(
    file,
    'Limit                     Soft Limit           Hard Limit           Units     \n' +
      'Max cpu time              unlimited            unlimited            seconds   \n' +
      'Max open files            4096                 524288               files     \n',
  );
  assert.equal(readDescriptorLimit(file), 4096);
  writeFileSync(file, 'Max open files            unlimited            unlimited            files     \n');
  assert.equal(readDescriptorLimit(file), null);
  assert.equal(readDescriptorLimit(path.join(tmp, 'missing')), null);
  if (process.platform === 'linux') assert.equal(typeof readDescriptorLimit(), 'number');
});

test('maxConnections unset: two descriptors a connection after a reserve, 16384 at most (what the unit’s LimitNOFILE=65536 gives)', () => {
  assert.equal(connectionsForDescriptors(65_536), 16_384);
  assert.equal(connectionsForDescriptors(20_000), 9872);
  assert.equal(connectionsForDescriptors(1024), 384);
  assert.equal(connectionsForDescriptors(96), 36);
  assert.equal(connectionsForDescriptors(2), 1);
  assert.equal(connectionsForDescriptors(null), 16_384);
  for (const limit of [96, 1024, 20_000, 65_536]) assert.ok(descriptorsNeeded(connectionsForDescriptors(limit), limit) <= limit, String(limit));
});

test('a maxConnections set in the config that needs more descriptors than the limit: one warning at start; a derived one never warns', () => {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) });
  const common = { logger, openConnections: () => ({}), probe: () => {}, intervalMs: 60_000 };
  startDescriptorWatch({ ...common, limit: 1024, maxConnections: 384, configured: true }).stop();
  startDescriptorWatch({ ...common, limit: 1024, maxConnections: 384, configured: false }).stop();
  startDescriptorWatch({ ...common, limit: null, maxConnections: 1_000_000, configured: true }).stop();
  assert.deepEqual(logs, []);
  startDescriptorWatch({ ...common, limit: 1024, maxConnections: 1000, configured: true }).stop();
  assert.deepEqual(
    logs.map((line) => Object.fromEntries(Object.entries(line).filter(([key]) => key !== 'time'))),
    [
      {
        level: 'warn',
        msg: 'limits.maxConnections needs more file descriptors than this process may open: raise LimitNOFILE or lower limits.maxConnections',
        maxConnections: 1000,
        descriptorsNeeded: 2256,
        descriptorLimit: 1024,
      },
    ],
  );
});
