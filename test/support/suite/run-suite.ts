// The test suites, as `npm test` and `npm run test:unit` run them:
//
//   node dist/test/support/suite/run-suite.js [--unit] [--coverage] [--census] [FILE...]
//
// --unit      only the unit test files (*.test.js, not *.system.test.js)
// --coverage  V8 coverage of dist/src in every Node process, reported by c8 at the end
// --census    count each file's child processes, fired timers and CPU time, and print the totals
// FILE...     these compiled test files instead of all of dist/test
//
// The full suite first runs the setup steps of the system tests (the Debian
// root the systemd boot test boots, made once and cached), each with its own
// bound and a progress line, so that no test waits on them. Then node:test
// runs the files in bundles (./bundle.ts: one process for many files, each
// file still a suite of its own with its own bound; ./bundle-plan.ts deals
// them), several bundles at once; unit bundles with the unit guard armed
// (./unit-guard.ts). At the end it prints the slowest files.
//
// PORTCULLIS_TEST_CONCURRENCY sets how many run at once (default: the CPUs
// plus one); PORTCULLIS_TEST_ISOLATE=1 runs every file in a process of its
// own instead (node:test's usual way: slower, for telling a bundle's
// interference from a failure of the file's own).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { prepareDebianRootForSuite } from '../../systemd/debian-root.ts';
import { repositoryRoot } from '../repository-root.ts';
import type { CensusLine } from './census.ts';
import type { FileTime } from './file-times.ts';
import { planBundles, type PlannedBundle } from './bundle-plan.ts';
import { BUNDLE_ENTRY, isSystemTestFile, isUnitTestFile, testFilesUnder } from './test-files.ts';

/** Each file gets at most this long (a file may export its own `fileTimeoutMs`): a hang fails that file, not the run. */
const FILE_TIMEOUT_MS = 120_000;
/** The bound on each process node:test runs (a bundle of files), and on any one test. */
const PROCESS_TIMEOUT_MS = 600_000;
/**
 * Bundles of each kind per process run at once. A unit bundle computes
 * nearly all the time and costs a second or two to start (the gateway's
 * modules, the SDKs): one per slot. System bundles wait on what they start
 * (servers, a container, Chromium): two per slot keep the slots busy.
 */
const BUNDLES_PER_SLOT = { unit: 1, system: 2 };
const SLOWEST_SHOWN = 10;

interface Options {
  unit: boolean;
  coverage: boolean;
  census: boolean;
  files: string[];
}

function parseArguments(args: readonly string[]): Options {
  const options: Options = { unit: false, coverage: false, census: false, files: [] };
  for (const arg of args) {
    if (arg === '--unit') options.unit = true;
    else if (arg === '--coverage') options.coverage = true;
    else if (arg === '--census') options.census = true;
    else if (arg.startsWith('--')) throw new Error(`run-suite: unknown option ${arg} (known: --unit, --coverage, --census)`);
    else options.files.push(path.resolve(arg));
  }
  return options;
}

/** How many test files run at once: PORTCULLIS_TEST_CONCURRENCY, or one more than the CPUs (files wait on I/O as often as they compute). */
function concurrency(): number {
  const given = process.env['PORTCULLIS_TEST_CONCURRENCY'];
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n) || n < 1) throw new Error(`PORTCULLIS_TEST_CONCURRENCY must be a whole number of at least 1, not ${JSON.stringify(given)}`);
    return n;
  }
  return os.availableParallelism() + 1;
}

function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', env });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128 + (os.constants.signals[signal] ?? 0))));
  });
}

function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function printSlowest(all: FileTime[], testDir: string, wallMs: number, files: number, processes: number, parallel: number): void {
  const times = all.filter((time) => time.bundle !== true);
  const bundles = all.filter((time) => time.bundle === true).map((time) => `${path.basename(time.file, '.mjs')} ${seconds(time.ms)}`);
  const slowest = [...times].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN);
  console.log(`\nℹ ${files} test files in ${processes} processes, ${parallel} at a time: ${seconds(wallMs)}${bundles.length > 0 ? ` (${bundles.join(', ')})` : ''}; the slowest files:`);
  for (const time of slowest) {
    const name = path.isAbsolute(time.file) ? path.relative(testDir, time.file) : time.file;
    console.log(`ℹ   ${seconds(time.ms).padStart(7)}  ${name}${time.tests === undefined ? '' : ` (${time.tests} tests)`}`);
  }
}

