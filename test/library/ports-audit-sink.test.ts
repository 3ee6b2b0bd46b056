// A host's AuditSink: held to the contract (a host-written one, public types
// only), and behind createLibraryAuditTrail on a real chain (the data
// directory's audit.jsonl): a sink that never answers does not hold a change up,
// and one that rejects is logged and counted while the chain keeps the record.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { AuditRecord, AuditSink } from '../../src/api/ports.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createLibraryAuditTrail, drainAuditSink, openLibraryState } from '../../src/library/compose-state.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { createLogger } from '../../src/log/logger.ts';
import { runAuditSinkContract } from '../../src/testing/audit-sink-contract.ts';
import { tempDir } from '../support/temp-dir.ts';

/** As a host writes one: each record as a JSON line to its SIEM (here an array of lines). */
function siemSink(): { sink: AuditSink; lines: string[] } {
  const lines: string[] = [];
  return { lines, sink: { append: async (record) => void lines.push(JSON.stringify(record)) } };
}

runAuditSinkContract('a host SIEM forwarder', () => {
  const { sink, lines } = siemSink();
  return { sink, stored: () => lines.map((line) => JSON.parse(line) as AuditRecord) };
});

const root = tempDir('ports-audit-sink');

async function trailWith(sink: AuditSink, name: string, scheduler?: ManualScheduler) {
  const dataDir = path.join(root, name);
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const config = parseConfig({ dataDir, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } }, auto: { default: 'service-chat' } }, null, dataDir);
  const state = await openLibraryState(config, {}, { logger, env: {} });
  let sinkFailures = 0;
  const trail = createLibraryAuditTrail(state, sink, logger, { onSinkFailure: () => sinkFailures++, ...(scheduler === undefined ? {} : { scheduler }) });
  const chained = (): Record<string, unknown>[] => readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  return { trail, lines, chained, failures: () => sinkFailures, close: () => state.close() };
}

/** The seqs of the log lines with message `msg`. */
const logged = (lines: Record<string, unknown>[], msg: string): unknown[] => lines.filter((line) => line['msg'] === msg).map((line) => line['seq']);

const reload = { actor: { kind: 'system', id: 'serve' }, source: 'signal', action: 'config.reload', target: null, before: null, after: null, detail: { aliases: 1 } } as const;

