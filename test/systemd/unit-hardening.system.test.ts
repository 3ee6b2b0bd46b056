// The shipped unit's hardening score, read the way docs/deploy.md tells an
// operator to read it: `systemd-analyze security --offline=yes` on the unit
// file, with `--threshold=13`, which makes the command itself fail above 1.3.
// The score the docs and the unit's own comment state is the one measured, so
// a change to the unit that costs hardening fails here, not on a VM. The live
// score of the started unit is checked by ./systemd-boot.system.test.ts.
//
// Needs systemd-analyze (Debian's systemd package); skipped with the reason
// printed where it is missing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { repositoryRoot } from '../support/repository-root.ts';

const execFileAsync = promisify(execFile);
const root = repositoryRoot();
const UNIT = path.join('deploy', 'portcullis.service');
/** The ceiling, in systemd-analyze's tenths: 13 is 1.3. */
const THRESHOLD = 13;
const RATING = /Overall exposure level for portcullis\.service: (\d+\.\d) (\S+)/;

async function analyze(threshold: number): Promise<{ code: number; stdout: string }> {
  const args = ['security', '--offline=yes', '--no-pager', `--threshold=${threshold}`, UNIT];
  try {
    const { stdout } = await execFileAsync('systemd-analyze', args, { cwd: root, timeout: 30_000, env: { ...process.env, SYSTEMD_COLORS: '0' } });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { code?: number | string; stdout?: string };
    if (failed.code === 'ENOENT') throw failed;
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '' };
  }
}

test('deploy/portcullis.service rates 1.3 or better offline, and the docs and the unit say what it rates', async (t) => {
  let passing: { code: number; stdout: string };
  try {
    passing = await analyze(THRESHOLD);
  } catch {
    t.skip('systemd-analyze is not installed (Debian package systemd)');
    return;
  }
  const rated = RATING.exec(passing.stdout);
  assert.ok(rated !== null, `no overall rating in:\n${passing.stdout}`);
  const [, score, word] = rated;
  assert.equal(passing.code, 0, `systemd-analyze --threshold=${THRESHOLD} failed: the unit rates ${score} ${word}`);
  assert.ok(Number(score) <= THRESHOLD / 10, `the unit rates ${score}, above ${THRESHOLD / 10}`);

  // The gate is live: one tenth below the measured score, the same command fails.
  const below = Math.round(Number(score) * 10) - 1;
  const stricter = await analyze(below);
  assert.notEqual(stricter.code, 0, `--threshold=${below} passed a unit rated ${score}`);

  const claimed = `${score} ${word}`;
  const docs = readFileSync(path.join(root, 'docs', 'deploy.md'), 'utf8');
  assert.ok(docs.includes(`rates the\nunit **${claimed}**`) || docs.includes(`rates the unit **${claimed}**`), `docs/deploy.md does not state the measured rating ${claimed}`);
  assert.ok(docs.includes(`Overall exposure level for portcullis.service: ${claimed}`), `docs/deploy.md's sample output is not the measured rating ${claimed}`);
  const unit = readFileSync(path.join(root, UNIT), 'utf8');
  assert.ok(unit.includes(`"Overall exposure level for portcullis.service: ${claimed}"`), `the unit's comment does not state the measured rating ${claimed}`);
});