/**
 * What a compiled test file imports that costs a process much to start or
 * load, so that files importing the same go in the same bundles: the
 * once-per-process helpers (test/support/chromium.ts, ...) and the client
 * SDKs (each takes 0.2 to 0.7 s of CPU to load, once per process).
 */
const SHARED = [
  { group: 'chromium', marks: ['/support/chromium.js'] },
  { group: 'redis-server', marks: ['/support/redis-server.js'] },
  { group: 'tinyproxy', marks: ['/support/tinyproxy.js'] },
  { group: 'client-sdks', marks: ["from 'openai'", "from 'ai'", "from '@langchain/", "from '@ai-sdk/"] },
] as const;

function sharedImportOf(file: string): string | undefined {
  const text = readFileSync(file, 'utf8');
  return SHARED.find(({ marks }) => marks.some((mark) => text.includes(mark)))?.group;
}

/** Writes each bundle's entry: a module that runs its files through ./bundle.ts. */
function writeBundleEntries(bundles: readonly PlannedBundle[], testDir: string, dir: string): Array<{ entry: string; weight: number }> {
  const runner = pathToFileURL(path.join(testDir, 'support', 'suite', 'bundle.js')).href;
  return bundles.map((bundle, index) => {
    const entry = path.join(dir, `${bundle.unit ? 'unit' : 'system'}-bundle-${index + 1}.mjs`);
    assert.match(entry, BUNDLE_ENTRY);
    const options = { unit: bundle.unit, fileTimeoutMs: FILE_TIMEOUT_MS };
    writeFileSync(entry, `import { runBundle } from ${JSON.stringify(runner)};\nawait runBundle(${JSON.stringify(bundle.files, null, 1)}, ${JSON.stringify(testDir)}, ${JSON.stringify(options)});\n`);
    return { entry, weight: bundle.weight };
  });
}

