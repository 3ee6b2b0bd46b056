// The suite's machinery as node:test runs it: bundles (./bundle.ts) keep each
// file's top-level hooks around its own tests, report a file that cannot load
// and go on, fail when files leave handles open; the unit guard
// (./unit-guard.ts) stops a unit file starting a process, bundled or alone;
// the file-times reporter (./file-times.ts) names each file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '../temp-dir.ts';

const suiteDir = path.dirname(fileURLToPath(import.meta.url));
const bundleModule = pathToFileURL(path.join(suiteDir, 'bundle.js')).href;
const dir = tempDir('suite');
// The fixtures are ES modules named as compiled test files are (*.test.js).
writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Runs node --test on `entries` as run-suite does; returns the exit status, the spec output and the file-times lines. */
function runTests(entries: string[], options: { preloadGuard?: boolean } = {}): { status: number | null; output: string; times: Array<Record<string, unknown>> } {
  const times = path.join(dir, `times-${Math.random().toString(36).slice(2)}.jsonl`);
  const result = spawnSync(
    process.execPath,
    [
      ...(options.preloadGuard === true ? [`--import=${pathToFileURL(path.join(suiteDir, 'unit-guard.js')).href}`] : []),
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${pathToFileURL(path.join(suiteDir, 'file-times.js')).href}`,
      `--test-reporter-destination=${times}`,
      ...entries,
    ],
    // Without this test's own NODE_TEST_CONTEXT, or that node --test would report to this runner as a child does.
    { encoding: 'utf8', timeout: 60_000, env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT')) },
  );
  const lines = readFileSync(times, 'utf8').split('\n').filter((line) => line !== '');
  return { status: result.status, output: `${result.stdout}${result.stderr}`, times: lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

function bundleEntry(name: string, files: string[], options: Record<string, unknown>): string {
  return write(name, `import { runBundle } from ${JSON.stringify(bundleModule)};\nawait runBundle(${JSON.stringify(files)}, ${JSON.stringify(dir)}, ${JSON.stringify(options)});\n`);
}

const log = path.join(dir, 'order.log');
const hooked = (label: string): string =>
  write(
    `${label}.test.mjs`,
    `import { after, before, beforeEach, describe, test } from 'node:test';
import { appendFileSync } from 'node:fs';
const note = (what) => appendFileSync(${JSON.stringify(log)}, '${label}:' + what + '\\n');
note('top level');
before(() => note('before'));
beforeEach(() => note('beforeEach'));
after(() => note('after'));
test('one', () => note('one'));
describe('inner', () => { test('two', () => note('two')); });
`,
  );

test("a bundle runs each file's top-level hooks around that file's tests only, in order", () => {
  writeFileSync(log, '');
  const entry = bundleEntry('unit-bundle-1.mjs', [hooked('a'), hooked('b')], { unit: true, fileTimeoutMs: 30_000 });
  const { status, times } = runTests([entry]);
  assert.equal(status, 0);
  assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
    'a:top level',
    'a:before',
    'a:beforeEach',
    'a:one',
    'a:beforeEach',
    'a:two',
    'a:after',
    'b:top level',
    'b:before',
    'b:beforeEach',
    'b:one',
    'b:beforeEach',
    'b:two',
    'b:after',
  ]);
  assert.deepEqual(
    times.map((t) => [t['file'], t['bundle'] ?? false]),
    [['a.test.mjs', false], ['b.test.mjs', false], [entry, true]],
  );
});

test('a file that throws while loading fails as "the file loads"; the files after it still run', () => {
  const broken = write('broken.test.mjs', "import { test } from 'node:test';\nthrow new Error('cannot load this');\n");
  const fine = write('fine.test.mjs', "import { test } from 'node:test';\ntest('fine', () => {});\n");
  const { status, output } = runTests([bundleEntry('unit-bundle-2.mjs', [broken, fine], { unit: true, fileTimeoutMs: 30_000 })]);
  assert.equal(status, 1);
  assert.match(output, /✖ the file loads/);
  assert.match(output, /Error: cannot load this/);
  assert.match(output, /✔ fine/);
});

test("a file exporting fileTimeoutMs gets that bound instead of the bundle's; the next file runs after it times out", () => {
  const slow = write('slow.test.mjs', "import { test } from 'node:test';\nexport const fileTimeoutMs = 200;\ntest('never ends', () => new Promise(() => {}));\n");
  const next = write('next.test.mjs', "import { test } from 'node:test';\ntest('runs after the timeout', () => {});\n");
  const { status, output } = runTests([bundleEntry('system-bundle-3.mjs', [slow, next], { unit: false, fileTimeoutMs: 30_000 })]);
  assert.equal(status, 1);
  assert.match(output, /timed out after 200ms/);
  assert.match(output, /✔ runs after the timeout/);
});

test('files that leave a server listening fail the bundle after the grace, naming what was left', () => {
  const leaky = write('leaky.test.mjs', "import { test } from 'node:test';\nimport http from 'node:http';\ntest('listens', () => new Promise((resolve) => http.createServer().listen(0, '127.0.0.1', resolve)));\n");
  const { status, output } = runTests([bundleEntry('unit-bundle-4.mjs', [leaky], { unit: true, fileTimeoutMs: 30_000, leftOpenGraceMs: 200 })]);
  assert.equal(status, 1);
  assert.match(output, /✔ listens/);
  assert.match(output, /the files of this bundle left handles open after their tests: .*TCPServerWrap/);
});

const spawning = (): string =>
  write('spawns.test.js', "import { test } from 'node:test';\nimport { execFileSync } from 'node:child_process';\ntest('starts a process', () => { execFileSync('true'); });\n");

test('the unit guard: a unit file that starts a process fails with where its test belongs, bundled or alone', () => {
  const bundled = runTests([bundleEntry('unit-bundle-5.mjs', [spawning()], { unit: true, fileTimeoutMs: 30_000 })]);
  assert.equal(bundled.status, 1);
  assert.match(bundled.output, /a unit test started a process \(child_process\.execFileSync\("true"\)\), and unit test files start none\. Put the test in a \*\.system\.test\.ts file/);
  const alone = runTests([spawning()], { preloadGuard: true });
  assert.equal(alone.status, 1);
  assert.match(alone.output, /a unit test started a process \(child_process\.execFileSync\("true"\)\)/);
});

test('a system bundle may start processes', () => {
  const { status, output } = runTests([bundleEntry('system-bundle-6.mjs', [spawning()], { unit: false, fileTimeoutMs: 30_000 })]);
  assert.equal(status, 0, output);
});

test('a file that is slow to load after another has ended still runs, and the grace for open handles starts after it', () => {
  const first = write('first.test.mjs', "import { test } from 'node:test';\ntest('first', () => {});\n");
  const slowLoad = write('slow-load.test.mjs', "import { test } from 'node:test';\nawait new Promise((resolve) => setTimeout(resolve, 1000));\ntest('after a slow load', () => {});\n");
  const { status, output } = runTests([bundleEntry('unit-bundle-7.mjs', [first, slowLoad], { unit: true, fileTimeoutMs: 30_000, leftOpenGraceMs: 300 })]);
  assert.equal(status, 0, output);
  assert.match(output, /✔ after a slow load/);
});
