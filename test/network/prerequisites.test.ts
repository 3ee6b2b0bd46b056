// The quiet test (./destinations.system.test.ts) skips, and a skip fails no
// run, when a program it needs is missing: .ci/install-system-packages must
// install every one of them, so a fresh Debian machine runs the proof.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';
import { PREREQUISITES } from './traced-serve.ts';

test('.ci/install-system-packages installs the package of every program the quiet test skips without', () => {
  const script = readFileSync(path.join(repositoryRoot(), '.ci', 'install-system-packages'), 'utf8');
  const installed = new Set([...script.matchAll(/missing\+=\(([^)]+)\)/g)].flatMap((m) => (m[1] as string).split(/\s+/)));
  // util-linux (unshare) is essential in Debian: every system has it.
  const needed = PREREQUISITES.map((p) => p.pkg).filter((pkg) => pkg !== 'util-linux');
  assert.deepEqual(needed, ['strace', 'systemd', 'python3']);
  assert.deepEqual(needed.filter((pkg) => !installed.has(pkg)), [], `packages it installs: ${[...installed].join(', ')}`);
});
