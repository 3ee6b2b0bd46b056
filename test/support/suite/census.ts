// Preloaded into each test process by `run-suite --census`: counts, per test
// file (a bundle says which file runs: ./bundle-state.ts), the child
// processes it starts (by program), the timers of at least 10 ms that fired,
// split by who set them (the test's own code: sleeps and polls; the
// gateway's: waits on its real clocks), and the CPU time of the process and
// of its waited-for children while the file ran. One JSON line per file,
// appended to PORTCULLIS_CENSUS_FILE; run-suite sums them.
import childProcess from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
import timersPromises from 'node:timers/promises';
import { onFileStart } from './bundle-state.ts';

const out = process.env['PORTCULLIS_CENSUS_FILE'];

export interface CensusLine {
  file: string;
  spawns: string[];
  testTimers: number;
  testTimerMs: number;
  srcTimers: number;
  srcTimerMs: number;
  cpuMs: number;
  childCpuMs: number;
}

if (out !== undefined && (process.env['NODE_TEST_CONTEXT'] ?? '').startsWith('child')) {
  const fresh = (file: string): CensusLine => ({ file, spawns: [], testTimers: 0, testTimerMs: 0, srcTimers: 0, srcTimerMs: 0, cpuMs: 0, childCpuMs: 0 });
  let line = fresh(process.argv[1] ?? '');
  let cpuAtStart = processCpuMs();
  let childCpuAtStart = childrenCpuMs();
  const close = (): void => {
    line.cpuMs = processCpuMs() - cpuAtStart;
    line.childCpuMs = childrenCpuMs() - childCpuAtStart;
    if (line.cpuMs > 0 || line.spawns.length > 0) appendFileSync(out, `${JSON.stringify(line)}\n`);
  };
  onFileStart((file) => {
    close();
    line = fresh(file);
    cpuAtStart = processCpuMs();
    childCpuAtStart = childrenCpuMs();
  });
  const writable = childProcess as unknown as Record<string | symbol, unknown>;
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    const original = writable[name] as ((...args: unknown[]) => unknown) & { [promisify.custom]?: (...args: unknown[]) => unknown };
    const counted = function (this: unknown, ...args: unknown[]): unknown {
      line.spawns.push(String(args[0]).split('/').pop() ?? '');
      return original.apply(this, args);
    } as typeof original;
    const custom = original[promisify.custom];
    if (custom !== undefined) {
      counted[promisify.custom] = function (this: unknown, ...args: unknown[]): unknown {
        line.spawns.push(String(args[0]).split('/').pop() ?? '');
        return custom.apply(this, args);
      };
    }
    writable[name] = counted;
  }
  const owner = (ms: unknown): 'test' | 'src' | null => {
    if (typeof ms !== 'number' || !(ms >= 10)) return null;
    const frame = (new Error().stack ?? '').split('\n').slice(3).find((l) => l.includes('/dist/')) ?? '';
    return frame.includes('/dist/test/') ? 'test' : frame.includes('/dist/src/') ? 'src' : null;
  };
  const fired = (who: 'test' | 'src', ms: number): void => {
    if (who === 'test') {
      line.testTimers++;
      line.testTimerMs += ms;
    } else {
      line.srcTimers++;
      line.srcTimerMs += ms;
    }
  };
  const realSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = function (callback: (...args: unknown[]) => void, ms?: number, ...rest: unknown[]) {
    const who = owner(ms);
    if (who === null || typeof callback !== 'function') return realSetTimeout(callback, ms, ...rest);
    return realSetTimeout(
      (...args: unknown[]) => {
        fired(who, ms as number);
        callback(...args);
      },
      ms,
      ...rest,
    );
  } as typeof setTimeout;
  const realSleep = timersPromises.setTimeout;
  (timersPromises as { setTimeout: unknown }).setTimeout = function (ms?: number, ...rest: unknown[]) {
    const who = owner(ms);
    const waiting = (realSleep as (...args: unknown[]) => Promise<unknown>)(ms, ...rest);
    return who === null ? waiting : waiting.then((value) => (fired(who, ms as number), value));
  };
  syncBuiltinESMExports();
  process.once('exit', close);
}

function processCpuMs(): number {
  const usage = process.resourceUsage();
  return Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000);
}

/** utime and stime of the waited-for children, in clock ticks (100 a second on Linux). */
function childrenCpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}
