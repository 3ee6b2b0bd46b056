// The "upstream failed" warn line and its rate limit: one line per target and
// cause per interval, the failures left out counted in the next line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log/logger.ts';
import { createUpstreamFailureLog, type UpstreamFailure } from '../../src/upstream/failure-log.ts';

function setup(intervalMs = 1000) {
  const lines: Array<Record<string, unknown>> = [];
  let now = 5_000;
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>), clock: () => new Date(0) });
  const log = createUpstreamFailureLog(logger, { intervalMs, clock: () => now });
  return { lines, log, advance: (ms: number) => (now += ms) };
}

const refused = (requestId: string, targetId = 'local/llama'): UpstreamFailure => ({
  requestId,
  targetId,
  attempt: 1,
  outcome: 'fallback',
  code: 'upstream_unreachable',
  cause: { kind: 'refused', detail: 'ECONNREFUSED', address: '127.0.0.1:8000' },
});

test('the line: target, address, cause and detail, the client code, attempt, outcome, suppressed', () => {
  const { lines, log } = setup();
  log.note(refused('req-1'));
  assert.deepEqual(lines, [
    {
      time: '1970-01-01T00:00:00.000Z',
      level: 'warn',
      msg: 'upstream failed',
      requestId: 'req-1',
      target: 'local/llama',
      upstream: '127.0.0.1:8000',
      cause: 'refused',
      detail: 'ECONNREFUSED',
      code: 'upstream_unreachable',
      attempt: 1,
      outcome: 'fallback',
      suppressed: 0,
    },
  ]);
});

test('N failures within the interval: one line; the next one after it says how many were left out', () => {
  const { lines, log, advance } = setup(1000);
  for (let i = 1; i <= 5; i++) {
    log.note(refused(`req-${i}`));
    advance(100);
  }
  assert.deepEqual(lines.map((l) => l['requestId']), ['req-1']);
  // 500 ms after the first line: still inside its interval.
  advance(499);
  log.note(refused('req-6'));
  assert.equal(lines.length, 1);
  advance(1);
  log.note(refused('req-7'));
  assert.deepEqual(lines.map((l) => [l['requestId'], l['suppressed']]), [['req-1', 0], ['req-7', 5]]);
  // The count starts again from that line.
  advance(1000);
  log.note(refused('req-8'));
  assert.deepEqual(lines.at(-1)?.['suppressed'], 0);
});

test('each target and each cause (kind and detail) has its own interval', () => {
  const { lines, log } = setup();
  log.note(refused('a'));
  log.note(refused('b', 'other/model'));
  log.note({ ...refused('c'), cause: { kind: 'http', detail: '503', address: '127.0.0.1:8000' } });
  log.note({ ...refused('d'), cause: { kind: 'http', detail: '502', address: '127.0.0.1:8000' } });
  log.note({ ...refused('e'), cause: { kind: 'http', detail: '503', address: '127.0.0.1:8000' } });
  assert.deepEqual(lines.map((l) => l['requestId']), ['a', 'b', 'c', 'd']);
});

test('a failure without a client code logs code null; one shape for every line', () => {
  const { lines, log } = setup();
  log.note({ ...refused('x'), code: undefined });
  assert.equal(lines[0]?.['code'], null);
});

test('the table of windows is bounded: past 1024 targets and causes the oldest window goes, so its next failure is logged at once', () => {
  const { lines, log } = setup(60_000);
  for (let i = 0; i < 1025; i++) log.note(refused(`req-${i}`, `p/m${i}`));
  assert.equal(lines.length, 1025);
  // Within the interval, m1024 (kept) is suppressed, m0 (evicted) is logged again.
  log.note(refused('again-1024', 'p/m1024'));
  log.note(refused('again-0', 'p/m0'));
  assert.deepEqual(lines.slice(1025).map((l) => l['requestId']), ['again-0']);
});
