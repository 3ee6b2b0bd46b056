// Review: the quiet test (test/network/destinations.system.test.ts)
// skips, and the CI run counts a skip as no failure, unless /usr/bin/systemd-notify
// and python3 are there; .ci/install-system-packages, which docs/network.md says
// provides what it needs, installs neither. On a fresh Debian machine without
// systemd the proof of "provably quiet" silently does not run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

test('.ci/install-system-packages installs every program the quiet test skips without (systemd-notify, python3)', () => {
  const script = readFileSync(path.join(repositoryRoot(), '.ci', 'install-system-packages'), 'utf8');
  const installed = [...script.matchAll(/missing\+=\(([^)]+)\)/g)].map((m) => m[1]);
  const quietTest = readFileSync(path.join(repositoryRoot(), 'test', 'network', 'destinations.system.test.ts'), 'utf8');
  assert.match(quietTest, /SYSTEMD_NOTIFY_COMMAND\) && hasPython \? false/, 'the quiet test still skips without systemd-notify and python3');
  assert.deepEqual(
    ['systemd', 'python3'].filter((pkg) => !installed.includes(pkg)),
    [],
    `packages it installs: ${installed.join(', ')}`,
  );
});
