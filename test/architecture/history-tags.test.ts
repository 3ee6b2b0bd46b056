// History lives in commits and closing notes, never in source comments or
// user docs: no tags naming an issue number, a lead session or a helper
// anywhere in the project's own files.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const SCANNED = ['src', 'test', 'bench', 'scripts', 'api', 'docs', 'deploy', 'README.md'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', 'test-output']);
const TAG = /\bissues? ?#?\d+\b|\bi\d{2}-lead\b|\(helper [A-Z]\)/i;

function files(at: string): string[] {
  const entries = readdirSync(at, { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries) {
    const full = path.join(at, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...files(full));
    } else if (/\.(ts|md|json|sh|service|socket|conf|html|css)$/.test(entry.name)) {
      out.push(full);
    }
  }
  return out;
}

/** Every line with a history tag, as `file:line: text`. */
function historyTags(root: string): string[] {
  const found: string[] = [];
  for (const name of SCANNED) {
    const at = path.join(root, name);
    const list = name.includes('.') ? [at] : files(at);
    for (const file of list) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (TAG.test(line)) found.push(`${path.relative(root, file)}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
  }
  return found;
}

test('no history tags in source, tests, benchmarks or docs', () => {
  assert.deepEqual(historyTags(repositoryRoot()), []);
});

test('the scan finds a tag of each kind', () => {
  // Joined here, so that this file holds no tag itself.
  const tagged = [['// fixed in issue', '27'], ['// see issues', '#12'], ['// i15', 'lead: redone'], ['// (helper', 'B) wrote this']];
  for (const [a, b] of tagged) assert.match(`${a}${b?.startsWith('lead') ? '-' : ' '}${b}`, TAG);
  for (const line of ['// the issuer claim', '// 27 issues of the pool', '// helper functions']) assert.doesNotMatch(line, TAG);
});
