// docs/network.md "Where the code can open a connection" backs "nothing is
// fetched on its own account" with the code: every file under src/ that
// imports a module able to open a connection or start a program (node:net,
// node:tls, node:http, node:https, node:http2, node:dgram, node:dns,
// node:child_process), or calls fetch() or new WebSocket(), has a row there
// saying what it connects to ("listens only" for a server), and every row
// names such a file. A new file that could reach out fails here until it is
// written down. An `import type` loads nothing at run time and is not counted.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const root = repositoryRoot();
const MODULES = 'net|tls|http|https|http2|dgram|dns|child_process';
const STATIC_IMPORT = new RegExp(`^(?:import|export)\\s+([^;]*?)\\s*from\\s*'(?:node:)?(?:${MODULES})(?:/promises)?'`, 'gm');
const DYNAMIC_IMPORT = new RegExp(`\\b(?:import|require)\\(\\s*'(?:node:)?(?:${MODULES})(?:/promises)?'`);
const CALLS = /(?<![\w.$])fetch\s*\(|\bnew\s+WebSocket\b/;
const SECTION = '## Where the code can open a connection';

function sources(at: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(at, { withFileTypes: true })) {
    const full = path.join(at, entry.name);
    if (entry.isDirectory()) out.push(...sources(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** The source without comments (a `//` inside a string is rare enough here, and only hides what follows it on that line). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Whether `text` can open a connection or start a program at run time. */
function reachesOut(text: string): boolean {
  const body = code(text);
  if (DYNAMIC_IMPORT.test(body) || CALLS.test(body)) return true;
  for (const m of body.matchAll(STATIC_IMPORT)) {
    const clause = (m[1] as string).trim();
    if (clause.startsWith('type ')) continue;
    // `{ type A, type B }` only: types again.
    const named = /^\{([^}]*)\}$/.exec(clause);
    if (named !== null && (named[1] as string).split(',').map((s) => s.trim()).filter((s) => s !== '').every((s) => s.startsWith('type '))) continue;
    return true;
  }
  return false;
}

function documentedRows(): Map<string, string> {
  const doc = readFileSync(path.join(root, 'docs', 'network.md'), 'utf8');
  const start = doc.indexOf(SECTION);
  assert.ok(start >= 0, `docs/network.md has no section "${SECTION}"`);
  const rest = doc.slice(start + SECTION.length);
  const section = rest.slice(0, rest.search(/^## /m) < 0 ? undefined : rest.search(/^## /m));
  return new Map([...section.matchAll(/^\| `(src\/[^`]+\.ts)` \| (.*?) \|$/gm)].map((m) => [m[1] as string, (m[2] as string).trim()]));
}

test('the scan: value imports and dynamic imports of a network module, fetch() and new WebSocket count; type imports, comments and other fetches do not', () => {
  assert.deepEqual(
    [
      "import http from 'node:http';",
      "import { connect, type Socket } from 'node:net';",
      "import {\n  spawn,\n} from 'node:child_process';",
      "const dns = await import('node:dns');",
      "export { request } from 'node:https';",
      'const answer = await fetch(url);',
      'const ws = new WebSocket(url);',
      "import type { IncomingMessage } from 'node:http';",
      "import { type IncomingMessage, type ServerResponse } from 'node:http';",
      '// fetch(url) is never called here',
      '/** new WebSocket(url) */',
      'await options.fetch(url);',
      "import { readFileSync } from 'node:fs';",
    ].map(reachesOut),
    [true, true, true, true, true, true, true, false, false, false, false, false, false],
  );
});

test('every src/ file that can open a connection has a row in docs/network.md, and every row names such a file', () => {
  const reaching = sources(path.join(root, 'src'))
    .filter((file) => reachesOut(readFileSync(file, 'utf8')))
    .map((file) => path.relative(root, file).split(path.sep).join('/'))
    .sort();
  assert.ok(reaching.length >= 10, `only ${reaching.length} files found: the scan is broken`);
  const rows = documentedRows();
  assert.deepEqual(
    { withoutRow: reaching.filter((f) => !rows.has(f)), rowsForOtherFiles: [...rows.keys()].filter((f) => !reaching.includes(f)).sort() },
    { withoutRow: [], rowsForOtherFiles: [] },
    `docs/network.md "${SECTION.slice(3)}" must have exactly one row per file: | \`src/...\` | what it connects to |`,
  );
  assert.deepEqual([...rows].filter(([, what]) => what === '').map(([f]) => f), [], 'rows that do not say what the file connects to');
});
