// Preloaded (NODE_OPTIONS=--import) into every Node process of a covered run
// when PORTCULLIS_COVERAGE_DIR is set: V8's precise coverage from the start,
// written at exit in the format c8 reads, keeping only the gateway's own
// compiled modules (dist/src). NODE_V8_COVERAGE would write every script of
// every process (the client SDKs, the browser driver: hundreds of MB) and
// cache every module's source map on the way, which cost more than the tests.
//
// As Node does for NODE_V8_COVERAGE, a process started with an environment
// of its own (the CLI and serve under test get a minimal one) still gets the
// two variables that carry coverage on.
import childProcess from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';

const dir = process.env['PORTCULLIS_COVERAGE_DIR'];
const KEEP = `${path.sep}dist${path.sep}src${path.sep}`;

interface ScriptCoverage {
  url: string;
}

type Launcher = ((...args: unknown[]) => unknown) & { [promisify.custom]?: (...args: unknown[]) => unknown };

/** The arguments with the coverage variables added to an explicit `env` option, when there is one. */
function carryCoverage(args: unknown[], variables: Record<string, string>): unknown[] {
  const at = args.findIndex((arg, index) => index > 0 && typeof arg === 'object' && arg !== null && !Array.isArray(arg));
  if (at < 0) return args;
  const options = args[at] as { env?: Record<string, string | undefined> };
  if (options.env === undefined || options.env === null) return args;
  const nodeOptions = options.env['NODE_OPTIONS'] ?? '';
  const env = { ...options.env, ...variables, NODE_OPTIONS: nodeOptions.includes(variables['NODE_OPTIONS'] as string) ? nodeOptions : `${nodeOptions} ${variables['NODE_OPTIONS']}`.trim() };
  const copy = [...args];
  copy[at] = { ...options, env };
  return copy;
}

function carryCoverageIntoChildren(variables: Record<string, string>): void {
  const writable = childProcess as unknown as Record<string, Launcher>;
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    const original = writable[name] as Launcher;
    const carried = function (this: unknown, ...args: unknown[]): unknown {
      return Reflect.apply(original, this, carryCoverage(args, variables));
    } as Launcher;
    const custom = original[promisify.custom];
    if (custom !== undefined) {
      carried[promisify.custom] = function (this: unknown, ...args: unknown[]): unknown {
        return Reflect.apply(custom, this, carryCoverage(args, variables));
      };
    }
    writable[name] = carried;
  }
  syncBuiltinESMExports();
}

if (dir !== undefined && dir !== '') {
  carryCoverageIntoChildren({ PORTCULLIS_COVERAGE_DIR: dir, NODE_OPTIONS: `--import=${new URL(import.meta.url).href}` });
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  process.once('exit', () => {
    // An inspector session on the same thread answers synchronously, so this runs before the process ends.
    session.post('Profiler.takePreciseCoverage', (error, taken) => {
      if (error !== null) return;
      const result = (taken.result as ScriptCoverage[]).filter((script) => script.url.includes(KEEP) || script.url.includes('/dist/src/'));
      if (result.length === 0) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `coverage-${process.pid}-${Date.now()}.json`), JSON.stringify({ result }));
    });
  });
}
