// The checked-in API report (api/portcullis.api.md) is the built declarations
// of the package's entries and every file they reach, and that closure stays
// inside the public folders. Reads dist/, so it runs after a build that emits
// declarations (npm run build:test does).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  API_REPORT_FILE,
  buildApiReport,
  CLOSURE_ALLOWLIST,
  closureProblems,
  lineDiff,
  publicClosure,
  relativeSpecifiers,
  renderApiReport,
  sourceOf,
} from '../../scripts/api-report.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const root = repositoryRoot();

describe('the API report', () => {
  test('api/portcullis.api.md is the declarations of the public entries and every file they reach', () => {
    const { report } = buildApiReport(root);
    const file = path.join(root, API_REPORT_FILE);
    if (process.env['UPDATE_API_REPORT'] === '1') writeFileSync(file, report);
    const checkedIn = readFileSync(file, 'utf8');
    if (checkedIn === report) return;
    assert.fail(
      `${API_REPORT_FILE} differs from the public declarations (- checked in, + built):\n${lineDiff(checkedIn, report)}\n\n` +
        'If the change to the public API is meant, rewrite the report with `npm run api:report` (or UPDATE_API_REPORT=1 with the test) and commit it.',
    );
  });

  test('the public closure reaches only the entries, src/api/, src/testing/, the src/library/ files an entry names and the allowlist', () => {
    const { closure } = buildApiReport(root);
    assert.deepEqual(closureProblems(closure, CLOSURE_ALLOWLIST), []);
    // The walk found the types and the runtime values' homes.
    assert.ok(closure.files.includes('src/api/config.ts'), closure.files.join(' '));
    assert.equal(closure.reachedFrom.get('src/library/check-config.ts'), 'src/index.ts');
  });

  test('every allowlist entry is reached and gives its reason', () => {
    const { closure } = buildApiReport(root);
    for (const [file, reason] of Object.entries(CLOSURE_ALLOWLIST)) {
      assert.ok(closure.files.includes(file), `${file} is in CLOSURE_ALLOWLIST but the public declarations no longer reach it: remove it`);
      assert.ok(reason.length >= 20, `${file}: the allowlist gives no reason`);
    }
  });
});

describe('the closure walk', () => {
  const files: Record<string, string> = {
    'src/index.ts': "export { a } from './library/a.ts';\nexport type { T } from './api/t.ts';\n",
    'src/testing.ts': "export * from './testing/contract.ts';\n",
    'src/testing/contract.ts': "import type { T } from '../api/t.ts';\nexport declare function run(x: T): void;\n",
    'src/api/t.ts': "export interface T { at: import('./u.js').U }\n",
    'src/api/u.ts': 'export type U = string;\n',
    'src/library/a.ts': "export declare function a(c: import('../config/config.ts').GatewayConfig): void;\n",
    'src/config/config.ts': "import './side.d.ts';\nexport interface GatewayConfig {}\n",
    'src/config/side.ts': '',
  };
  const read = (source: string): string | undefined => files[source];

  test('reads from-imports, re-exports, bare imports and import() types, with .ts, .js and .d.ts specifiers', () => {
    assert.deepEqual(relativeSpecifiers(files['src/index.ts'] as string), ['./library/a.ts', './api/t.ts']);
    assert.deepEqual(relativeSpecifiers("import { x } from 'node:fs';\nexport * from \"./b.js\";\nimport './c.d.ts';\ntype Y = import('../d.ts').Y;"), ['./b.js', './c.d.ts', '../d.ts']);
    assert.equal(sourceOf('src/api/t.ts', './u.js'), 'src/api/u.ts');
    assert.equal(sourceOf('src/library/a.ts', '../config/side.d.ts'), 'src/config/side.ts');
  });

  test('lists the entries first, then every file reached, sorted', () => {
    const closure = publicClosure(['src/index.ts', 'src/testing.ts'], read);
    assert.deepEqual(closure.files, ['src/index.ts', 'src/testing.ts', 'src/api/t.ts', 'src/api/u.ts', 'src/config/config.ts', 'src/config/side.ts', 'src/library/a.ts', 'src/testing/contract.ts']);
  });

  test('names each internal file reached, with the chain that reaches it; an allowlisted one passes', () => {
    const closure = publicClosure(['src/index.ts', 'src/testing.ts'], read);
    const problems = closureProblems(closure, {});
    assert.equal(problems.length, 2, 'src/library/a.ts, which src/index.ts names, is public; what it names is not');
    assert.match(problems[0] as string, /^src\/config\/config\.ts is internal but the public declarations reach it \(src\/index\.ts -> src\/library\/a\.ts -> src\/config\/config\.ts\): /);
    assert.match(problems[0] as string, /add src\/config\/config\.ts to CLOSURE_ALLOWLIST in scripts\/api-report\.ts/);
    assert.match(problems[1] as string, /^src\/config\/side\.ts is internal .*\(src\/index\.ts -> src\/library\/a\.ts -> src\/config\/config\.ts -> src\/config\/side\.ts\)/);
    assert.equal(closureProblems(closure, { 'src/config/config.ts': 'r', 'src/config/side.ts': 'r' }).length, 0);
  });

  test('a src/library/ file is public only when an entry names it directly', () => {
    const nested: Record<string, string> = {
      'src/index.ts': "export { a } from './library/a.ts';\n",
      'src/library/a.ts': "export type { B } from './b.ts';\n",
      'src/library/b.ts': 'export interface B {}\n',
    };
    const closure = publicClosure(['src/index.ts'], (source) => nested[source]);
    assert.deepEqual(
      closureProblems(closure, {}).map((problem) => problem.slice(0, problem.indexOf(' is internal'))),
      ['src/library/b.ts'],
    );
  });

  test('a file without declarations stops the walk with its name and the file that named it', () => {
    assert.throws(() => publicClosure(['src/index.ts'], (source) => (source === 'src/api/u.ts' ? undefined : read(source))), {
      message: 'no declarations for src/api/u.ts (named by src/api/t.ts): build with declarations first (npm run build:test or npm run build)',
    });
  });

  test('the report puts each file under a heading with its path, in the closure order', () => {
    const closure = publicClosure(['src/api/u.ts'], read);
    assert.equal(
      renderApiReport(closure, read).split('\n').slice(5).join('\n'),
      '\n## src/api/u.ts\n\n```ts\nexport type U = string;\n```\n',
    );
  });
});

describe('the report diff', () => {
  test('shows removed and added lines with context, under the line they start at', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f'].join('\n');
    const after = ['a', 'b', 'c', 'D', 'e', 'f', 'g'].join('\n');
    assert.equal(lineDiff(before, after), ['@@ line 4', ' b', ' c', '-d', '+D', ' e', ' f', '+g'].join('\n'));
    assert.equal(lineDiff('x\ny', 'x\nz\ny'), ['@@ line 2', ' x', '+z', ' y'].join('\n'));
  });
});
