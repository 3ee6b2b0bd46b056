// A node:test reporter: each test file's wall time, one JSON line per file,
// for the suite runner's "slowest files" table. A file run in a process of
// its own is timed from when the runner took it up to its end (`file` is its
// absolute path; `tests` counts its tests); a file run in a unit bundle
// (./bundle.ts) is its describe() (`file` is its path under dist/test).
import { BUNDLE_ENTRY, BUNDLE_MODULE } from './test-files.ts';

interface EventData {
  file?: string;
  name?: string;
  nesting?: number;
  details?: { type?: string; duration_ms?: number };
}

export interface FileTime {
  file: string;
  ms: number;
  tests?: number;
  /** A bundle's process, not a file. */
  bundle?: boolean;
}

export default async function* fileTimes(source: AsyncIterable<{ type: string; data: unknown }>): AsyncGenerator<string> {
  const started = new Map<string, number>();
  const tests = new Map<string, number>();
  const line = (time: FileTime): string => `${JSON.stringify(time)}\n`;
  for await (const event of source) {
    const data = event.data as EventData;
    const file = data.file;
    if (file === undefined) continue;
    const ended = event.type === 'test:pass' || event.type === 'test:fail';
    if (BUNDLE_ENTRY.test(file)) {
      // A bundle's own process: its time, for the runner's line about the bundles.
      if (event.type === 'test:dequeue' && data.name === file && data.nesting === 0) started.set(file, performance.now());
      else if (event.type === 'test:complete' && data.name === file && data.nesting === 0) yield line({ file, ms: Math.round(performance.now() - (started.get(file) ?? performance.now())), bundle: true });
      continue;
    }
    if (file.endsWith(BUNDLE_MODULE)) {
      if (ended && data.nesting === 0 && data.details?.type === 'suite' && data.name !== undefined) yield line({ file: data.name, ms: Math.round(data.details.duration_ms ?? 0) });
      continue;
    }
    // The runner reports each file as a test named by its path, at nesting 0.
    const isProcess = data.name === file && data.nesting === 0;
    if (event.type === 'test:dequeue' && isProcess) started.set(file, performance.now());
    else if (event.type === 'test:complete' && isProcess) {
      yield line({ file, ms: Math.round(performance.now() - (started.get(file) ?? performance.now())), tests: tests.get(file) ?? 0 });
    } else if (ended && !isProcess && data.details?.type !== 'suite') tests.set(file, (tests.get(file) ?? 0) + 1);
  }
}