function printCensus(censusFile: string, testDir: string): void {
  const lines = readJsonLines<CensusLine>(censusFile);
  const sum = (pick: (line: CensusLine) => number): number => lines.reduce((total, line) => total + pick(line), 0);
  const programs = new Map<string, number>();
  for (const line of lines) for (const program of line.spawns) programs.set(program, (programs.get(program) ?? 0) + 1);
  const byCount = [...programs].sort((a, b) => b[1] - a[1]).map(([program, n]) => `${program} ${n}`);
  console.log(`ℹ census: CPU ${seconds(sum((l) => l.cpuMs))} in the test processes, ${seconds(sum((l) => l.childCpuMs))} in the processes they started`);
  console.log(`ℹ census: ${sum((l) => l.spawns.length)} child processes started: ${byCount.join(', ') || 'none'}`);
  console.log(`ℹ census: timers of 10 ms or more that fired: ${sum((l) => l.testTimers)} set by tests (${seconds(sum((l) => l.testTimerMs))}), ${sum((l) => l.srcTimers)} by the gateway (${seconds(sum((l) => l.srcTimerMs))})`);
  console.log('ℹ census: the files that cost the most CPU (their own + their child processes\'):');
  for (const line of [...lines].sort((a, b) => b.cpuMs + b.childCpuMs - (a.cpuMs + a.childCpuMs)).slice(0, SLOWEST_SHOWN)) {
    const name = path.isAbsolute(line.file) ? path.relative(testDir, line.file) : line.file;
    console.log(`ℹ   ${seconds(line.cpuMs).padStart(7)} + ${seconds(line.childCpuMs).padStart(7)}  ${name}${line.spawns.length > 0 ? ` (${line.spawns.length} processes)` : ''}`);
  }
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2));
  const root = repositoryRoot();
  const testDir = path.join(root, 'dist', 'test');
  const suiteDir = path.join(testDir, 'support', 'suite');
  const all = options.files.length > 0 ? options.files : testFilesUnder(testDir);
  const files = options.unit ? all.filter(isUnitTestFile) : all;
  if (files.length === 0) throw new Error(`run-suite: no test files${options.unit ? ' (unit)' : ''} under ${testDir}; build them first (npm run build:test)`);

  if (files.some(isSystemTestFile)) await prepareDebianRootForSuite((line) => console.log(`ℹ setup: ${line}`));

  const workDir = path.join(root, 'test-output', 'suite');
  const lastTimesFile = path.join(root, 'test-output', 'last-file-times.jsonl');
  const lastTimes = new Map(readJsonLines<FileTime>(lastTimesFile).filter((t) => t.bundle !== true).map((t) => [path.isAbsolute(t.file) ? path.relative(testDir, t.file) : t.file, t.ms]));
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const timesFile = path.join(workDir, 'file-times.jsonl');
  const censusFile = path.join(workDir, 'census.jsonl');
  const coverageDir = path.join(root, 'coverage', 'tmp');
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.coverage) {
    rmSync(coverageDir, { recursive: true, force: true });
    env['PORTCULLIS_COVERAGE_DIR'] = coverageDir;
    // Every Node process the tests start (serve, the CLI) is covered too.
    env['NODE_OPTIONS'] = `${env['NODE_OPTIONS'] ?? ''} --import=${pathToFileURL(path.join(suiteDir, 'coverage.js')).href}`.trim();
  }
  const preloads = [path.join(suiteDir, 'unit-guard.js')];
  if (options.census) {
    env['PORTCULLIS_CENSUS_FILE'] = censusFile;
    preloads.push(path.join(suiteDir, 'census.js'));
  }
  const parallel = concurrency();
  const isolate = process.env['PORTCULLIS_TEST_ISOLATE'] === '1';
  // A file not seen before: a guess from its size, system files costing more per byte.
  const planned = files.map((file) => {
    const unit = isUnitTestFile(file);
    const weight = lastTimes.get(path.relative(testDir, file)) ?? statSync(file).size / (unit ? 10 : 2);
    return { file, unit, weight, shares: sharedImportOf(file) };
  });
  const queue = isolate
    ? planned.map(({ file, weight }) => ({ entry: file, weight })).sort((a, b) => b.weight - a.weight)
    : writeBundleEntries(planBundles(planned, parallel, BUNDLES_PER_SLOT), testDir, workDir);
  const args = [
    ...preloads.map((file) => `--import=${pathToFileURL(file).href}`),
    '--test',
    `--test-concurrency=${parallel}`,
    `--test-timeout=${isolate ? FILE_TIMEOUT_MS : PROCESS_TIMEOUT_MS}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${pathToFileURL(path.join(suiteDir, 'file-times.js')).href}`,
    `--test-reporter-destination=${timesFile}`,
    ...queue.map((item) => item.entry),
  ];
  const started = performance.now();
  let status = await runNode(args, env);
  const times = readJsonLines<FileTime>(timesFile);
  printSlowest(times, testDir, performance.now() - started, files.length, queue.length, parallel);
  // A run of some files updates their times and keeps the others', so the next whole run is dealt from all of them.
  if (times.length > 0) {
    for (const time of times) if (time.bundle !== true) lastTimes.set(path.isAbsolute(time.file) ? path.relative(testDir, time.file) : time.file, time.ms);
    writeFileSync(lastTimesFile, [...lastTimes].filter(([file]) => existsSync(path.join(testDir, file))).map(([file, ms]) => JSON.stringify({ file, ms })).join('\n') + '\n');
  }
  if (options.census) printCensus(censusFile, testDir);
  if (options.coverage) {
    const c8 = path.join(root, 'test', 'node_modules', 'c8', 'bin', 'c8.js');
    // A run whose tests started no Node process of the gateway's wrote nothing: c8 then reports every file uncovered.
    mkdirSync(coverageDir, { recursive: true });
    const reported = await runNode([c8, 'report', `--temp-directory=${coverageDir}`], { ...process.env, NODE_OPTIONS: '' });
    if (status === 0) status = reported;
  }
  return status;
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
