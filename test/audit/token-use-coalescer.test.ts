// The counted token.use records of read-only requests: one record per token,
// address, method, route and minute, appended at the minute's exact end on
// the scheduler, at close() (shutdown), or early when the pending entries
// reach their bound. Nothing counted is ever lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import { createTokenUseCoalescer, DEFAULT_MAX_PENDING_USES, type TokenRead } from '../../src/audit/token-use-coalescer.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

/** 2026-11-28T12:34:00.000Z: a minute's start. */
const MINUTE_START = Date.parse('2026-11-28T12:34:00.000Z');
const ACTOR = { kind: 'token', id: 'tok_1', name: 'dashboard-poller' } as const;

function read(overrides: Partial<TokenRead> = {}): TokenRead {
  return { actor: ACTOR, source: '10.0.0.7', target: 'tok_1', method: 'GET', route: '/api/keys', status: 200, ...overrides };
}

function use(detail: Record<string, unknown>, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return { actor: ACTOR, source: '10.0.0.7', action: 'token.use', target: 'tok_1', before: null, after: null, detail: detail as AuditEvent['detail'], ...overrides };
}

function setup(startMs = MINUTE_START, maxPending?: number) {
  const scheduler = new ManualScheduler({ startMs });
  const trail = recordingAuditTrail();
  const uses = createTokenUseCoalescer({ trail, scheduler, ...(maxPending === undefined ? {} : { maxPending }) });
  return { scheduler, trail, uses };
}

test('N reads of one route in a minute: nothing before the minute ends, one record with count N at 12:35:00.000 exactly', async () => {
  const { scheduler, trail, uses } = setup(MINUTE_START + 5_000);
  const N = 20;
  for (let i = 0; i < N; i++) {
    uses.read(read({ status: i === 7 ? 404 : 200 }));
    await scheduler.advance(2_500);
  }
  // 12:34:55.000 now; the last read was at 12:34:52.500.
  assert.equal(uses.pending, 1);
  assert.deepEqual(scheduler.pending(), [5_000]);
  await scheduler.advance(4_999);
  assert.deepEqual(trail.events, [], 'not before the minute ends');
  await scheduler.advance(1);
  assert.deepEqual(trail.events, [
    use({ method: 'GET', route: '/api/keys', count: N, statuses: { 200: N - 1, 404: 1 }, first: '2026-11-28T12:34:05.000Z', last: '2026-11-28T12:34:52.500Z' }),
  ]);
  assert.equal(uses.pending, 0);
  assert.deepEqual(scheduler.pending(), [], 'no timer while nothing is pending');
});

test('one record per token, address, method and route; the next minute is its own record', async () => {
  const { scheduler, trail, uses } = setup();
  uses.read(read());
  uses.read(read({ route: '/api/keys/:id' }));
  uses.read(read({ route: '/api/keys/:id', status: 404 }));
  uses.read(read({ source: '10.0.0.8' }));
  uses.read(read({ target: 'tok_2', actor: { kind: 'token', id: 'tok_2', name: 'other' } }));
  uses.read(read({ method: 'HEAD' }));
  await scheduler.advance(59_999);
  uses.read(read());
  await scheduler.advance(1);
  // 12:35:00.000: the first minute's six entries, oldest first; the read at 12:35:00.000 belongs to the next one.
  uses.read(read());
  const at = '2026-11-28T12:34:00.000Z';
  const last = '2026-11-28T12:34:59.999Z';
  assert.deepEqual(trail.events, [
    use({ method: 'GET', route: '/api/keys', count: 2, statuses: { 200: 2 }, first: at, last }),
    use({ method: 'GET', route: '/api/keys/:id', count: 2, statuses: { 200: 1, 404: 1 }, first: at, last: at }),
    use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: at, last: at }, { source: '10.0.0.8' }),
    use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: at, last: at }, { target: 'tok_2', actor: { kind: 'token', id: 'tok_2', name: 'other' } }),
    use({ method: 'HEAD', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: at, last: at }),
  ]);
  assert.equal(uses.pending, 1);
  assert.deepEqual(scheduler.pending(), [60_000]);
  await scheduler.advance(60_000);
  assert.deepEqual(trail.events.slice(5), [use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: '2026-11-28T12:35:00.000Z', last: '2026-11-28T12:35:00.000Z' })]);
});

