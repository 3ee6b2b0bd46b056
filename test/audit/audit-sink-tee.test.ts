// A host's AuditSink behind its bounds: a per-append timeout on the scheduler, a
// bounded queue that drops the oldest waiting record with a warning naming its seq,
// and a drain with a deadline; every record the sink did not confirm is counted and
// named in a log line. Time moves only by the ManualScheduler.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuditSink } from '../../src/api/ports.ts';
import type { AuditRecord } from '../../src/audit/audit-record.ts';
import { createAuditSinkTee, type AuditSinkTeeOptions } from '../../src/audit/audit-sink-tee.ts';
import { createLogger } from '../../src/log/logger.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const record = (seq: number): AuditRecord => ({ seq, action: 'config.reload', hash: `h${seq}` }) as unknown as AuditRecord;

/** A sink whose appends the test settles: `answer(seq)` resolves one; `never` leaves it hanging. */
function heldSink(): { sink: AuditSink; handed: number[]; answer(seq: number): void } {
  const handed: number[] = [];
  const waiting = new Map<number, () => void>();
  return {
    handed,
    sink: { append: (r) => (handed.push(r.seq), new Promise<void>((resolve) => waiting.set(r.seq, resolve))) },
    answer: (seq) => waiting.get(seq)?.(),
  };
}

function teeWith(sink: AuditSink, options: Partial<AuditSinkTeeOptions> = {}) {
  const scheduler = new ManualScheduler();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  let failures = 0;
  const tee = createAuditSinkTee({ sink, logger, scheduler, onFailure: () => failures++, ...options });
  const logged = () => lines.map((line) => [line['level'], line['msg'], line['seq'] ?? line['seqs']]);
  return { tee, scheduler, logged, failures: () => failures };
}

const TIMED_OUT = 'the audit sink did not answer a record in time; it is handed the next one (the chain has this one)';
const DROPPED = 'the audit sink fell behind; records were dropped from its queue and not handed to it (the chain has them)';
const NOT_DRAINED = 'the audit sink did not take every record before the close deadline; these were not confirmed by it (the chain has them)';
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('an audit sink that never answers', () => {
  test('each append gets 10 s on the scheduler: then an error log naming the seq, a count, and the next record is handed', async () => {
    const held = heldSink();
    const t = teeWith(held.sink);
    t.tee.take(record(1));
    t.tee.take(record(2));
    await turn();
    assert.deepEqual(held.handed, [1]);
    await t.scheduler.advance(9_999);
    assert.deepEqual([held.handed, t.failures()], [[1], 0]);
    await t.scheduler.advance(1);
    assert.deepEqual(held.handed, [1, 2]);
    assert.deepEqual(t.logged(), [['error', TIMED_OUT, 1]]);
    assert.equal(t.failures(), 1);
    held.answer(2);
    await turn();
    assert.deepEqual(t.scheduler.pending(), []);
  });

  test('a queue past maxQueued drops the oldest waiting record: counted, and a warning naming the seqs when the sink is next handed one', async () => {
    const held = heldSink();
    const t = teeWith(held.sink, { maxQueued: 2 });
    for (let seq = 1; seq <= 5; seq++) t.tee.take(record(seq));
    await turn();
    assert.deepEqual([held.handed, t.failures()], [[1], 2]);
    await t.scheduler.advance(10_000);
    assert.deepEqual(held.handed, [1, 4]);
    assert.deepEqual(t.logged(), [['error', TIMED_OUT, 1], ['warn', DROPPED, '2,3']]);
    assert.equal(t.failures(), 3);
  });
});

describe('draining an audit sink at close', () => {
  test('waits for the sink to take what is queued, then hands it nothing more (a later record is logged as not handed)', async () => {
    const held = heldSink();
    const t = teeWith(held.sink);
    t.tee.take(record(1));
    t.tee.take(record(2));
    let drained: unknown = 'pending';
    const draining = t.tee.drain(5_000).then((report) => (drained = report));
    await turn();
    held.answer(1);
    await turn();
    assert.deepEqual([held.handed, drained], [[1, 2], 'pending']);
    held.answer(2);
    await draining;
    assert.deepEqual(drained, { undelivered: [] });
    t.tee.take(record(3));
    assert.deepEqual(held.handed, [1, 2]);
    assert.deepEqual(t.logged(), [['warn', 'the audit sink is closed; a record was not handed to it (the chain has it)', '3']]);
    assert.equal(t.failures(), 1);
  });

  test('the deadline passes with the sink stuck: the records not confirmed are named and counted; the stuck append is not reported twice', async () => {
    const held = heldSink();
    const t = teeWith(held.sink);
    t.tee.take(record(1));
    t.tee.take(record(2));
    await turn();
    const draining = t.tee.drain(5_000);
    await t.scheduler.advance(5_000);
    assert.deepEqual(await draining, { undelivered: [1, 2] });
    assert.deepEqual(t.logged(), [['warn', NOT_DRAINED, '1,2']]);
    assert.equal(t.failures(), 2);
    await t.scheduler.advance(10_000);
    assert.deepEqual([held.handed, t.logged().length, t.failures()], [[1], 1, 2]);
  });

  test('deadline 0: gives up at once on what is left; a second drain answers the same', async () => {
    const held = heldSink();
    const t = teeWith(held.sink, { maxQueued: 1 });
    t.tee.take(record(1));
    t.tee.take(record(2));
    t.tee.take(record(3));
    await turn();
    assert.deepEqual(await t.tee.drain(0), { undelivered: [2, 1, 3] });
    assert.deepEqual(t.logged(), [['warn', DROPPED, '2'], ['warn', NOT_DRAINED, '1,3']]);
    assert.deepEqual(await t.tee.drain(0), { undelivered: [2, 1, 3] });
    assert.equal(t.failures(), 3);
  });

  test('a drain deadline or a bound that is not a number of milliseconds: a RangeError naming it', () => {
    const t = teeWith(heldSink().sink);
    assert.throws(() => t.tee.drain(Number.NaN), { name: 'RangeError', message: "the audit sink's drain deadline must be a finite number of milliseconds >= 0; it is NaN" });
    assert.throws(() => teeWith(heldSink().sink, { timeoutMs: 0 }), { name: 'RangeError', message: "the audit sink's timeoutMs must be a positive whole number; it is 0" });
    assert.throws(() => teeWith(heldSink().sink, { maxQueued: 1.5 }), { name: 'RangeError', message: "the audit sink's maxQueued must be a positive whole number; it is 1.5" });
  });
});