describe('createLibraryAuditTrail with a host sink', () => {
  test('a sink whose first append never settles: the records behind it reach it after the 10 s timeout; drainAuditSink names what it never confirmed', async () => {
    const scheduler = new ManualScheduler();
    const seen: number[] = [];
    const t = await trailWith({ append: (record) => (seen.push(record.seq), seen.length === 1 ? new Promise<void>(() => {}) : Promise.resolve()) }, 'stuck-first', scheduler);
    for (let i = 0; i < 3; i++) await t.trail.record(reload);
    await scheduler.advance(10_000);
    assert.deepEqual(seen, [1, 2, 3]);
    assert.deepEqual(await drainAuditSink(t.trail, 5_000), { undelivered: [] });
    assert.deepEqual(logged(t.lines, 'the audit sink did not answer a record in time; it is handed the next one (the chain has this one)'), [1]);
    assert.equal(t.failures(), 1);
    await t.close();
  });

  test('drainAuditSink with the sink stuck: at the deadline the records it never confirmed are logged by seq and counted', async () => {
    const t = await trailWith({ append: () => new Promise<void>(() => {}) }, 'stuck-drain', new ManualScheduler());
    for (let i = 0; i < 3; i++) await t.trail.record(reload);
    assert.deepEqual(await drainAuditSink(t.trail, 0), { undelivered: [1, 2, 3] });
    const line = t.lines.find((l) => l['msg'] === 'the audit sink did not take every record before the close deadline; these were not confirmed by it (the chain has them)');
    assert.deepEqual([line?.['level'], line?.['seqs'], line?.['count']], ['warn', '1,2,3', 3]);
    assert.equal(t.failures(), 3);
    assert.deepEqual(t.chained().map((r) => r['seq']), [1, 2, 3]);
    await t.close();
  });

  test('drainAuditSink on a trail without a sink: nothing undelivered', async () => {
    const dataDir = path.join(root, 'no-sink');
    const config = parseConfig({ dataDir, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } }, null, dataDir);
    const state = await openLibraryState(config, {}, { logger: createLogger({ write: () => {} }), env: {} });
    assert.deepEqual(await drainAuditSink(createLibraryAuditTrail(state, undefined, createLogger({ write: () => {} })), 0), { undelivered: [] });
    await state.close();
  });

  test('a sink that never answers does not hold up the trail; the chain has the record', async () => {
    const seen: AuditRecord[] = [];
    const t = await trailWith({ append: (record) => (seen.push(record), new Promise<void>(() => {})) }, 'silent');
    await t.trail.record(reload);
    await t.trail.record(reload);
    assert.deepEqual(t.chained().map((r) => r['seq']), [1, 2]);
    // Records go one at a time, in order: the second waits for the first's answer.
    assert.deepEqual(seen.map((r) => r.seq), [1]);
    await t.close();
  });

  test('a rejecting sink: an error log per record (seq, action, hash, error) and a count; the chain keeps every record', async () => {
    let calls = 0;
    const t = await trailWith({ append: () => (calls++, Promise.reject(new TypeError('SIEM unreachable'))) }, 'rejecting');
    await t.trail.record(reload);
    const intent = await t.trail.begin({ actor: { kind: 'cli', id: 'ops' }, source: 'cli', action: 'key.revoke', target: 'key_0000000000000001', before: null, after: null });
    await intent.done();
    for (let turn = 0; turn < 100 && t.failures() < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    const chained = t.chained();
    assert.equal(calls, 2);
    assert.equal(t.failures(), 2);
    assert.deepEqual(
      t.lines.filter((line) => line['msg'] === 'the audit sink refused a record; the chain has it').map((line) => [line['level'], line['seq'], line['action'], line['hash'], line['error']]),
      chained.map((r) => ['error', r['seq'], r['action'], r['hash'], 'TypeError: SIEM unreachable']),
    );
    await t.close();
  });

  test('a sink that throws at once is the same as a rejection', async () => {
    const t = await trailWith({ append: () => { throw new Error('bad config'); } }, 'throwing');
    await t.trail.record(reload);
    for (let turn = 0; turn < 100 && t.failures() < 1; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(t.failures(), 1);
    assert.equal(t.chained().length, 1);
    await t.close();
  });
});

describe('an embedded gateway with a host sink', () => {
  test('a sink whose first append never settles: close() drains it within the drain time and logs the records it never confirmed', async () => {
    const dataDir = path.join(root, 'gateway-stuck-first');
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const handed: string[] = [];
    const audit: AuditSink = {
      append(record) {
        handed.push(`${record.seq} ${record.action}`);
        // A SIEM connection that never answers its first record; the rest would be taken at once.
        return handed.length === 1 ? new Promise<void>(() => {}) : Promise.resolve();
      },
    };
    const config = { dataDir, admin: { enabled: false }, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } } };
    const gateway = await createGateway({ config, env: {}, logger, audit });
    for (let i = 0; i < 3; i++) assert.equal((await gateway.reload(config)).ok, true);
    await gateway.close({ drainTimeoutMs: 0 });
    assert.deepEqual(handed, ['1 config.reload']);
    const line = lines.find((l) => l['msg'] === 'the audit sink did not take every record before the close deadline; these were not confirmed by it (the chain has them)');
    assert.deepEqual([line?.['level'], line?.['seqs'], line?.['count']], ['warn', '1,2,3', 3]);
    const chained = readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq);
    assert.deepEqual(chained, [1, 2, 3]);
  });
});

