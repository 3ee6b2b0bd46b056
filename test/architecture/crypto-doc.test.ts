// docs/crypto.md lists every cryptographic use: each file under src/ that
// imports node:crypto must be named in it, and each src/ file it names must
// exist, so the table goes stale loudly in either direction.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const root = repositoryRoot();
const IMPORTS_CRYPTO = /^import[^;]*from 'node:crypto';/m;

function sources(at: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(at, { withFileTypes: true })) {
    const full = path.join(at, entry.name);
    if (entry.isDirectory()) out.push(...sources(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

function relative(file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

const doc = readFileSync(path.join(root, 'docs', 'crypto.md'), 'utf8');
const named = new Set([...doc.matchAll(/`(src\/[^`\s]+\.ts)`/g)].map((m) => m[1] as string));

test('every file under src/ that imports node:crypto is named in docs/crypto.md', () => {
  const importing = sources(path.join(root, 'src')).filter((file) => IMPORTS_CRYPTO.test(readFileSync(file, 'utf8'))).map(relative).sort();
  assert.ok(importing.length >= 30, `only ${importing.length} files import node:crypto: the scan is broken`);
  assert.deepEqual(importing.filter((file) => !named.has(file)), []);
});

test('every src/ file docs/crypto.md names exists', () => {
  assert.ok(named.size >= 30);
  assert.deepEqual([...named].filter((file) => !existsSync(path.join(root, file))).sort(), []);
});
