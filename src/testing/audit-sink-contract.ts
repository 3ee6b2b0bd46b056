// The audit sink port (AuditSink in src/api/ports.ts): a host's copy of each
// record the chain took. The sink keeps records whole and in the order given,
// does not change them, and receives them behind the gateway's audit trail with
// the seq and hash the chain gave.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuditRecord, AuditSink } from '../api/ports.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import type { Logger } from '../log/logger.ts';

/** The sink to hold to the contract, and how to read back what it kept. */
export interface AuditSinkUnderTest {
  sink: AuditSink;
  /** The records the sink kept, in order. */
  stored(): readonly AuditRecord[] | Promise<readonly AuditRecord[]>;
}

const SILENT: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function sampleRecord(seq: number): AuditRecord {
  return {
    seq,
    time: `2026-11-22T12:00:0${seq}.000Z`,
    prev: String(seq - 1).repeat(64).slice(0, 64),
    hash: String(seq).repeat(64).slice(0, 64),
    actor: { kind: 'cli', id: 'ops', uid: 1000 },
    source: 'cli',
    action: 'key.update',
    target: 'key_0000000000000001',
    before: { name: 'app', allowedAliases: null },
    after: { name: 'app — «prod»', allowedAliases: ['service-chat'] },
    detail: { fields: ['name', 'allowedAliases'] },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A chain in memory with what the trail needs (append); seq and hash as a chain gives them. */
function memoryChain(): AuditLog & { readonly records: AuditRecord[] } {
  const records: AuditRecord[] = [];
  const unused = (): never => {
    throw new Error('not used by the audit sink contract');
  };
  return {
    records,
    location: 'memory',
    async append(body) {
      const seq = records.length + 1;
      const record = { ...body, seq, prev: records.at(-1)?.hash ?? '0'.repeat(64), hash: seq.toString(16).padStart(64, 'a') } as AuditRecord;
      records.push(record);
      return record as Awaited<ReturnType<AuditLog['append']>>;
    },
    settle: async () => {},
    openSeqs: async () => [],
    checkTail: unused,
    list: unused,
    head: unused,
    verify: unused,
  };
}

/** What the sink kept, once it holds `count` records or the event loop went round 1000 times. */
async function storedAtLeast(stored: AuditSinkUnderTest['stored'], count: number): Promise<readonly AuditRecord[]> {
  for (let turn = 0; turn < 1000; turn++) {
    const kept = await stored();
    if (kept.length >= count) return kept;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return stored();
}

/**
 * Registers the audit sink cases as node:test tests in a describe block named after `name`:
 * records kept whole, unchanged and in order, as the gateway's audit trail hands
 * them on. `make()` gives a fresh, empty sink per case.
 */
export function runAuditSinkContract(name: string, make: () => AuditSinkUnderTest | Promise<AuditSinkUnderTest>): void {
  describe(`audit sink contract: ${name}`, () => {
    test('append resolves and the record is kept whole', async () => {
      const { sink, stored } = await make();
      await sink.append(sampleRecord(1));
      assert.deepEqual(await stored(), [sampleRecord(1)]);
    });

    test('records appended one after another are kept in that order; a record without detail stays without', async () => {
      const { sink, stored } = await make();
      const { detail: _detail, ...plain } = sampleRecord(2);
      await sink.append(sampleRecord(1));
      await sink.append(plain);
      await sink.append(sampleRecord(3));
      const kept = await stored();
      assert.deepEqual(kept.map((r) => r.seq), [1, 2, 3]);
      assert.equal(Object.hasOwn(kept[1] ?? {}, 'detail'), false);
    });

    test('append does not change the record', async () => {
      const { sink, stored } = await make();
      await sink.append(deepFreeze(sampleRecord(1)));
      assert.deepEqual(await stored(), [sampleRecord(1)]);
    });

    test("behind the gateway's audit trail: each record the chain took, with its seq and hash", async () => {
      const { sink, stored } = await make();
      const chain = memoryChain();
      let failures = 0;
      const trail = createAuditTrail({ logger: SILENT, log: chain, sink, onSinkFailure: () => failures++, clock: () => Date.parse('2026-11-22T12:00:00.000Z') });
      await trail.record({ actor: { kind: 'system', id: 'serve' }, source: 'signal', action: 'config.reload', target: null, before: null, after: null, detail: { aliases: 3 } });
      const intent = await trail.begin({ actor: { kind: 'cli', id: 'ops' }, source: 'cli', action: 'key.revoke', target: 'key_0000000000000001', before: { revokedAt: null }, after: { revokedAt: '2026-11-22T12:00:00.000Z' } });
      await intent.done();
      // The tee runs after the trail returned, without anyone waiting for it.
      const kept = await storedAtLeast(stored, chain.records.length);
      assert.deepEqual(kept.map((r) => [r.seq, r.action, r.hash]), chain.records.map((r) => [r.seq, r.action, r.hash]));
      assert.equal(failures, 0);
    });
  });
}
