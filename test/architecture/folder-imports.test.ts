// Imports between the folders of src/ only point downward: the folder graph
// built from every relative `import ... from` / `export ... from` (and bare or
// dynamic imports) has no cycle, and holds exactly the edges ALLOWED_EDGES
// lists, so a new dependency between concerns is a decision made in this file,
// not a side effect of an import. The browser dashboard (src/dashboard) is a
// separate build and is left out. Files directly in src/ (errors.ts) form the
// node `(root)`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';

const ROOT_NODE = '(root)';
const EXCLUDED = new Set(['dashboard']);

type FolderGraph = Map<string, Set<string>>;
/** folder -> imported folder -> the files (relative to the repository) whose imports make that edge. */
type EdgeFiles = Map<string, Map<string, string[]>>;

/**
 * Every folder of src/ and the folders it may import from: the graph as it is.
 * A new edge fails the test until it is added here; an edge no file makes any
 * more fails it until it is removed, so the table stays exact.
 */
const ALLOWED_EDGES: Readonly<Record<string, readonly string[]>> = {
  api: [],
  time: [],
  json: [],
  files: [],
  sse: [],
  errors: [],
  schema: [],
  log: ['time'],
  guard: ['json', 'log', 'schema'],
  config: ['guard', 'json'],
  redis: ['log', 'time'],
  ops: ['log', 'time'],
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
  providers: ['chat', 'config', 'embeddings', 'errors', 'messages', 'routing', 'schema', 'sse', 'time', 'upstream'],
  state: ['audit', 'config', 'errors', 'files', 'keys', 'limits', 'log', 'redis', 'time', 'usage'],
  admin: ['audit', 'config', 'errors', 'files', 'http', 'keys', 'limits', 'log', 'oidc', 'routing', 'state', 'time', 'usage'],
  gateway: ['api', 'chat', 'config', 'embeddings', 'errors', 'guard', 'http', 'json', 'keys', 'limits', 'log', 'messages', 'metrics', 'providers', 'responses', 'routing', 'sse', 'state', 'telemetry', 'time', 'upstream', 'usage'],
  testing: ['api', 'audit', 'config', 'gateway', 'keys', 'limits', 'log', 'telemetry'],
  library: ['api', 'audit', 'config', 'errors', 'gateway', 'guard', 'limits', 'log', 'state', 'telemetry'],
  cli: ['admin', 'audit', 'config', 'files', 'gateway', 'guard', 'http', 'keys', 'limits', 'log', 'metrics', 'ops', 'providers', 'redis', 'state', 'time', 'usage'],
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
  return parts.length === 1 ? ROOT_NODE : (parts[0] as string);
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
    const listed = [...block.matchAll(/^src\/([a-z-]+)\//gm)].map((m) => m[1] as string);
    const srcDir = path.join(root, 'src');
    const folders = readdirSync(srcDir).filter((name) => statSync(path.join(srcDir, name)).isDirectory());
    assert.deepEqual([...listed].sort(), folders.sort(), 'the layout names each folder of src/ once');
    assert.equal(new Set(listed).size, listed.length);
    const graph = folderGraph(srcDir);
    assert.equal(graph.has(ROOT_NODE), false, 'no module sits directly in src/');
    for (const [index, folder] of listed.entries()) {
      const above = new Set(listed.slice(0, index));
      for (const imported of graph.get(folder) ?? []) {
        assert.ok(above.has(imported), `src/${folder}/ imports src/${imported}/, which the README lists below it`);
      }
    }
  });
});
