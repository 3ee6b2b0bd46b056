// Runs many test files in one process, each as if it had its own: the suite
// runner writes a small entry per bundle that calls runBundle(files), and
// node:test runs those entries like any test file.
//
// A process per file costs about 0.2 s of CPU before the first test (Node's
// start, node:test, the gateway's modules compiled again); with 210 files
// on two cores that was most of the suite's time. A bundle also lets files
// share what is costly to start once per process (Chromium, redis-server). Here each file's
// module is imported while node:test's functions are replaced by recorders:
// its top-level test(), describe(), it(), before(), after(), beforeEach() and
// afterEach() calls are kept in order, then replayed inside a describe()
// named after the file, so that they attach to that suite. Hooks at a file's
// top level therefore run around that file's tests only, exactly as in a
// process of its own; calls made later (inside a describe's body, inside a
// test) go straight to node:test. Files run one after another, each imported
// when the one before it has ended.
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fileStarts } from './bundle-state.ts';
import { guardAgainstProcesses } from './unit-guard.ts';

const require = createRequire(import.meta.url);
type Registrar = ((...args: unknown[]) => unknown) & { skip?: Registrar; todo?: Registrar; only?: Registrar };
const nodeTest = require('node:test') as Record<string, Registrar>;

const REGISTRARS = ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] as const;
const VARIANTS = ['skip', 'todo', 'only'] as const;

/** The calls recorded while a file's top level runs; null when calls go straight through. */
let recording: Array<() => void> | null = null;

function recorder(real: Registrar): Registrar {
  const through = (target: Registrar): Registrar =>
    function (this: unknown, ...args: unknown[]): unknown {
      if (recording === null) return Reflect.apply(target, this, args);
      recording.push(() => void Reflect.apply(target, this, args));
      // What test() and describe() return at a file's top level: nothing waits on it there.
      return Promise.resolve();
    } as Registrar;
  const wrapped = through(real);
  for (const variant of VARIANTS) {
    const target = real[variant];
    if (target !== undefined) wrapped[variant] = through(target);
  }
  return wrapped;
}

const originals = new Map<string, Registrar>();
for (const name of REGISTRARS) {
  const real = nodeTest[name];
  if (real === undefined) continue;
  originals.set(name, real);
  nodeTest[name] = recorder(real);
}
syncBuiltinESMExports();
const realDescribe = originals.get('describe') as Registrar;
const realTest = originals.get('test') as Registrar;
const realAfter = originals.get('after') as Registrar;

/**
 * After the last file: how long what is still open may keep the process up
 * before it is ended, failing. Generous: writes a test did not wait for may
 * still be finishing on a loaded machine; a server left listening never will.
 */
const LEFT_OPEN_GRACE_MS = 60_000;

export interface BundleOptions {
  /** Unit files: every child_process function throws (./unit-guard.ts). */
  unit: boolean;
  /** Each file's bound, unless the file exports its own `fileTimeoutMs`. */
  fileTimeoutMs: number;
  /** After the last file, how long what is still open may keep the process up (default LEFT_OPEN_GRACE_MS). */
  leftOpenGraceMs?: number;
}

/**
 * Imports each file with its top-level registrations recorded, then replays
 * them in a describe() named by the file's path under `testDir`, bounded by
 * the file's `fileTimeoutMs` export or the bundle's. When every file is done,
 * handles a file left open (a server, a socket) may not keep the process up:
 * after a grace it ends, failing, and says what was left.
 */
export async function runBundle(files: readonly string[], testDir: string, options: BundleOptions): Promise<void> {
  if (options.unit) guardAgainstProcesses();
  // The bundle is not done while files are still to run, even when nothing
  // else keeps the event loop going (a test waiting on a promise that never
  // settles): its file's bound ends it, and the next file runs.
  const running = setInterval(() => undefined, 2 ** 30);
  for (const [index, file] of files.entries()) {
    fileStarts(path.relative(testDir, file), files.length - index - 1);
    const calls: Array<() => void> = [];
    recording = calls;
    let failed: unknown;
    let exported: { fileTimeoutMs?: unknown } = {};
    try {
      exported = (await import(pathToFileURL(file).href)) as { fileTimeoutMs?: unknown };
    } catch (error) {
      failed = error;
    } finally {
      recording = null;
    }
    const timeout = typeof exported.fileTimeoutMs === 'number' ? exported.fileTimeoutMs : options.fileTimeoutMs;
    // The next file is imported once this one's suite is over, so that a
    // file's top-level code runs just before its own tests, as in a process
    // of its own, and never beside another file's tests.
    await new Promise<void>((ended) => {
      realDescribe(path.relative(testDir, file), { timeout }, () => {
        realAfter(() => ended());
        if (failed !== undefined) {
          // As node:test reports a file that throws while loading: a failure, and the rest of the bundle runs on.
          realTest('the file loads', () => {
            throw failed;
          });
          return;
        }
        for (const call of calls) call();
      });
    });
  }
  clearInterval(running);
  // Not node:test's root after hook: the root counts itself done whenever no
  // file's suite is pending, which happens between two files of a bundle.
  setTimeout(() => {
    const left = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
    process.stderr.write(`the files of this bundle left handles open after their tests: ${left.join(', ')}\n`);
    process.exit(1);
  }, options.leftOpenGraceMs ?? LEFT_OPEN_GRACE_MS).unref();
}
