// The test build (npm run build:test) compiles incrementally into dist/,
// which tsc never empties: a source file renamed or deleted would leave its
// compiled copy behind, a test the suite would still run and a module the
// coverage report would still count. This removes every compiled file (and
// declaration) whose source is gone. Run from the repository's root after tsc.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../repository-root.ts';

const COMPILED = /(\.d\.ts|\.js(\.map)?)$/;

function prune(compiledDir: string, sourceDir: string): number {
  let removed = 0;
  if (!existsSync(compiledDir)) return 0;
  for (const entry of readdirSync(compiledDir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.isSymbolicLink()) continue;
    const compiled = path.join(compiledDir, entry.name);
    if (entry.isDirectory()) {
      removed += prune(compiled, path.join(sourceDir, entry.name));
      if (readdirSync(compiled).length === 0) rmSync(compiled, { recursive: true });
    } else if (COMPILED.test(entry.name) && !existsSync(path.join(sourceDir, entry.name.replace(COMPILED, '.ts')))) {
      rmSync(compiled);
      removed++;
    }
  }
  return removed;
}

const root = repositoryRoot();
let removed = 0;
// The folders tsconfig.json compiles, each beside its source (src/dashboard is built on its own).
for (const folder of ['src', 'test', 'bench', 'scripts']) removed += prune(path.join(root, 'dist', folder), path.join(root, folder));
if (removed > 0) console.log(`build: removed ${removed} compiled files whose source is gone`);
