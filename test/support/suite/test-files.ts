// Which test files there are, and which suite each belongs to: by name.
//   *.test.js          a unit test file: pure or in-process (a real server on
//                      port 0, fakes on port 0), no child process
//   *.system.test.js   a system test file: real processes (the CLI, serve,
//                      openssl, redis-server, tinyproxy, Chromium, systemd)
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The entries the suite runner writes for its unit bundles. */
export const BUNDLE_ENTRY = /(unit|system)-bundle-\d+\.mjs$/;

/** The module that runs unit bundles: node:test reports a bundled file's describe() as its. */
export const BUNDLE_MODULE = '/support/suite/bundle.js';

const SYSTEM_SUFFIX = '.system.test.js';
const TEST_SUFFIX = '.test.js';

export function isTestFile(file: string): boolean {
  return file.endsWith(TEST_SUFFIX);
}

export function isSystemTestFile(file: string): boolean {
  return file.endsWith(SYSTEM_SUFFIX);
}

export function isUnitTestFile(file: string): boolean {
  return isTestFile(file) && !isSystemTestFile(file);
}

/** Every compiled test file under `dir` (node_modules left out), sorted. */
export function testFilesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && isTestFile(entry.name)) found.push(full);
    }
  };
  walk(dir);
  return found.sort();
}