test('close() (shutdown) appends what is pending at once, and records each later read at once', async () => {
  const { scheduler, trail, uses } = setup();
  uses.read(read());
  await scheduler.advance(10_000);
  uses.read(read());
  await uses.close();
  assert.deepEqual(trail.events, [use({ method: 'GET', route: '/api/keys', count: 2, statuses: { 200: 2 }, first: '2026-11-28T12:34:00.000Z', last: '2026-11-28T12:34:10.000Z' })]);
  assert.deepEqual(scheduler.pending(), [], 'its timer is cleared');
  // A request the drain let finish after close(): recorded, not held.
  uses.read(read({ status: 500 }));
  await uses.flush();
  assert.deepEqual(trail.events.slice(1), [use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 500: 1 }, first: '2026-11-28T12:34:10.000Z', last: '2026-11-28T12:34:10.000Z' })]);
  assert.equal(uses.pending, 0);
});

test('the bound: a new entry beyond maxPending appends every pending one first; counts into existing entries cost nothing', async () => {
  const { scheduler, trail, uses } = setup(MINUTE_START, 3);
  for (const source of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) uses.read(read({ source }));
  for (let i = 0; i < 100; i++) uses.read(read({ source: '10.0.0.1' }));
  await scheduler.advance(1_000);
  assert.equal(uses.pending, 3);
  assert.deepEqual(trail.events, [], 'no early append while the entries fit');
  uses.read(read({ source: '10.0.0.4' }));
  assert.equal(uses.pending, 1, 'the three were taken out to be appended; the fourth waits for its minute');
  await scheduler.advance(0);
  const at = '2026-11-28T12:34:00.000Z';
  assert.deepEqual(trail.events, [
    use({ method: 'GET', route: '/api/keys', count: 101, statuses: { 200: 101 }, first: at, last: at }, { source: '10.0.0.1' }),
    use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: at, last: at }, { source: '10.0.0.2' }),
    use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: at, last: at }, { source: '10.0.0.3' }),
  ]);
  await scheduler.advance(58_999);
  assert.equal(trail.events.length, 3);
  await scheduler.advance(1);
  const fourth = '2026-11-28T12:34:01.000Z';
  assert.deepEqual(trail.events.slice(3), [use({ method: 'GET', route: '/api/keys', count: 1, statuses: { 200: 1 }, first: fourth, last: fourth }, { source: '10.0.0.4' })]);
  assert.equal(DEFAULT_MAX_PENDING_USES, 1000);
});

test('a trail that appends slowly: records go out in the order they were taken, none lost, flush() waits for all', async () => {
  const scheduler = new ManualScheduler({ startMs: MINUTE_START });
  const events: AuditEvent[] = [];
  let release: () => void = () => {};
  let gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const trail = {
    async record(event: AuditEvent) {
      await gate;
      events.push(event);
    },
    begin: () => Promise.reject(new Error('not used')),
  };
  const uses = createTokenUseCoalescer({ trail, scheduler, maxPending: 1 });
  uses.read(read({ route: '/api/a' }));
  uses.read(read({ route: '/api/b' }));
  uses.read(read({ route: '/api/c' }));
  const flushed = uses.flush();
  let done = false;
  void flushed.then(() => {
    done = true;
  });
  await scheduler.advance(0);
  assert.equal(done, false, 'flush() waits for the appends before it');
  release();
  gate = Promise.resolve();
  await flushed;
  assert.deepEqual(events.map((e) => e.detail?.['route']), ['/api/a', '/api/b', '/api/c']);
});

test('maxPending must be a positive integer', () => {
  const scheduler = new ManualScheduler();
  assert.throws(() => createTokenUseCoalescer({ trail: recordingAuditTrail(), scheduler, maxPending: 0 }), { name: 'RangeError', message: 'maxPending must be a positive integer, got 0' });
});
