// Review of issue 34 (focus B): docs/crypto.md's table is kept honest only by
// file names (test/architecture/crypto-doc.test.ts); what a file does with
// node:crypto can change, or be left out, without a failure. This checks that
// the row naming a file names each security-relevant node:crypto function the
// file imports.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const root = repositoryRoot();
const doc = readFileSync(path.join(root, 'docs', 'crypto.md'), 'utf8');
/** What the row must say for each imported function. */
const MENTION: Record<string, RegExp> = {
  createHash: /SHA-(1|256|384|512)/,
  randomBytes: /randomBytes/,
  randomUUID: /randomUUID/,
  randomFillSync: /randomFillSync/,
  timingSafeEqual: /timingSafeEqual/,
  pbkdf2: /PBKDF2/,
  scrypt: /scrypt/,
  createHmac: /HMAC/,
};

test('each docs/crypto.md row names every node:crypto function the files in it import', () => {
  const rows = doc.split('\n').filter((line) => line.startsWith('| ') && /`src\/[^`]+\.ts`/.test(line));
  // A file may be named in several rows (its TLS use and its hash): what it imports must be said in one of them.
  const said = new Map<string, string>();
  for (const row of rows) {
    for (const [, file] of (row.split('|')[2] ?? '').matchAll(/`(src\/[^`\s]+\.ts)`/g)) said.set(file as string, `${said.get(file as string) ?? ''}${row}`);
  }
  const missing: string[] = [];
  for (const [file, rowsText] of said) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const imports = [...text.matchAll(/^import \{([^}]*)\} from 'node:crypto';/gm)].flatMap((m) => (m[1] as string).split(',').map((s) => s.trim().split(' ')[0] as string));
    for (const name of imports) {
      const mention = MENTION[name];
      if (mention !== undefined && !mention.test(rowsText)) missing.push(`${file}: ${name}`);
    }
  }
  assert.deepEqual(missing, []);
});
