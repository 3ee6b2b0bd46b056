// docs/clients.md and docs/embeddings.md show each example of docs/clients/
// verbatim, so the pages cannot drift from the code the other tests in this
// folder run; and the versions they say were tested are the ones
// test/package.json installs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot, snippetPath } from './client-snippets.ts';

const root = repositoryRoot();

/** Every example file, the page that shows it, and the test that runs it (openai-python.py is documentation only). */
const EXAMPLES: Record<string, { page: string; test: string }> = {
  'openai-node.mjs': { page: 'clients.md', test: 'openai-node.test.ts' },
  'openai-errors.mjs': { page: 'clients.md', test: 'openai-node.test.ts' },
  'openai-structured.mjs': { page: 'clients.md', test: 'openai-structured.test.ts' },
  'openai-python.py': { page: 'clients.md', test: 'not run: documentation only' },
  'ai-sdk.mjs': { page: 'clients.md', test: 'ai-sdk.test.ts' },
  'ai-sdk-tools.mjs': { page: 'clients.md', test: 'ai-sdk.test.ts' },
  'ai-sdk-errors.mjs': { page: 'clients.md', test: 'ai-sdk.test.ts' },
  'ai-sdk-images.mjs': { page: 'clients.md', test: 'ai-sdk-images.test.ts' },
  'ai-sdk-structured.mjs': { page: 'clients.md', test: 'ai-sdk-structured.test.ts' },
  'langchain.mjs': { page: 'clients.md', test: 'langchain.test.ts' },
  'langchain-structured.mjs': { page: 'clients.md', test: 'langchain-structured.test.ts' },
  'openai-embeddings.mjs': { page: 'embeddings.md', test: 'embeddings-openai.test.ts' },
  'ai-sdk-embeddings.mjs': { page: 'embeddings.md', test: 'embeddings-ai-sdk.test.ts' },
  'langchain-embeddings.mjs': { page: 'embeddings.md', test: 'embeddings-langchain.test.ts' },
};

const PAGES = [...new Set(Object.values(EXAMPLES).map((e) => e.page))];

function pageText(page: string): string {
  return readFileSync(path.join(root, 'docs', page), 'utf8');
}

function examplesOf(page: string): string[] {
  return Object.keys(EXAMPLES).filter((file) => EXAMPLES[file]?.page === page);
}

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

test('each example appears verbatim on its page, in a fenced block of its language', () => {
  for (const file of Object.keys(EXAMPLES)) {
    const page = EXAMPLES[file]?.page ?? '';
    const blocks = fencedBlocks(pageText(page));
    const code = readFileSync(snippetPath(file), 'utf8');
    const language = FENCE_LANGUAGE[path.extname(file)];
    const shown = blocks.filter((b) => b.body === code);
    assert.equal(shown.length, 1, `docs/clients/${file} must appear exactly once, verbatim, on docs/${page}`);
    assert.equal(shown[0]?.language, language, `docs/clients/${file} is shown as ${language}`);
  }
});

test('each example names its own file on its first line, and each such block on the page has its file', () => {
  for (const file of Object.keys(EXAMPLES)) {
    const firstLine = readFileSync(snippetPath(file), 'utf8').split('\n', 1)[0] ?? '';
    assert.match(firstLine, new RegExp(`^(//|#) docs/clients/${file.replace('.', '\\.')}: `));
  }
  for (const page of PAGES) {
    const named = fencedBlocks(pageText(page))
      .map((b) => /^(?:\/\/|#) docs\/clients\/([\w.-]+):/.exec(b.body)?.[1])
      .filter((name) => name !== undefined);
    assert.deepEqual(named.sort(), examplesOf(page).sort(), `the examples shown on docs/${page}`);
  }
});

/** Each package a page says was tested, with the version it names. */
function testedVersions(page: string): Map<string, string> {
  const named = new Map<string, string>();
  for (const sentence of pageText(page).matchAll(/\(tested with ([^)]*)\)/g)) {
    for (const pair of (sentence[1] ?? '').matchAll(/(@?[\w./-]+) (\d+\.\d+\.\d+)/g)) named.set(pair[1] ?? '', pair[2] ?? '');
  }
  return named;
}

test('the versions the pages say were tested are the installed test packages', () => {
  const dev = (JSON.parse(readFileSync(path.join(root, 'test', 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
  assert.deepEqual([...testedVersions('clients.md').keys()].sort(), ['@ai-sdk/openai-compatible', '@langchain/core', '@langchain/openai', 'ai', 'openai', 'zod']);
  assert.deepEqual([...testedVersions('embeddings.md').keys()].sort(), ['@ai-sdk/openai-compatible', '@langchain/openai', 'ai', 'openai']);
  for (const page of PAGES) {
    for (const [name, version] of testedVersions(page)) assert.equal(version, dev[name], `docs/${page} says ${name} ${version} was tested`);
  }
});
