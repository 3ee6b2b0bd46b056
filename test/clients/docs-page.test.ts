// docs/clients.md shows each example of docs/clients/ verbatim, so the page
// cannot drift from the code the other tests in this folder run; and the
// versions it says were tested are the ones test/package.json installs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot, snippetPath } from './client-snippets.ts';

const root = repositoryRoot();
const page = readFileSync(path.join(root, 'docs', 'clients.md'), 'utf8');

/** Every example file and the test that runs it (openai-python.py is documentation only). */
const EXAMPLES: Record<string, string> = {
  'openai-node.mjs': 'openai-node.test.ts',
  'openai-errors.mjs': 'openai-node.test.ts',
  'openai-structured.mjs': 'openai-structured.test.ts',
  'openai-python.py': 'not run: documentation only',
  'ai-sdk.mjs': 'ai-sdk.test.ts',
  'ai-sdk-tools.mjs': 'ai-sdk.test.ts',
  'ai-sdk-errors.mjs': 'ai-sdk.test.ts',
  'ai-sdk-images.mjs': 'ai-sdk-images.test.ts',
  'ai-sdk-structured.mjs': 'ai-sdk-structured.test.ts',
  'langchain.mjs': 'langchain.test.ts',
  'langchain-structured.mjs': 'langchain-structured.test.ts',
};

const FENCE_LANGUAGE: Record<string, string> = { '.mjs': 'js', '.py': 'python' };

/** The fenced code blocks of a Markdown text: language and exact body. */
function fencedBlocks(markdown: string): Array<{ language: string; body: string }> {
  const blocks: Array<{ language: string; body: string }> = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(markdown); match !== null; match = fence.exec(markdown)) {
    blocks.push({ language: match[1] ?? '', body: match[2] ?? '' });
  }
  return blocks;
}

test('docs/clients/ holds exactly the known examples', () => {
  assert.deepEqual(readdirSync(path.join(root, 'docs', 'clients')).sort(), Object.keys(EXAMPLES).sort());
});

test('each example appears verbatim on the page, in a fenced block of its language', () => {
  const blocks = fencedBlocks(page);
  for (const file of Object.keys(EXAMPLES)) {
    const code = readFileSync(snippetPath(file), 'utf8');
    const language = FENCE_LANGUAGE[path.extname(file)];
    const shown = blocks.filter((b) => b.body === code);
    assert.equal(shown.length, 1, `docs/clients/${file} must appear exactly once, verbatim, on docs/clients.md`);
    assert.equal(shown[0]?.language, language, `docs/clients/${file} is shown as ${language}`);
  }
});

test('each example names its own file on its first line, and each such block on the page has its file', () => {
  for (const file of Object.keys(EXAMPLES)) {
    const firstLine = readFileSync(snippetPath(file), 'utf8').split('\n', 1)[0] ?? '';
    assert.match(firstLine, new RegExp(`^(//|#) docs/clients/${file.replace('.', '\\.')}: `));
  }
  const named = fencedBlocks(page)
    .map((b) => /^(?:\/\/|#) docs\/clients\/([\w.-]+):/.exec(b.body)?.[1])
    .filter((name) => name !== undefined);
  assert.deepEqual(named.sort(), Object.keys(EXAMPLES).sort());
});

test('the versions the page says were tested are the installed test packages', () => {
  const dev = (JSON.parse(readFileSync(path.join(root, 'test', 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
  const named = new Map<string, string>();
  for (const sentence of page.matchAll(/\(tested with ([^)]*)\)/g)) {
    for (const pair of (sentence[1] ?? '').matchAll(/(@?[\w./-]+) (\d+\.\d+\.\d+)/g)) named.set(pair[1] ?? '', pair[2] ?? '');
  }
  assert.deepEqual([...named.keys()].sort(), ['@ai-sdk/openai-compatible', '@langchain/core', '@langchain/openai', 'ai', 'openai', 'zod']);
  for (const [name, version] of named) assert.equal(version, dev[name], `the page says ${name} ${version} was tested`);
});
