// Imports between the folders of src/ only point downward: the folder graph
// built from every relative `import ... from` / `export ... from` (and bare or
// dynamic imports) has no cycle, and holds exactly the edges ALLOWED_EDGES
// lists, so a new dependency between concerns is a decision made in this file,
// not a side effect of an import. The browser dashboard (src/dashboard) is a
// separate build and is left out. The files directly in src/ are the package's
// entries (index.ts, testing.ts): each is a node of its own, on top of the
// graph; any other file there forms the node `(root)`, which must not exist.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const ROOT_NODE = '(root)';
const EXCLUDED = new Set(['dashboard']);
/** The files directly in src/ that package.json `exports` names: the public API, each its own node. */
const PUBLIC_ENTRIES: readonly string[] = ['index.ts', 'testing.ts'];
/** The only nodes that may import src/library/: the entries, the contract suites and the CLI (serve is a host). */
const LIBRARY_USERS: ReadonlySet<string> = new Set(['index.ts', 'testing.ts', 'testing', 'cli']);

type FolderGraph = Map<string, Set<string>>;
/** folder -> imported folder -> the files (relative to the repository) whose imports make that edge. */
type EdgeFiles = Map<string, Map<string, string[]>>;

/**
 * Every folder of src/ and the folders it may import from: the graph as it is.
 * A new edge fails the test until it is added here; an edge no file makes any
 * more fails it until it is removed, so the table stays exact.
 */
const ALLOWED_EDGES: Readonly<Record<string, readonly string[]>> = {
  // Public type declarations only: nothing internal, so the API report is the whole contract.
  api: [],
  time: [],
  json: [],
  files: [],
  sse: [],
  errors: [],
  schema: [],
  log: ['time'],
  guard: ['json', 'log', 'schema'],
  config: ['api', 'guard', 'json'],
  redis: ['log', 'time'],
  ops: ['api', 'log', 'time'],
  telemetry: ['api', 'config', 'errors', 'log'],
  chat: ['config', 'errors', 'json', 'schema'],
  messages: ['chat', 'errors', 'json'],
  responses: ['chat', 'errors', 'json', 'messages'],
  embeddings: ['chat', 'errors', 'json'],
  http: ['config', 'errors', 'json', 'log', 'time'],
  oidc: ['config', 'log'],
  usage: ['files'],
  audit: ['api', 'files', 'log', 'redis', 'time'],
  upstream: ['chat', 'config', 'embeddings', 'errors', 'log', 'sse', 'time'],
  routing: ['chat', 'config', 'embeddings', 'errors', 'upstream'],
  limits: ['chat', 'config', 'redis'],
  keys: ['config', 'guard', 'limits', 'log'],
  metrics: ['config', 'errors', 'http', 'log', 'routing', 'time'],
  providers: ['api', 'chat', 'config', 'embeddings', 'errors', 'messages', 'routing', 'schema', 'sse', 'time', 'upstream'],
  state: ['audit', 'config', 'errors', 'files', 'keys', 'limits', 'log', 'redis', 'time', 'usage'],
  admin: ['audit', 'config', 'errors', 'files', 'http', 'keys', 'limits', 'log', 'oidc', 'routing', 'state', 'time', 'usage'],
  gateway: ['api', 'chat', 'config', 'embeddings', 'errors', 'guard', 'http', 'json', 'keys', 'limits', 'log', 'messages', 'metrics', 'providers', 'responses', 'routing', 'sse', 'state', 'telemetry', 'time', 'upstream', 'usage'],
  cli: ['admin', 'api', 'audit', 'config', 'files', 'guard', 'keys', 'library', 'limits', 'log', 'ops', 'providers', 'redis', 'state', 'usage'],
  // The library implementation: may use any folder below it; only LIBRARY_USERS import it.
  library: ['admin', 'api', 'audit', 'chat', 'config', 'errors', 'files', 'gateway', 'guard', 'http', 'keys', 'limits', 'log', 'metrics', 'ops', 'redis', 'sse', 'state', 'telemetry', 'time'],
  // The contract suites shipped for hosts (node:test and node:assert only).
  testing: ['api', 'audit', 'chat', 'config', 'gateway', 'keys', 'limits', 'log', 'providers', 'routing', 'telemetry', 'upstream'],
  'index.ts': ['api', 'library'],
  'testing.ts': ['testing'],
};

