import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { flushUsage, parseUsageFile, readUsageFile, readUsageTotals, serializeUsageFile } from '../../src/usage/usage-file.ts';
import { createUsageLedger, totalsOf } from '../../src/usage/usage-ledger.ts';
import { periodSum, seriesOf } from '../../src/usage/usage-series.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-usage-'));
after(() => rmSync(dir, { recursive: true, force: true }));
/** What a request is charged: tokens and nanos. */
const u = (p: number, c: number, cached: number, costNanos = 0) => ({ promptTokens: p, completionTokens: c, cachedTokens: cached, costNanos });
const T0 = Date.parse('2026-11-22T05:10:00.000Z');
const H = 3_600_000;
const zero = { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };

test('the ledger counts requests, tokens, errors and cost per key and UTC hour', () => {
  const ledger = createUsageLedger(() => T0);
  assert.equal(ledger.dirty(), false);
  ledger.record('key_a', { charged: u(10, 5, 2, 4_500), error: false });
  ledger.record('key_a', { charged: null, error: true }, T0 + H);
  ledger.record('key_b', { charged: u(1, 1, 0, 750), error: false });
  ledger.record('key_b', { charged: u(2, 0, 0, 300), error: true });
  const pending = ledger.drain();
  const hour = Date.parse('2026-11-22T05:00:00.000Z');
  assert.deepEqual(pending.get('key_a'), new Map([
    [hour, { requests: 1, promptTokens: 10, completionTokens: 5, cachedTokens: 2, errors: 0, costNanos: 4_500, guardBlocked: 0, guardMasked: 0, guardLogged: 0 }],
    [hour + H, { requests: 1, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 1, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 }],
  ]));
  assert.deepEqual(Object.fromEntries(totalsOf(pending)), {
    key_a: { requests: 2, promptTokens: 10, completionTokens: 5, cachedTokens: 2, errors: 1, costNanos: 4_500, guardBlocked: 0, guardMasked: 0, guardLogged: 0 },
    key_b: { requests: 2, promptTokens: 3, completionTokens: 1, cachedTokens: 0, errors: 1, costNanos: 1_050, guardBlocked: 0, guardMasked: 0, guardLogged: 0 },
  });
  assert.equal(ledger.dirty(), false);
  ledger.restore(pending);
  assert.deepEqual(ledger.drain(), pending);
});

test('flushes add to the file, so two processes add up; a failed flush keeps the counters', async () => {
  const one = createUsageLedger(() => T0);
  const two = createUsageLedger(() => T0);
  one.record('key_a', { charged: u(10, 5, 2, 9_000_000_000), error: false });
  two.record('key_a', { charged: u(1, 2, 0, 1), error: true }, T0 + 25 * H);
  await Promise.all([flushUsage(dir, one, T0), flushUsage(dir, two, T0)]);
  const stored = (await readUsageFile(dir)).get('key_a');
  assert.deepEqual(stored?.totals, { requests: 2, promptTokens: 11, completionTokens: 7, cachedTokens: 2, errors: 1, costNanos: 9_000_000_001, guardBlocked: 0, guardMasked: 0, guardLogged: 0 });
  assert.deepEqual(Object.fromEntries(stored?.hours ?? []), {
    '2026-11-22T05': { requests: 1, promptTokens: 10, completionTokens: 5, cachedTokens: 2, errors: 0, costNanos: 9_000_000_000, guardBlocked: 0, guardMasked: 0, guardLogged: 0 },
    '2026-11-23T06': { requests: 1, promptTokens: 1, completionTokens: 2, cachedTokens: 0, errors: 1, costNanos: 1, guardBlocked: 0, guardMasked: 0, guardLogged: 0 },
  });
  assert.deepEqual(Object.fromEntries(stored?.days ?? []), {
    '2026-11-22': { requests: 1, promptTokens: 10, completionTokens: 5, cachedTokens: 2, errors: 0, costNanos: 9_000_000_000, guardBlocked: 0, guardMasked: 0, guardLogged: 0 },
    '2026-11-23': { requests: 1, promptTokens: 1, completionTokens: 2, cachedTokens: 0, errors: 1, costNanos: 1, guardBlocked: 0, guardMasked: 0, guardLogged: 0 },
  });
  assert.deepEqual(Object.fromEntries(await readUsageTotals(dir)), { key_a: stored?.totals });

  writeFileSync(path.join(dir, 'usage.json'), '{"version":2}');
  one.record('key_c', { charged: null, error: false });
  await assert.rejects(flushUsage(dir, one), /usage\.json: expected/);
  assert.equal(one.dirty(), true);
  assert.equal(readFileSync(path.join(dir, 'usage.json'), 'utf8'), '{"version":2}');
});

