// A release stopped half-way leaves nothing behind: `npm run package` stopped
// by Ctrl-C (SIGINT to the whole foreground process group) or by a SIGTERM or
// SIGHUP to the script alone, while its temporary clone is being built,
// removes the clone, writes no tarball and ends by that signal.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { eventually, within } from '../support/eventually.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';
import { baseEnv } from './release-checkout.ts';

const root = repositoryRoot();
const PACKAGE = path.join(root, 'dist', 'scripts', 'release', 'package.js');
const tmp = tempDir('release-interrupt');

const cases: Array<{ signal: NodeJS.Signals; group: boolean; how: string }> = [
  { signal: 'SIGINT', group: true, how: 'Ctrl-C (SIGINT to the process group)' },
  { signal: 'SIGTERM', group: false, how: 'SIGTERM to the script alone' },
  { signal: 'SIGHUP', group: false, how: 'SIGHUP to the script alone' },
];

for (const { signal, group, how } of cases) {
  test(`npm run package stopped by ${how} while building removes its clone, writes nothing and ends by ${signal}`, { timeout: 120_000 }, async () => {
    const parent = path.join(tmp, `${signal}-tmp`);
    const out = path.join(tmp, `${signal}-out`);
    mkdirSync(parent, { recursive: true });
    const child = spawn(process.execPath, [PACKAGE, '--out', out], { cwd: root, env: { ...baseEnv, TMPDIR: parent }, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
    // The clone is checked out and linked to node_modules: the build runs next.
    await eventually(() => readdirSync(parent).some((name) => existsSync(path.join(parent, name, 'checkout', 'node_modules'))), 'the temporary clone ready to build', { boundMs: 60_000 });
    process.kill(group ? -(child.pid as number) : (child.pid as number), signal);
    const status = await within(exited, `package to end after ${signal}`, 60_000);
    assert.deepEqual(status, { code: null, signal }, stderr);
    // npm on Node 22 and later keeps its compile cache in the temporary folder too: only a release clone counts.
    assert.deepEqual(readdirSync(parent).filter((name) => name.startsWith('portcullis-release-')), [], `temporary clones left behind; stderr:\n${stderr}`);
    assert.ok(!existsSync(path.join(out, 'portcullis-0.1.0.tgz')), 'a tarball was written');
  });
}
