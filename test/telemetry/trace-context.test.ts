// W3C Trace Context parsing (src/telemetry/trace-context.ts): the spec's
// valid and invalid traceparent forms, future versions, tracestate bounds,
// and the ratio sampler.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent, parseTracestate } from '../../src/telemetry/trace-context.ts';
import { sampledByRatio } from '../../src/telemetry/tracer.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('traceparent', () => {
  test('version 00, sampled and not', () => {
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-01`), { traceId: TRACE, parentId: PARENT, sampled: true });
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-00`), { traceId: TRACE, parentId: PARENT, sampled: false });
    // Other flag bits are read past; only "sampled" decides.
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-03`), { traceId: TRACE, parentId: PARENT, sampled: true });
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-02`), { traceId: TRACE, parentId: PARENT, sampled: false });
  });

  test('invalid forms are ignored', () => {
    const invalid = [
      undefined,
      '',
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${TRACE}-${PARENT.toUpperCase()}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `ff-${TRACE}-${PARENT}-01`,
      `0g-${TRACE}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}-0g`,
      `00-${TRACE}-${PARENT}-01-extra`,
      `00-${TRACE}-${PARENT}-1`,
      `00_${TRACE}-${PARENT}-01`,
      `00-${TRACE}_${PARENT}-01`,
      `00-${TRACE.slice(1)}-${PARENT}0-01`,
      // Two headers joined by node.
      `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`,
      // A future version with more fields must separate them with a dash.
      `01-${TRACE}-${PARENT}-01x`,
    ];
    for (const header of invalid) assert.equal(parseTraceparent(header), undefined, String(header));
    assert.equal(parseTraceparent([`00-${TRACE}-${PARENT}-01`]), undefined);
  });

  test('a future version is read as 00 over its first 55 characters', () => {
    assert.deepEqual(parseTraceparent(`cc-${TRACE}-${PARENT}-01`), { traceId: TRACE, parentId: PARENT, sampled: true });
    assert.deepEqual(parseTraceparent(`01-${TRACE}-${PARENT}-01-what-the-future-holds`), { traceId: TRACE, parentId: PARENT, sampled: true });
  });

  test('surrounding white space is allowed (OWS)', () => {
    assert.deepEqual(parseTraceparent(` 00-${TRACE}-${PARENT}-01\t`), { traceId: TRACE, parentId: PARENT, sampled: true });
  });

  test('made anew with the right shape; ids random and never zero', () => {
    const traceId = newTraceId();
    const spanId = newSpanId();
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.match(spanId, /^[0-9a-f]{16}$/);
    assert.notEqual(newTraceId(), traceId);
    assert.equal(formatTraceparent(traceId, spanId, true), `00-${traceId}-${spanId}-01`);
    assert.deepEqual(parseTraceparent(formatTraceparent(traceId, spanId, false)), { traceId, parentId: spanId, sampled: false });
  });
});

describe('tracestate', () => {
  test('valid lists are passed on, empty members dropped, white space around members trimmed', () => {
    assert.equal(parseTracestate('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(parseTracestate('rojo=1 , ,\tcongo=2'), 'rojo=1,congo=2');
    assert.equal(parseTracestate('tenant1@vendor=x'), 'tenant1@vendor=x');
    assert.equal(parseTracestate('a=b c'), 'a=b c');
  });

  test('invalid lists are dropped whole', () => {
    const invalid = [
      undefined,
      '',
      ' , ',
      'Rojo=1',
      '1abc=1',
      'rojo',
      '=1',
      'rojo=',
      'rojo=a,rojo=b',
      'rojo=a=b',
      'rojo=a,b',
      'rojo=é',
      `k=${'v'.repeat(257)}`,
      'tenant@Vendor=x',
      `tenant@${'v'.repeat(15)}=x`,
    ];
    for (const header of invalid) assert.equal(parseTracestate(header), undefined, String(header));
  });

  test('bounded: 32 members and 512 characters', () => {
    const members = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}=v`).join(',');
    assert.equal(parseTracestate(members(32)), members(32));
    assert.equal(parseTracestate(members(33)), undefined);
    const long = `a=${'x'.repeat(250)},b=${'y'.repeat(250)}`;
    assert.equal(long.length, 505);
    assert.equal(parseTracestate(long), long);
    assert.equal(parseTracestate(`${long},c=${'z'.repeat(8)}`), undefined);
  });
});

describe('ratio sampler', () => {
  test('decides by the trace id, the same way every time', () => {
    assert.equal(sampledByRatio(TRACE, 1), true);
    assert.equal(sampledByRatio(TRACE, 0), false);
    // The last 13 hex digits: 0x0000000000000 is the lowest, 0xfffffffffffff the highest.
    assert.equal(sampledByRatio(`${'f'.repeat(19)}${'0'.repeat(13)}`, 0.0001), true);
    assert.equal(sampledByRatio(`${'0'.repeat(19)}${'f'.repeat(13)}`, 0.9999), false);
    assert.equal(sampledByRatio(`${'0'.repeat(19)}8${'0'.repeat(12)}`, 0.5), false);
    assert.equal(sampledByRatio(`${'f'.repeat(19)}7${'f'.repeat(12)}`, 0.5), true);
  });

  test('samples about the ratio of random ids', () => {
    let kept = 0;
    for (let i = 0; i < 4000; i++) if (sampledByRatio(newTraceId(), 0.25)) kept++;
    // Loose bounds: binomial(4000, 0.25) is 1000 +- 27 (sd); 10 sd either way.
    assert.ok(kept > 730 && kept < 1270, `kept ${kept}`);
  });
});