/** Every module specifier a file imports or re-exports from. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    // import x from '...'; import { a,\n b } from '...'; export { a } from '...'; export * from '...'
    /^[ \t]*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    // import '...';
    /^[ \t]*import\s*['"]([^'"]+)['"]/gm,
    // await import('...')
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) if (match[1] !== undefined) found.push(match[1]);
  }
  return found;
}

function folderOf(srcDir: string, file: string): string {
  const relative = path.relative(srcDir, file);
  const parts = relative.split(path.sep);
  if (parts.length > 1) return parts[0] as string;
  return PUBLIC_ENTRIES.includes(relative) ? relative : ROOT_NODE;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(full));
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** folder -> the folders its files import from (itself excluded), with the files that do. */
function edgeFiles(srcDir: string): EdgeFiles {
  const edges: EdgeFiles = new Map();
  const root = path.dirname(srcDir);
  for (const file of tsFiles(srcDir).sort()) {
    const from = folderOf(srcDir, file);
    if (EXCLUDED.has(from)) continue;
    const targets = edges.get(from) ?? new Map<string, string[]>();
    edges.set(from, targets);
    for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), specifier);
      if (!target.startsWith(srcDir + path.sep)) continue;
      const to = folderOf(srcDir, target);
      if (to === from) continue;
      const files = targets.get(to) ?? [];
      targets.set(to, files);
      const relative = path.relative(root, file).split(path.sep).join('/');
      if (!files.includes(relative)) files.push(relative);
    }
  }
  return edges;
}

/**
 * The statements of a src/api/ file that would exist at run time: value
 * imports and exports, declarations of values. Types, interfaces and
 * `import type`/`export type` pass.
 */
function runtimeStatements(source: string): string[] {
  const found: string[] = [];
  for (const line of source.split('\n')) {
    if (/^(import|export)\s+type\b/.test(line) || /^export\s+(interface|type)\b/.test(line)) continue;
    if (/^(import|export|const|let|var|function|async|class|enum)\b/.test(line)) found.push(line);
  }
  return found;
}

/** folder -> the folders its files import from (itself excluded). */
function folderGraph(srcDir: string): FolderGraph {
  return graphOf(edgeFiles(srcDir));
}

function graphOf(edges: EdgeFiles): FolderGraph {
  return new Map([...edges].map(([from, targets]) => [from, new Set(targets.keys())]));
}

/**
 * How the graph differs from the table: each edge no entry allows, with a file that
 * makes it, and each allowed edge no file makes. Empty when they are the same.
 */
function edgeProblems(edges: EdgeFiles, allowed: Readonly<Record<string, readonly string[]>>): string[] {
  const problems: string[] = [];
  for (const [from, targets] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
    const permitted = Object.hasOwn(allowed, from) ? (allowed[from] as readonly string[]) : null;
    if (permitted === null) {
      problems.push(`src/${from}/ is not in ALLOWED_EDGES: add it with the folders it imports (${[...targets.keys()].sort().join(', ') || 'none'})`);
      continue;
    }
    for (const [to, files] of [...targets].sort(([a], [b]) => a.localeCompare(b))) {
      if (permitted.includes(to)) continue;
      const shown = files.length > 1 ? `${files[0]} and ${files.length - 1} more` : files[0];
      problems.push(`new edge src/${from}/ -> src/${to}/, made by ${shown}: import from a folder it may use, or add the edge to ALLOWED_EDGES if src/${to}/ is below src/${from}/`);
    }
  }
  for (const [from, permitted] of Object.entries(allowed).sort(([a], [b]) => a.localeCompare(b))) {
    for (const to of permitted) {
      if (edges.get(from)?.has(to) !== true) problems.push(`src/${from}/ -> src/${to}/ is in ALLOWED_EDGES but no file makes it any more: remove it from the table`);
    }
  }
  return problems;
}

