// The public API report: the declarations (.d.ts) of the package's two entries
// (src/index.ts, src/testing.ts) and of every file they reach, each under a
// heading with its source path, in a fixed order, written to
// api/portcullis.api.md. The report is checked in, so a change to the public
// surface shows up in review as a diff of that file; test/package/api-report
// fails when the built declarations and the report differ, and when the
// surface reaches past the public folders.
//
// Run after a build that emits declarations (npm run build, or build:test):
//   node dist/scripts/api-report.js        (npm run api:report)
// TypeScript's native compiler has no JavaScript API to walk declarations, so
// the closure is read from the import specifiers of the emitted .d.ts files.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The entries of package.json `exports`, by source path; the report lists them first, in this order. */
export const PUBLIC_ENTRIES: readonly string[] = ['src/index.ts', 'src/testing.ts'];

/** Where the report lives, relative to the repository. */
export const API_REPORT_FILE = 'api/portcullis.api.md';

/**
 * Files the public declarations may reach besides the public ones by design
 * (isPublicFile), each with the reason it is public. Anything else in the
 * closure is internal code leaking into the API: name a src/api type in the
 * signature instead, or add the file here with its reason.
 */
export const CLOSURE_ALLOWLIST: Readonly<Record<string, string>> = {};

/**
 * True for the files the public surface is made of by design: the entries,
 * src/api/ (the types), src/testing/ (the contract suites), and a src/library/
 * file an entry names directly: the home of a runtime value the entry exports
 * (checkConfig, createGateway), whose declarations in turn may name only files
 * public by this rule or the allowlist.
 */
export function isPublicFile(source: string, namedBy: string | null = null): boolean {
  if (PUBLIC_ENTRIES.includes(source) || source.startsWith('src/api/') || source.startsWith('src/testing/')) return true;
  return source.startsWith('src/library/') && namedBy !== null && PUBLIC_ENTRIES.includes(namedBy);
}

/** The relative module specifiers of a declaration file: imports, re-exports and import("...") types. */
export function relativeSpecifiers(declarations: string): string[] {
  const found = new Set<string>();
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /^[ \t]*import\s*['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) {
    for (const match of declarations.matchAll(pattern)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('./') || specifier.startsWith('../')) found.add(specifier);
    }
  }
  return [...found];
}

/** The source path (`src/x/y.ts`) a specifier in `from`'s declarations names: `.ts`, `.js` or `.d.ts` alike. */
export function sourceOf(from: string, specifier: string): string {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return target.replace(/(\.d)?\.(ts|js)$/, '.ts');
}

/** `src/x.ts` -> `dist/src/x.d.ts`, relative to the repository. */
export function declarationFileOf(source: string): string {
  return path.posix.join('dist', source.replace(/\.ts$/, '.d.ts'));
}

export interface Closure {
  /** Source paths: the entries first, then every other file reached, sorted. */
  readonly files: readonly string[];
  /** Each file reached, with the file whose declarations first named it (entries: null). */
  readonly reachedFrom: ReadonlyMap<string, string | null>;
}

/**
 * Every file the entries' declarations reach. `read` returns the declarations
 * of a source path, or undefined when the build emitted none (an error naming
 * the file: the report must not silently shrink).
 */
export function publicClosure(entries: readonly string[], read: (source: string) => string | undefined): Closure {
  const reachedFrom = new Map<string, string | null>(entries.map((entry) => [entry, null]));
  const queue = [...entries];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const text = read(next);
    if (text === undefined) {
      const via = reachedFrom.get(next);
      throw new Error(`no declarations for ${next}${via === null || via === undefined ? '' : ` (named by ${via})`}: build with declarations first (npm run build:test or npm run build)`);
    }
    for (const specifier of relativeSpecifiers(text)) {
      const target = sourceOf(next, specifier);
      if (reachedFrom.has(target)) continue;
      reachedFrom.set(target, next);
      queue.push(target);
    }
  }
  const rest = [...reachedFrom.keys()].filter((file) => !entries.includes(file)).sort();
  return { files: [...entries, ...rest], reachedFrom };
}

