// A unit test file (any *.test.js that is not *.system.test.js) may not start
// a process: the unit suite (npm run test:unit) promises no child process,
// browser, Redis or container. Preloaded into every test file's process by
// the suite runner, and armed by the unit bundles (./bundle.ts) themselves;
// a unit test that tries is told where its test belongs.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { isUnitTestFile } from './test-files.ts';

const NAMES = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
let armed = false;

/** From now on, every child_process function of this process throws. */
export function guardAgainstProcesses(): void {
  if (armed) return;
  armed = true;
  const writable = childProcess as unknown as Record<string, unknown>;
  for (const name of NAMES) {
    writable[name] = (command: unknown): never => {
      throw new Error(
        `a unit test started a process (child_process.${name}(${JSON.stringify(String(command))})), and unit test files start none. ` +
          'Put the test in a *.system.test.ts file beside its unit file: the full suite (npm test) runs those, the unit suite does not.',
      );
    };
  }
  syncBuiltinESMExports();
}

// NODE_TEST_CONTEXT marks a process the test runner started for one file;
// the runner itself and the processes system tests start are left alone.
const file = process.argv[1] ?? '';
if ((process.env['NODE_TEST_CONTEXT'] ?? '').startsWith('child') && isUnitTestFile(file)) guardAgainstProcesses();