test('hour buckets are kept a week and day buckets 400 days', async () => {
  const d = mkdtempSync(path.join(dir, 'retention-'));
  const old = createUsageLedger();
  old.record('key_a', { charged: null, error: false }, T0 - 8 * 24 * H);
  old.record('key_a', { charged: null, error: false }, T0 - 401 * 24 * H);
  old.record('key_a', { charged: null, error: false }, T0 - 6 * 24 * H);
  await flushUsage(d, old, T0);
  const stored = (await readUsageFile(d)).get('key_a');
  assert.deepEqual([...(stored?.hours.keys() ?? [])], ['2026-11-16T05']);
  assert.deepEqual([...(stored?.days.keys() ?? [])].sort(), ['2026-11-14', '2026-11-16']);
  assert.equal(stored?.totals.requests, 3);
});

test('series: fixed length, time order, zeros where nothing happened', () => {
  const ledger = createUsageLedger();
  ledger.record('key_a', { charged: u(3, 4, 0), error: false }, T0);
  ledger.record('key_a', { charged: null, error: true }, T0 - 2 * H);
  const all = new Map();
  const text = serializeUsageFile(all);
  assert.equal(text, '{\n  "version": 2,\n  "keys": {}\n}\n');
  const stored = { totals: { ...zero, requests: 2, promptTokens: 3, completionTokens: 4, errors: 1 }, hours: new Map([
    ['2026-11-22T05', { ...zero, requests: 1, promptTokens: 3, completionTokens: 4 }],
    ['2026-11-22T03', { ...zero, requests: 1, errors: 1 }],
  ]), days: new Map([['2026-11-22', { ...zero, requests: 2, promptTokens: 3, completionTokens: 4, errors: 1 }]]) };
  const hours = seriesOf(stored, 'hour', T0);
  assert.equal(hours.buckets.length, 48);
  assert.deepEqual(hours.buckets.at(-1), { start: '2026-11-22T05:00:00.000Z', ...zero, requests: 1, promptTokens: 3, completionTokens: 4 });
  assert.deepEqual(hours.buckets.at(-2), { start: '2026-11-22T04:00:00.000Z', ...zero });
  assert.deepEqual(hours.buckets.at(-3), { start: '2026-11-22T03:00:00.000Z', ...zero, requests: 1, errors: 1 });
  assert.equal(hours.buckets[0]?.start, '2026-11-20T06:00:00.000Z');
  const days = seriesOf(stored, 'day', T0);
  assert.equal(days.buckets.length, 30);
  assert.equal(days.buckets[0]?.start, '2026-10-24T00:00:00.000Z');
  assert.deepEqual(days.totals, stored.totals);
  assert.deepEqual(seriesOf(undefined, 'day', T0).totals, zero);
});

test('a corrupt usage file is an error naming the file and field, never zeros; version 1 reads as totals', () => {
  assert.throws(() => parseUsageFile('nope', '/d/usage.json'), { message: '/d/usage.json: is not valid JSON' });
  assert.throws(() => parseUsageFile('{"version":1,"keys":{"k":{"requests":-1}}}', '/d/usage.json'), {
    message: '/d/usage.json: keys.k must hold requests, promptTokens, completionTokens, cachedTokens, errors (and costNanos, guardBlocked, guardMasked, guardLogged, if present) as non-negative integers',
  });
  assert.throws(() => parseUsageFile('{"version":2,"keys":{"k":{"totals":{"requests":1,"promptTokens":0,"completionTokens":0,"cachedTokens":0,"errors":0},"hours":{"yesterday":{}},"days":{}}}}', '/d/usage.json'), {
    message: '/d/usage.json: keys.k.hours has a bucket "yesterday" that is not a UTC hour (YYYY-MM-DDTHH)',
  });
  const v1 = parseUsageFile('{"version":1,"keys":{"k":{"requests":1,"promptTokens":2,"completionTokens":3,"cachedTokens":0,"errors":0}}}', '/d/usage.json');
  assert.deepEqual(v1.get('k'), { totals: { requests: 1, promptTokens: 2, completionTokens: 3, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 }, hours: new Map(), days: new Map() });
});

