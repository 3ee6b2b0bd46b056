// The descriptor watch with a probe that fails as open(2) does when the
// process is out of descriptors: one error line per exhaustion whatever the
// number of failed probes, the count for metrics, the line when descriptors
// are back; other probe errors are not an exhaustion. The limit read from
// /proc/self/limits, and what a limit of "unlimited" or a missing file gives.
// On a manual scheduler: each probe and the end of an exhaustion at its moment.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { connectionsForDescriptors, descriptorsNeeded, readDescriptorLimit, startDescriptorWatch, watchDescriptors } from '../../src/ops/descriptor-watch.ts';
import { createLogger } from '../../src/log/logger.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('fd-watch');

function fsError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: open '/dev/null'`), { code });
}

test('an exhaustion: one error line however many probes fail, counted once, then the line when descriptors are back, 1.5 s after the last failure', async () => {
  const scheduler = new ManualScheduler();
  const logs: Record<string, unknown>[] = [];
  let failing: string | null = 'EMFILE';
  const probedAt: number[] = [];
  let exhaustions = 0;
  const watch = watchDescriptors({
    logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
    openConnections: () => ({ api: 7, admin: 1 }),
    onExhausted: () => exhaustions++,
    limit: 1024,
    scheduler,
    probe: () => {
      probedAt.push(scheduler.elapsedMs);
      if (failing !== null) throw fsError(failing);
    },
  });
  const withoutTime = (): Record<string, unknown>[] => logs.map(({ time: _time, ...rest }) => rest);
  try {
    // A probe a second.
    await scheduler.advance(999);
    assert.deepEqual(probedAt, []);
    assert.equal(watch.exhausted, false);
    await scheduler.advance(9001);
    assert.deepEqual(probedAt, [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]);
    assert.equal(watch.exhausted, true);
    assert.deepEqual(withoutTime(), [
      { level: 'error', msg: 'out of file descriptors: new connections are reset until some close', code: 'EMFILE', descriptorLimit: 1024, openConnectionsApi: 7, openConnectionsAdmin: 1 },
    ]);
    assert.equal(exhaustions, 1);
    failing = null;
    // The probe at 11000 succeeds; the exhaustion ends once 1500 ms passed since the last failure (10000).
    await scheduler.advance(1499);
    assert.equal(watch.exhausted, true);
    assert.equal(logs.length, 1);
    await scheduler.advance(1);
    assert.deepEqual(withoutTime()[1], { level: 'info', msg: 'file descriptors available again', failedProbes: 10, durationMs: 9000 });
    assert.equal(watch.exhausted, false);
    // ENFILE (the whole system out) is the same condition, a new exhaustion.
    failing = 'ENFILE';
    await scheduler.advance(500);
    assert.equal(logs[2]?.['code'], 'ENFILE');
    assert.equal(exhaustions, 2);
  } finally {
    watch.stop();
  }
  // stop() reports an exhaustion still on as over, and leaves no timer.
  assert.deepEqual(withoutTime()[3], { level: 'info', msg: 'file descriptors available again', failedProbes: 1, durationMs: 0 });
  assert.deepEqual(scheduler.pending(), []);
});

test('a probe failing for another reason is not an exhaustion (the system scheduler)', async () => {
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
  await eventually(() => probes >= 5, 'five probes');
  watch.stop();
  assert.equal(watch.exhausted, false);
  assert.deepEqual(logs, []);
});

test('the real probe on this machine finds descriptors', async () => {
  const scheduler = new ManualScheduler();
  const logs: string[] = [];
  const watch = watchDescriptors({ logger: createLogger({ write: (l) => logs.push(l) }), openConnections: () => ({}), limit: null, scheduler });
  await scheduler.advance(10_000);
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
