// docs/crypto.md lists every cryptographic use. Each file under src/ that
// imports a value from node:crypto, node:tls or node:https must be named in
// its table, each src/ file it names must exist, and the rows naming a file
// must name every node:crypto function the file imports: the table goes stale
// loudly when a file starts (or stops) doing cryptography, and when what it
// does changes.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const root = repositoryRoot();
type Module = 'crypto' | 'tls' | 'https';
// `import ... from`, `export ... from`, over several lines; `import type` and `export type` bring no code.
const STATIC = /^(import|export)\s+(?!type\s)([^;]*?)\s+from\s+'node:(crypto|tls|https)';/gm;
// A module loaded any other way cannot be read here: the test asks for a static import instead.
const DYNAMIC = /(?:import|require)\(\s*'node:(?:crypto|tls|https)'\s*\)/;

/**
 * What the rows naming a file must say for each node:crypto value it imports.
 * A name missing here fails the test, so a new function is described before it lands.
 */
const CRYPTO_MENTION: Record<string, RegExp> = {
  createHash: /SHA-(1|256|384|512)/,
  createHmac: /HMAC/,
  randomBytes: /`randomBytes`/,
  randomUUID: /`randomUUID`/,
  randomFillSync: /`randomFillSync`/,
  timingSafeEqual: /`timingSafeEqual`/,
  pbkdf2: /PBKDF2/,
  scrypt: /scrypt/,
  getFips: /`crypto\.getFips\(\)`/,
  verify: /RSASSA-PKCS1-v1_5.*ECDSA/,
  // jws.ts's PSS padding and salt length.
  constants: /RSASSA-PSS/,
  createPublicKey: /`createPublicKey`/,
  createPrivateKey: /`createPrivateKey`/,
  X509Certificate: /`X509Certificate`/,
};

interface Imported {
  readonly module: Module;
  /** The value names (`createHash`; `https` for a default import), types left out. */
  readonly names: readonly string[];
}

/** The values `text` imports (or re-exports) from node:crypto, node:tls and node:https. */
function cryptoImports(text: string): Imported[] {
  const out: Imported[] = [];
  for (const match of text.matchAll(STATIC)) {
    const clause = match[2] as string;
    const module = match[3] as Module;
    const names: string[] = [];
    const braces = /\{([^}]*)\}/.exec(clause);
    for (const part of braces === null ? [] : (braces[1] as string).split(',')) {
      const words = part.trim().split(/\s+/);
      if (words[0] === '' || words[0] === 'type') continue;
      names.push(words[0] as string);
    }
    // A default or namespace import (`import https from`, `import * as crypto from`, `export * from`).
    const outside = (braces === null ? clause : clause.replace(braces[0], '')).replace(/,/g, ' ').trim();
    if (outside !== '') names.push(outside.replace(/^\*\s+as\s+/, ''));
    if (names.length > 0) out.push({ module, names });
  }
  return out;
}

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
const files = sources(path.join(root, 'src')).map((file) => ({ file: relative(file), text: readFileSync(file, 'utf8') }));

/** The table rows, joined per file their "where" cell names: a file may have several (its TLS use and its hash). */
function rowsByFile(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const row of doc.split('\n').filter((line) => line.startsWith('| '))) {
    for (const [, file] of (row.split('|')[2] ?? '').matchAll(/`(src\/[^`\s]+\.ts)`/g)) rows.set(file as string, `${rows.get(file as string) ?? ''}${row}\n`);
  }
  return rows;
}

test('cryptoImports reads values, not types, from every form of import and re-export', () => {
  const text = [
    "import { createHash, randomBytes as rb, type KeyObject } from 'node:crypto';",
    "import type { TLSSocket } from 'node:tls';",
    "import https from 'node:https';",
    'import {\n  verify as cryptoVerify,\n  constants,\n} from \'node:crypto\';',
    "export { timingSafeEqual } from 'node:crypto';",
    "export type { X509Certificate } from 'node:crypto';",
    "import * as tls from 'node:tls';",
    "import http, { type IncomingMessage } from 'node:http';",
  ].join('\n');
  assert.deepEqual(cryptoImports(text), [
    { module: 'crypto', names: ['createHash', 'randomBytes'] },
    { module: 'https', names: ['https'] },
    { module: 'crypto', names: ['verify', 'constants'] },
    { module: 'crypto', names: ['timingSafeEqual'] },
    { module: 'tls', names: ['tls'] },
  ]);
});

test('every file under src/ that imports a value from node:crypto, node:tls or node:https is named in docs/crypto.md', () => {
  const importing = files.filter(({ text }) => cryptoImports(text).length > 0).map(({ file }) => file).sort();
  assert.ok(importing.length >= 40, `only ${importing.length} files import node:crypto, node:tls or node:https: the scan is broken`);
  assert.deepEqual(importing.filter((file) => !named.has(file)), []);
  assert.deepEqual(files.filter(({ text }) => DYNAMIC.test(text)).map(({ file }) => file), [], 'load node:crypto, node:tls and node:https with a static import');
});

test('the rows naming a file name every node:crypto function it imports, and TLS for node:tls and node:https', () => {
  const rows = rowsByFile();
  const missing: string[] = [];
  for (const { file, text } of files) {
    for (const { module, names } of cryptoImports(text)) {
      for (const name of names) {
        const said = rows.get(file) ?? '';
        const mention = module === 'crypto' ? CRYPTO_MENTION[name] : /TLS/;
        if (mention === undefined) missing.push(`${file}: ${name} (not in CRYPTO_MENTION: say what it is for)`);
        else if (!mention.test(said)) missing.push(`${file}: ${name}`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test('every src/ file docs/crypto.md names exists', () => {
  assert.ok(named.size >= 30);
  assert.deepEqual([...named].filter((file) => !existsSync(path.join(root, file))).sort(), []);
});
