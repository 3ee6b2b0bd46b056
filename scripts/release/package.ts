// npm run package: the reproducible tarball of the checkout's commit. The file
// list is npm's own (`npm pack --dry-run`), so the tarball holds exactly what
// `npm pack` and `npm publish` would; the bytes are this script's: entries in
// bytewise order, modes 0644/0755, owners 0, mtime the release time (see
// source-date.ts), gzip with a fixed header. Run after a clean build (the
// npm script builds first); packageRelease is the same for a test or another
// script, with `build: true` to build first.
//
//   npm run package [-- --out DIR] [--allow-dirty]
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { sha256Hex } from './checksums.ts';
import { gzipFixed } from './gzip.ts';
import { binPaths, filesHolding, filesNotFromCommit, tarFiles, type CheckoutFile } from './package-files.ts';
import { releaseTime, type SourceDateOrigin } from './source-date.ts';
import { ustarArchive } from './tar.ts';

const run = promisify(execFile);
/** A build or an npm listing on a loaded machine can take this long. */
const STEP_MS = 300_000;

export interface PackageOptions {
  /** The checkout to pack. */
  readonly root: string;
  /** Where the tarball goes (created if missing). */
  readonly out: string;
  /** Pack even with uncommitted changes to what the tarball holds: for local tries only. */
  readonly allowDirty?: boolean;
  /** Run `npm run build` (rm -rf dist, then compile) first. */
  readonly build?: boolean;
  /** The environment: SOURCE_DATE_EPOCH, PATH for git and npm. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface PackageResult {
  /** The tarball's absolute path. */
  readonly tarball: string;
  readonly fileName: string;
  readonly sha256: string;
  readonly bytes: Buffer;
  readonly seconds: number;
  readonly origin: SourceDateOrigin;
  /** The packed paths, relative to package/, bytewise sorted. */
  readonly files: readonly string[];
  readonly manifest: Readonly<Record<string, unknown>>;
}

/** A refusal the releaser can act on; the CLI prints its message alone. */
export class ReleaseError extends Error {
  override readonly name = 'ReleaseError';
}

/** The environment of git and npm children: nothing of an `npm run` that started us (its npm_* settings would change npm's answers). */
export function childEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !name.toLowerCase().startsWith('npm_')) out[name] = value;
  return out;
}