/** One cycle as a path `a -> b -> a`, or undefined when the graph has none. */
function findCycle(graph: FolderGraph): string[] | undefined {
  const Mark = { Unvisited: 0, OnPath: 1, Done: 2 } as const;
  const marks = new Map<string, number>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    marks.set(node, Mark.OnPath);
    stack.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const mark = marks.get(next) ?? Mark.Unvisited;
      if (mark === Mark.OnPath) return [...stack.slice(stack.indexOf(next)), next];
      if (mark === Mark.Unvisited) {
        const cycle = visit(next);
        if (cycle !== undefined) return cycle;
      }
    }
    stack.pop();
    marks.set(node, Mark.Done);
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    if ((marks.get(node) ?? Mark.Unvisited) === Mark.Unvisited) {
      const cycle = visit(node);
      if (cycle !== undefined) return cycle;
    }
  }
  return undefined;
}

function render(graph: FolderGraph): string {
  return [...graph.keys()]
    .sort()
    .map((folder) => `${folder} -> ${[...(graph.get(folder) ?? [])].sort().join(', ') || '(nothing)'}`)
    .join('\n');
}

describe('folder imports', () => {
  test('no cycle between the folders of src/ (dashboard excluded)', (t) => {
    const graph = folderGraph(path.join(repositoryRoot(), 'src'));
    t.diagnostic(`folder import graph:\n${render(graph)}`);
    // The graph was read: the gateway imports the upstream layer.
    assert.ok(graph.get('gateway')?.has('upstream'));
    const cycle = findCycle(graph);
    assert.equal(cycle, undefined, `folder import cycle: ${cycle?.join(' -> ')}\n${render(graph)}`);
  });

  test('the folder graph has exactly the edges ALLOWED_EDGES lists', () => {
    const edges = edgeFiles(path.join(repositoryRoot(), 'src'));
    assert.deepEqual(edgeProblems(edges, ALLOWED_EDGES), [], `the folder graph is:\n${render(graphOf(edges))}`);
  });

  test('the edge check names a new edge with the file that made it, an unused allowed edge, and an unlisted folder', () => {
    const edges: EdgeFiles = new Map([
      ['oidc', new Map([['config', ['src/oidc/discovery.ts']], ['audit', ['src/oidc/flow.ts', 'src/oidc/jwks.ts']]])],
      ['usage', new Map([['files', ['src/usage/usage-file.ts']]])],
      ['fresh', new Map()],
    ]);
    const allowed = { oidc: ['config', 'log'], usage: ['files'] };
    assert.deepEqual(edgeProblems(edges, allowed), [
      'src/fresh/ is not in ALLOWED_EDGES: add it with the folders it imports (none)',
      'new edge src/oidc/ -> src/audit/, made by src/oidc/flow.ts and 1 more: import from a folder it may use, or add the edge to ALLOWED_EDGES if src/audit/ is below src/oidc/',
      'src/oidc/ -> src/log/ is in ALLOWED_EDGES but no file makes it any more: remove it from the table',
    ]);
    assert.deepEqual(edgeProblems(edges, { ...allowed, oidc: ['audit', 'config'], fresh: [] }), []);
  });

  test('the files that make an edge are named by their path in the repository', () => {
    const edges = edgeFiles(path.join(repositoryRoot(), 'src'));
    assert.deepEqual(edges.get('usage')?.get('files'), ['src/usage/usage-file.ts']);
  });

  // telemetry: low enough for upstream/ and gateway/ to use, so it may lean on nothing above config/.
  test('src/telemetry/ imports only json, log, errors, config and the public types', () => {
    const graph = folderGraph(path.join(repositoryRoot(), 'src'));
    assert.ok(graph.get('gateway')?.has('telemetry'), 'the gateway uses src/telemetry/');
    const allowed = new Set(['json', 'log', 'errors', 'config', 'api']);
    for (const imported of graph.get('telemetry') ?? []) assert.ok(allowed.has(imported), `src/telemetry/ imports src/${imported}/`);
  });

  test('src/api/ holds type declarations only and imports nothing from src/ outside it', () => {
    const apiDir = path.join(repositoryRoot(), 'src', 'api');
    const graph = folderGraph(path.join(repositoryRoot(), 'src'));
    assert.deepEqual([...(graph.get('api') ?? [])], []);
    const files = tsFiles(apiDir);
    assert.ok(files.length > 0, 'src/api/ has files');
    for (const file of files) {
      const problems = runtimeStatements(readFileSync(file, 'utf8'));
      assert.deepEqual(problems, [], `${path.relative(repositoryRoot(), file)} must hold only types (import type, export type, interface, type)`);
    }
  });

  test('the runtime check of src/api/ names value imports and exports, and lets types through', () => {
    const source = [
      "import type { A } from './a.ts';",
      "import { B } from './b.ts';",
      "export type { C } from './c.ts';",
      "export { D } from './d.ts';",
      'export interface E { x: A }',
      "export type F = 'f';",
      'export const G = 1;',
      'export function h(): void {}',
      'export class I {}',
      'export declare const J: number;',
      'const k = 2;',
      '  const nested = 3;',
    ].join('\n');
    assert.deepEqual(runtimeStatements(source), ["import { B } from './b.ts';", "export { D } from './d.ts';", 'export const G = 1;', 'export function h(): void {}', 'export class I {}', 'export declare const J: number;', 'const k = 2;']);
  });

  test('only the package entries, src/testing/ and src/cli/ import src/library/', () => {
    const graph = folderGraph(path.join(repositoryRoot(), 'src'));
    const users = [...graph].filter(([, targets]) => targets.has('library')).map(([from]) => from);
    assert.ok(users.includes('index.ts'), 'src/index.ts uses src/library/');
    for (const user of users) assert.ok(LIBRARY_USERS.has(user), `src/${user} imports src/library/, which only ${[...LIBRARY_USERS].join(', ')} may`);
  });

  test('the cycle finder reports the cycle path', () => {
    const graph: FolderGraph = new Map([
      ['gateway', new Set(['metrics', 'upstream'])],
      ['metrics', new Set(['gateway'])],
      ['upstream', new Set<string>()],
    ]);
    assert.deepEqual(findCycle(graph), ['gateway', 'metrics', 'gateway']);
    graph.set('metrics', new Set(['upstream']));
    assert.equal(findCycle(graph), undefined);
  });

  test('multi-line, re-export, bare and dynamic imports are all read', () => {
    const source = [
      "import {\n  a,\n  b,\n} from '../x/a.ts';",
      "import type { T } from '../y/t.ts';",
      "export { c } from '../z/c.ts';",
      "export * from './d.ts';",
      "import '../w/side.ts';",
      "const m = await import('../v/m.ts');",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    assert.deepEqual(specifiers(source).sort(), ['../v/m.ts', '../w/side.ts', '../x/a.ts', '../y/t.ts', '../z/c.ts', './d.ts', 'node:fs']);
  });

  test("the README's layout lists every folder of src/, bottom up: each imports only folders listed above it", () => {
    const root = repositoryRoot();
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Layout'));
    const block = section.slice(section.indexOf('```') + 3, section.indexOf('```', section.indexOf('```') + 3));
    // A folder is listed as `src/name/`, a package entry directly in src/ as `src/name.ts`.
    const listed = [...block.matchAll(/^src\/([a-z-]+\/|[a-z-]+\.ts\b)/gm)].map((m) => (m[1] as string).replace(/\/$/, ''));
    const srcDir = path.join(root, 'src');
    const folders = readdirSync(srcDir).filter((name) => statSync(path.join(srcDir, name)).isDirectory());
    const entries = readdirSync(srcDir).filter((name) => name.endsWith('.ts') && statSync(path.join(srcDir, name)).isFile());
    assert.deepEqual(entries.sort(), [...PUBLIC_ENTRIES].sort(), 'the only files directly in src/ are the package entries');
    assert.deepEqual([...listed].sort(), [...folders, ...entries].sort(), 'the layout names each folder of src/ and each entry once');
    assert.equal(new Set(listed).size, listed.length);
    const graph = folderGraph(srcDir);
    assert.equal(graph.has(ROOT_NODE), false, 'no module but the package entries sits directly in src/');
    for (const [index, folder] of listed.entries()) {
      const above = new Set(listed.slice(0, index));
      for (const imported of graph.get(folder) ?? []) {
        assert.ok(above.has(imported), `src/${folder}/ imports src/${imported}/, which the README lists below it`);
      }
    }
  });
});
