// The README's two commands (run, test) are what the project's files make
// work on a fresh clone: .ci/run runs exactly the test command first; the run
// command installs only the build's packages (npm start builds, then execs
// node so npm's signals reach the gateway); nothing builds at install; and no
// page tells a reader to run `npx portcullis`, which would fetch whatever the
// registry has under that name.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const root = repositoryRoot();
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The shell blocks of the README's "Two commands" section, in order. */
function twoCommands(): string[] {
  const start = readme.indexOf('\n## Two commands\n');
  assert.ok(start >= 0, 'README.md has a "## Two commands" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const untilSubsection = section.split('\n### ')[0] ?? '';
  return [...untilSubsection.matchAll(/^```sh\n([^\n]*)\n```$/gm)].map((m) => m[1] ?? '');
}

test('the README gives the run command, then the test command; .ci/run runs the test command first', () => {
  const commands = twoCommands();
  assert.equal(commands.length, 2, `two one-line sh blocks: ${JSON.stringify(commands)}`);
  const [run, testCommand] = commands as [string, string];
  assert.equal(run, 'npm ci && npm start');
  assert.match(testCommand, /npm ci --prefix test && npm test$/);
  const ci = readFileSync(path.join(root, '.ci', 'run'), 'utf8');
  const first = /^\{ (.*); \} 2>&1 \| tee /m.exec(ci)?.[1];
  assert.equal(first, testCommand, '.ci/run runs exactly the README test command first');
  const otherLines = ci.search(/^\s+\.ci\/with-node "\$version" npm test/m);
  assert.ok(otherLines > ci.indexOf(testCommand), 'then npm test on the other Node.js lines');
});

test('the run command installs only what the build needs, and npm start builds before it serves', () => {
  assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');
  assert.deepEqual(Object.keys(manifest.devDependencies).sort(), ['@types/node', 'typescript']);
  assert.match(manifest.scripts['start'] ?? '', /^npm run --silent build:start && exec node dist\/src\/cli\/main\.js serve$/);
  // Incremental for starts; the production build stays clean (dist/ emptied first).
  assert.match(manifest.scripts['build:start'] ?? '', /^tsc -p tsconfig\.build\.json --incremental --tsBuildInfoFile dist\/\.start\.tsbuildinfo && /);
  assert.match(manifest.scripts['build'] ?? '', /^rm -rf dist && tsc -p tsconfig\.build\.json && /);
  for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) {
    assert.equal(manifest.scripts[hook], undefined, `no ${hook} script: nothing runs when the package is installed`);
  }
  assert.match(manifest.scripts['prepack'] ?? '', /npm run --silent build/, 'npm pack packs a fresh build');
});

test('no page tells the reader to run npx portcullis', () => {
  const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const page of pages) {
    const text = readFileSync(path.join(root, page), 'utf8');
    assert.doesNotMatch(text, /npx\s+portcullis/, page);
  }
});