test('a usage file written before cost was recorded reads as cost 0, and the next flush adds cost to it', async () => {
  const d = mkdtempSync(path.join(dir, 'before-cost-'));
  const old = { requests: 2, promptTokens: 30, completionTokens: 40, cachedTokens: 5, errors: 1 };
  writeFileSync(path.join(d, 'usage.json'), JSON.stringify({ version: 2, keys: { key_a: { totals: old, hours: { '2026-11-22T05': old }, days: { '2026-11-22': old } } } }));
  const before = (await readUsageFile(d)).get('key_a');
  const none = { costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  assert.deepEqual(before?.totals, { ...old, ...none });
  assert.deepEqual(Object.fromEntries(before?.hours ?? []), { '2026-11-22T05': { ...old, ...none } });
  assert.deepEqual(Object.fromEntries(before?.days ?? []), { '2026-11-22': { ...old, ...none } });

  const ledger = createUsageLedger(() => T0);
  ledger.record('key_a', { charged: u(1, 1, 0, 2_500), error: false });
  await flushUsage(d, ledger, T0);
  const after = { requests: 3, promptTokens: 31, completionTokens: 41, cachedTokens: 5, errors: 1, costNanos: 2_500, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  const written = JSON.parse(readFileSync(path.join(d, 'usage.json'), 'utf8')) as unknown;
  assert.deepEqual(written, { version: 2, keys: { key_a: { totals: after, hours: { '2026-11-22T05': after }, days: { '2026-11-22': after } } } });
  assert.throws(() => parseUsageFile(JSON.stringify({ version: 2, keys: { k: { totals: { ...old, costNanos: 1.5 }, hours: {}, days: {} } } }), '/d/usage.json'), {
    message: '/d/usage.json: keys.k.totals must hold requests, promptTokens, completionTokens, cachedTokens, errors (and costNanos, guardBlocked, guardMasked, guardLogged, if present) as non-negative integers',
  });
});

test('a charge that is not non-negative safe integers is refused before anything is counted', () => {
  const ledger = createUsageLedger(() => T0);
  for (const [field, value] of [['promptTokens', -1], ['completionTokens', 1.5], ['cachedTokens', Number.NaN], ['costNanos', 2 ** 53], ['costNanos', Infinity]] as const) {
    const charged = { ...u(1, 1, 0, 1), [field]: value };
    assert.throws(() => ledger.record('key_a', { charged, error: false }), { name: 'RangeError', message: `charged.${field} must be a non-negative safe integer; got ${value}.` }, field);
  }
  assert.equal(ledger.dirty(), false, 'nothing was counted');
  ledger.record('key_a', { charged: u(0, 0, 0, Number.MAX_SAFE_INTEGER), error: false });
  assert.equal(ledger.drain().get('key_a')?.get(Date.parse('2026-11-22T05:00:00.000Z'))?.costNanos, Number.MAX_SAFE_INTEGER);
});

test("the guard's findings count by action with the request, in its hour; null or absent counts nothing", () => {
  const ledger = createUsageLedger(() => T0);
  ledger.record('key_a', { charged: u(10, 5, 0, 100), error: true, guard: { blocked: 1, masked: 0, logged: 2 } });
  ledger.record('key_a', { charged: null, error: false, guard: { blocked: 0, masked: 3, logged: 1 } });
  ledger.record('key_a', { charged: null, error: false, guard: null });
  ledger.record('key_a', { charged: null, error: false }, T0 + H);
  const hour = Date.parse('2026-11-22T05:00:00.000Z');
  assert.deepEqual(ledger.drain().get('key_a'), new Map([
    [hour, { ...zero, requests: 3, promptTokens: 10, completionTokens: 5, errors: 1, costNanos: 100, guardBlocked: 1, guardMasked: 3, guardLogged: 3 }],
    [hour + H, { ...zero, requests: 1 }],
  ]));
});

test('guard counts that are not non-negative safe integers are refused before anything is counted', () => {
  const ledger = createUsageLedger(() => T0);
  for (const [field, value] of [['blocked', -1], ['masked', 0.5], ['logged', Number.NaN]] as const) {
    const guard = { blocked: 0, masked: 0, logged: 0, [field]: value };
    assert.throws(() => ledger.record('key_a', { charged: u(1, 1, 0), error: false, guard }), { name: 'RangeError', message: `guard.${field} must be a non-negative safe integer; got ${value}.` }, field);
  }
  assert.equal(ledger.dirty(), false, 'nothing was counted');
});

test('periodSum adds up the buckets of a series, not its all-time totals', () => {
  const stored = {
    totals: { ...zero, requests: 9, guardBlocked: 9 },
    hours: new Map([
      ['2026-11-22T05', { ...zero, requests: 2, guardMasked: 1 }],
      ['2026-11-20T06', { ...zero, requests: 1, costNanos: 5, guardLogged: 4 }],
      ['2026-11-20T05', { ...zero, requests: 6, guardBlocked: 9 }],
    ]),
    days: new Map(),
  };
  assert.deepEqual(periodSum(seriesOf(stored, 'hour', T0)), { ...zero, requests: 3, costNanos: 5, guardMasked: 1, guardLogged: 4 });
  assert.deepEqual(periodSum(seriesOf(stored, 'day', T0)), zero);
});
