import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  parseRetryAfter,
  parseRetryAfterMs,
  readRetryAfter,
  retryAfterForClient,
  retryAfterMsForClient,
  upstreamRetryDelay,
} from '../../src/upstream/retry-after.ts';

const now = Date.parse('2024-06-11T12:00:00Z');

// One row per upstream value: the wait the dispatcher takes (ms from `now`;
// undefined: not a Retry-After, the backoff applies) and the `retry-after` a
// client gets on a 429 passed on. Rows marked "was:" changed when the two
// parsers (dispatcher and client) became one; every other row is as before.
const table: Array<[value: string | null, waitMs: number | undefined, client: string]> = [
  // absent or empty
  [null, undefined, '1'],
  ['', undefined, '1'],
  ['   ', undefined, '1'],
  // delay-seconds = 1*DIGIT
  ['0', 0, '0'],
  ['1', 1000, '1'],
  ['7', 7000, '7'],
  [' 30 ', 30_000, '30'],
  ['86400', 86_400_000, '86400'],
  ['007', 7000, '007'],
  ['999999999', 999_999_999_000, '999999999'],
  // Valid, but over 9 digits is no answer worth repeating to a client.
  ['9999999999', 9_999_999_999_000, '1'],
  // Not delay-seconds: no fraction (was: the dispatcher waited 1500 / 1 ms), sign, exponent, hex.
  ['1.5', undefined, '1'],
  ['0.0004', undefined, '1'],
  ['1.', undefined, '1'],
  ['.5', undefined, '1'],
  ['-1', undefined, '1'],
  ['-3', undefined, '1'],
  ['+5', undefined, '1'],
  ['1e3', undefined, '1'],
  ['0x10', undefined, '1'],
  ['Infinity', undefined, '1'],
  ['NaN', undefined, '1'],
  ['1 2', undefined, '1'],
  ['soon', undefined, '1'],
  ['2015-10-21', undefined, '1'],
  // IMF-fixdate: repeated as sent.
  ['Tue, 11 Jun 2024 12:00:30 GMT', 30_000, 'Tue, 11 Jun 2024 12:00:30 GMT'],
  ['Wed, 12 Jun 2024 12:00:00 GMT', 86_400_000, 'Wed, 12 Jun 2024 12:00:00 GMT'],
  // In the past: no wait.
  ['Tue, 11 Jun 2024 11:00:00 GMT', 0, 'Tue, 11 Jun 2024 11:00:00 GMT'],
  ['Wed, 21 Oct 2015 07:28:00 GMT', 0, 'Wed, 21 Oct 2015 07:28:00 GMT'],
  // Obsolete forms a recipient must accept; a sender must generate IMF-fixdate.
  // was: RFC 850 repeated as sent, asctime answered '1'.
  ['Tuesday, 11-Jun-24 12:01:00 GMT', 60_000, 'Tue, 11 Jun 2024 12:01:00 GMT'],
  ['Tue Jun 11 12:00:05 2024', 5000, 'Tue, 11 Jun 2024 12:00:05 GMT'],
  ['Wed Jun 12 12:00:00 2024', 86_400_000, 'Wed, 12 Jun 2024 12:00:00 GMT'],
  // A one-digit asctime day is space-padded (and this one is in the past).
  ['Sat Jun  1 12:00:05 2024', 0, 'Sat, 01 Jun 2024 12:00:05 GMT'],
  // RFC 850 years: more than 50 years ahead means the past century.
  ['Monday, 11-Jun-74 12:00:00 GMT', Date.parse('2074-06-11T12:00:00Z') - now, 'Mon, 11 Jun 2074 12:00:00 GMT'],
  ['Wednesday, 11-Jun-75 12:00:00 GMT', 0, 'Wed, 11 Jun 1975 12:00:00 GMT'],
  // Not an HTTP-date. was: '1 GMT' passed Date.parse (as 2001) on both paths.
  ['1 GMT', undefined, '1'],
  ['Tue, 11 Jun 2024 12:00:30', undefined, '1'],
  ['Tue, 11 Jun 2024 12:00:30 UTC', undefined, '1'],
  ['tue, 11 jun 2024 12:00:30 GMT', undefined, '1'],
  ['Tue, 1 Jun 2024 12:00:30 GMT', undefined, '1'],
  ['Tue, 99 Foo 2024 12:00:30 GMT', undefined, '1'],
  ['Fri, 31 Feb 2024 12:00:00 GMT', undefined, '1'],
  ['Tue, 11 Jun 2024 24:00:00 GMT', undefined, '1'],
  ['Tue Jun 11 12:00:05 2024 GMT', undefined, '1'],
  ['Tues, 11-Jun-24 12:01:00 GMT', undefined, '1'],
  // Too long to be worth parsing.
  ['x'.repeat(65), undefined, '1'],
  ['9'.repeat(400), undefined, '1'],
];

describe('Retry-After: one parser for the dispatcher and the client', () => {
  for (const [value, waitMs, client] of table) {
    test(`${JSON.stringify(value)} -> wait ${waitMs}, client ${client}`, () => {
      assert.equal(parseRetryAfter(value, now), waitMs);
      assert.equal(retryAfterForClient(value, now), client);
      assert.equal(readRetryAfter(value, now) === undefined, waitMs === undefined);
    });
  }

  test('the form is reported', () => {
    assert.deepEqual(readRetryAfter(' 20 ', now), { form: 'delay-seconds', seconds: 20, digits: '20' });
    assert.deepEqual(readRetryAfter('Tue Jun 11 12:00:05 2024', now), { form: 'http-date', epochMs: now + 5000 });
  });
});

describe('retry-after-ms and upstreamRetryDelay', () => {
  test('retry-after-ms', () => {
    assert.equal(parseRetryAfterMs('19500'), 19_500);
    assert.equal(parseRetryAfterMs('12.3'), 13);
    assert.equal(parseRetryAfterMs('0'), 0);
    for (const value of [null, undefined, '', 'abc', '-5', '1e2']) assert.equal(parseRetryAfterMs(value), undefined, String(value));
  });

  test('retry-after-ms for a client: whole milliseconds as sent, or none', () => {
    assert.equal(retryAfterMsForClient('250'), '250');
    assert.equal(retryAfterMsForClient(' 250 '), '250');
    for (const value of [null, '', '12.3', 'x', '-5', '1'.repeat(13)]) assert.equal(retryAfterMsForClient(value), null, String(value));
  });

  test('retry-after-ms wins over retry-after; either alone works; neither is undefined', () => {
    assert.equal(upstreamRetryDelay('20', '19500', 0), 19_500);
    assert.equal(upstreamRetryDelay('20', null, 0), 20_000);
    assert.equal(upstreamRetryDelay(null, '250', 0), 250);
    assert.equal(upstreamRetryDelay('20', 'junk', 0), 20_000);
    assert.equal(upstreamRetryDelay(null, null, 0), undefined);
    assert.equal(upstreamRetryDelay('junk', undefined, 0), undefined);
    assert.equal(upstreamRetryDelay('1.5', undefined, 0), undefined);
  });
});