async function git(root: string, env: Record<string, string>, args: string[]): Promise<string> {
  try {
    return (await run('git', args, { cwd: root, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    throw new ReleaseError(`git ${args.join(' ')} failed in ${root}: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}; release from a git checkout`);
  }
}

/** The tracked paths with changes (staged or not), from `git status --porcelain -z`. */
function changedPaths(porcelain: string): Set<string> {
  const changed = new Set<string>();
  const records = porcelain.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as string;
    if (record.length < 4) continue;
    changed.add(record.slice(3));
    // A rename or copy is followed by its source path.
    if (record[0] === 'R' || record[0] === 'C') changed.add(records[++i] ?? '');
  }
  return changed;
}

/** npm's file list and tarball name for the checkout as it is (`npm pack --dry-run`, no scripts, no network). */
async function npmFileList(root: string, env: Record<string, string>): Promise<{ fileName: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--offline', '--loglevel=error'], { cwd: root, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 });
  const [listing] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (listing === undefined) throw new ReleaseError(`npm pack --dry-run --json printed no listing: ${stdout.slice(0, 200)}`);
  return { fileName: listing.filename, files: listing.files.map((f) => f.path) };
}

/** Builds (when asked), then writes the reproducible tarball into options.out. */
export async function packageRelease(options: PackageOptions): Promise<PackageResult> {
  const root = path.resolve(options.root);
  const env = childEnv(options.env ?? process.env);
  const tracked = new Set((await git(root, env, ['ls-files', '-z'])).split('\0').filter((p) => p !== ''));
  const changed = changedPaths(await git(root, env, ['status', '--porcelain=v1', '-z', '--untracked-files=no']));
  if (changed.size > 0 && options.allowDirty !== true) {
    const list = [...changed].sort().slice(0, 10).join(', ');
    throw new ReleaseError(
      `the work tree has uncommitted changes to tracked files (${list}${changed.size > 10 ? ', ...' : ''}): the tarball's bytes would not come from the commit; commit or discard them (--allow-dirty packs anyway, for a local try only)`,
    );
  }
  const commitTime = await git(root, env, ['log', '-1', '--format=%ct']);
  let time: { seconds: number; origin: SourceDateOrigin };
  try {
    time = releaseTime(options.env ?? process.env, () => commitTime);
  } catch (error) {
    throw new ReleaseError((error as Error).message);
  }
  if (options.build === true) {
    try {
      await run('npm', ['run', '--silent', 'build'], { cwd: root, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      throw new ReleaseError(`npm run build failed in ${root}:\n${`${e.stdout ?? ''}${e.stderr ?? ''}`.trim()}`);
    }
  }
  const listing = await npmFileList(root, env);
  const untracked = filesNotFromCommit(listing.files, tracked, changed);
  if (untracked.length > 0 && options.allowDirty !== true) {
    throw new ReleaseError(
      `npm would pack files that are not the commit's (${untracked.slice(0, 10).join(', ')}${untracked.length > 10 ? ', ...' : ''}): commit or remove them (--allow-dirty packs anyway, for a local try only)`,
    );
  }
  const files: CheckoutFile[] = listing.files.map((file) => ({ path: file, statMode: statSync(path.join(root, file)).mode, data: readFileSync(path.join(root, file)) }));
  // Only the build's output can pick up the checkout's path; the committed files are the same wherever they are cloned (and may well name a path like /opt/portcullis).
  const holding = filesHolding(
    files.filter((file) => file.path.startsWith('dist/')),
    root,
  );
  if (holding.length > 0) {
    throw new ReleaseError(`built files hold the checkout's absolute path ${root} (${holding.slice(0, 10).join(', ')}): a rebuild elsewhere would differ; make the build refer to paths relative to the package`);
  }
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const bytes = gzipFixed(ustarArchive(tarFiles(files, binPaths(manifest)), time.seconds));
  mkdirSync(options.out, { recursive: true });
  const tarball = path.resolve(options.out, listing.fileName);
  writeFileSync(tarball, bytes);
  return {
    tarball,
    fileName: listing.fileName,
    sha256: sha256Hex(bytes),
    bytes,
    seconds: time.seconds,
    origin: time.origin,
    files: [...listing.files].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    manifest,
  };
}

/** The command line of package.js and release.js: --out DIR, --allow-dirty, and (release) --key PATH. */
export function parseReleaseArgs(args: readonly string[], allowKey: boolean): { out: string | undefined; allowDirty: boolean; key: string | undefined } {
  let out: string | undefined;
  let key: string | undefined;
  let allowDirty = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--allow-dirty') allowDirty = true;
    else if (arg === '--out' || (allowKey && arg === '--key')) {
      const value = args[++i];
      if (value === undefined || value === '') throw new ReleaseError(`${arg} needs a path after it`);
      if (arg === '--out') out = value;
      else key = value;
    } else {
      throw new ReleaseError(`unknown argument ${JSON.stringify(arg)}: the options are --out DIR, --allow-dirty${allowKey ? ', --key PATH' : ''}`);
    }
  }
  return { out, allowDirty, key };
}

/** The repository this script belongs to: dist/scripts/release/ -> the root. */
export function repositoryRootOfScript(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

/** A relative --out is relative to where the releaser ran npm (INIT_CWD), not to the package root npm moves to. */
export function outDir(root: string, out: string | undefined): string {
  if (out === undefined) return path.join(root, 'release');
  return path.resolve(process.env['INIT_CWD'] ?? process.cwd(), out);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    const args = parseReleaseArgs(process.argv.slice(2), false);
    const root = repositoryRootOfScript();
    const result = await packageRelease({ root, out: outDir(root, args.out), allowDirty: args.allowDirty });
    console.log(`${result.sha256}  ${path.relative(process.env['INIT_CWD'] ?? process.cwd(), result.tarball) || result.tarball}`);
  } catch (error) {
    if (!(error instanceof ReleaseError)) throw error;
    console.error(`package: ${error.message}`);
    process.exitCode = 1;
  }
}
