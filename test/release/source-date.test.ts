// The release time: SOURCE_DATE_EPOCH when set and valid, the commit time otherwise, and a clear refusal of a malformed value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSourceDateEpoch, releaseTime } from '../../scripts/release/source-date.ts';

const noCommit = (): string => {
  throw new Error('the commit time was read although SOURCE_DATE_EPOCH is set');
};

test('SOURCE_DATE_EPOCH wins over the commit time; empty counts as unset', () => {
  assert.deepEqual(releaseTime({ SOURCE_DATE_EPOCH: '1767225600' }, noCommit), { seconds: 1767225600, origin: 'SOURCE_DATE_EPOCH' });
  assert.deepEqual(releaseTime({ SOURCE_DATE_EPOCH: '0' }, noCommit), { seconds: 0, origin: 'SOURCE_DATE_EPOCH' });
  assert.deepEqual(releaseTime({ SOURCE_DATE_EPOCH: '' }, () => '1700000000\n'), { seconds: 1700000000, origin: 'commit' });
  assert.deepEqual(releaseTime({}, () => '1700000000\n'), { seconds: 1700000000, origin: 'commit' });
});

test('a malformed SOURCE_DATE_EPOCH is refused, quoting it and saying what it must be', () => {
  for (const bad of ['-1', '1.5', ' 17', '2026-01-01', '0x10', '1e9']) {
    assert.throws(() => releaseTime({ SOURCE_DATE_EPOCH: bad }, noCommit), {
      message: `SOURCE_DATE_EPOCH must be whole seconds since 1970-01-01 UTC, digits only (like 1767225600); got ${JSON.stringify(bad)}: fix or unset it`,
    });
  }
  assert.deepEqual(parseSourceDateEpoch('8589934592'), { ok: false, message: 'SOURCE_DATE_EPOCH 8589934592 is past what a tar header holds (8589934591): fix or unset it' });
});

test('a commit time git did not give is refused', () => {
  assert.throws(() => releaseTime({}, () => ''), { message: 'git log -1 --format=%ct printed "", not a commit time: release from a git checkout with a commit, or set SOURCE_DATE_EPOCH' });
});