/** The chain of files from an entry to `file`: `src/index.ts -> src/library/x.ts -> src/config/y.ts`. */
export function chainTo(closure: Closure, file: string): string {
  const chain = [file];
  for (let via = closure.reachedFrom.get(file); via !== null && via !== undefined; via = closure.reachedFrom.get(via)) chain.unshift(via);
  return chain.join(' -> ');
}

/** One line per file in the closure that is neither public by design nor allowlisted, with how it is reached. */
export function closureProblems(closure: Closure, allowlist: Readonly<Record<string, string>>): string[] {
  return closure.files
    .filter((file) => !isPublicFile(file, closure.reachedFrom.get(file) ?? null) && !Object.hasOwn(allowlist, file))
    .map((file) => `${file} is internal but the public declarations reach it (${chainTo(closure, file)}): name a src/api type in the signature instead, or add ${file} to CLOSURE_ALLOWLIST in scripts/api-report.ts with the reason it is public`);
}

/** The report: a header, then each file's declarations under its source path. */
export function renderApiReport(closure: Closure, read: (source: string) => string | undefined): string {
  const parts = [
    '# portcullis: public API report',
    '',
    'The declarations of the package entries (`portcullis`: src/index.ts, `portcullis/testing`: src/testing.ts)',
    'and of every file they reach. Written by `npm run api:report`; do not edit by hand. A change here is a',
    'change to the public API.',
  ];
  for (const file of closure.files) {
    const text = (read(file) ?? '').replace(/\r\n/g, '\n').replace(/^\/\/# sourceMappingURL=.*$/gm, '').trimEnd();
    parts.push('', `## ${file}`, '', '```ts', text, '```');
  }
  return `${parts.join('\n')}\n`;
}

/** The declarations of a source path in a repository's dist/, or undefined when there are none. */
export function declarationsIn(root: string): (source: string) => string | undefined {
  return (source) => {
    const file = path.join(root, declarationFileOf(source));
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  };
}

/** The report for the repository at `root`, from its built declarations. */
export function buildApiReport(root: string): { report: string; closure: Closure } {
  const read = declarationsIn(root);
  const closure = publicClosure(PUBLIC_ENTRIES, read);
  return { report: renderApiReport(closure, read), closure };
}

/**
 * A line diff of two texts (- expected, + actual), with two lines of context
 * around each change, each hunk headed by its line in the expected text.
 */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  // Common prefix and suffix first: a report usually changes in one place.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const ops = midA.length * midB.length > 4_000_000 ? [...midA.map((line) => `-${line}`), ...midB.map((line) => `+${line}`)] : lcsOps(midA, midB);
  const CONTEXT = 2;
  const lines: string[] = [`@@ line ${start + 1}`];
  for (const line of a.slice(Math.max(0, start - CONTEXT), start)) lines.push(` ${line}`);
  lines.push(...ops);
  for (const line of a.slice(endA, endA + CONTEXT)) lines.push(` ${line}`);
  return lines.join('\n');
}

/** The edit script of two line lists by longest common subsequence: ' ' kept, '-' removed, '+' added. */
function lcsOps(a: readonly string[], b: readonly string[]): string[] {
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? (table[(i + 1) * width + j + 1] as number) + 1 : Math.max(table[(i + 1) * width + j] as number, table[i * width + j + 1] as number);
    }
  }
  const ops: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push(` ${a[i]}`);
      i++;
      j++;
    } else if ((table[(i + 1) * width + j] as number) >= (table[i * width + j + 1] as number)) {
      ops.push(`-${a[i++]}`);
    } else {
      ops.push(`+${b[j++]}`);
    }
  }
  while (i < a.length) ops.push(`-${a[i++]}`);
  while (j < b.length) ops.push(`+${b[j++]}`);
  return ops;
}

/** The repository this script belongs to: dist/scripts/ -> the root. */
function repositoryRootOfScript(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const root = repositoryRootOfScript();
  const { report, closure } = buildApiReport(root);
  const problems = closureProblems(closure, CLOSURE_ALLOWLIST);
  writeFileSync(path.join(root, API_REPORT_FILE), report);
  console.log(`wrote ${API_REPORT_FILE}: ${closure.files.length} files`);
  for (const problem of problems) console.error(`api-report: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
}
