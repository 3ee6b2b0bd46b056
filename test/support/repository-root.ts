// The checkout's root, for tests that read its files (docs, deploy examples) or
// write beside them (screenshots): the nearest folder above the running test
// file holding portcullis's package.json, so it works from test/ under tsx and
// from dist/test/ compiled.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SEARCH_LEVELS = 6;

export function repositoryRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < SEARCH_LEVELS; level++) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'portcullis') return dir;
    dir = path.dirname(dir);
  }
  throw new Error('the portcullis package.json was not found above the test file');
}
