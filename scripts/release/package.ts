// npm run package: the reproducible tarball of HEAD's commit and its SBOM,
// built in a pristine clone of the commit (clone.ts), never in the work tree,
// so the bytes are the commit's whatever the work tree holds. The file list is
// npm's own (`npm pack --dry-run`), so the tarball holds exactly what
// `npm pack` and `npm publish` would; the bytes are this script's: entries in
// bytewise order, modes 0644/0755 from git's index, owners 0, mtime the
// release time (source-date.ts), gzip with a fixed header.
//
//   npm run package [-- --out DIR]
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { sha256Hex } from './checksums.ts';
import { buildClone, pristineClone, STEP_MS, type Clone } from './clone.ts';
import { interruptible } from './interrupt.ts';
import { gzipFixed } from './gzip.ts';
import { releaseManifest, type ReleaseManifest } from './manifest.ts';
import { binPaths, executablePaths, filesHolding, tarFiles, type CheckoutFile } from './package-files.ts';
import { ReleaseError } from './release-error.ts';
import { sbomFileName, sbomText } from './sbom.ts';
import { releaseTime, type SourceDateOrigin } from './source-date.ts';
import { ustarArchive } from './tar.ts';

export { ReleaseError } from './release-error.ts';

const run = promisify(execFile);
type Env = Readonly<Record<string, string | undefined>>;

export interface PackOptions {
  /** The checkout whose dist/ (already built) and files are packed as they are. */
  readonly root: string;
  /** Where the tarball and the SBOM go (created if missing). */
  readonly out: string;
  /** The environment: SOURCE_DATE_EPOCH, PATH for git and npm. */
  readonly env?: Env;
}

export interface PackageOptions extends PackOptions {
  /** Where the temporary clone goes: the system's temporary folder by default. */
  readonly tmpParent?: string;
}

export interface PackageResult {
  /** The tarball's absolute path. */
  readonly tarball: string;
  readonly fileName: string;
  readonly sha256: string;
  readonly bytes: Buffer;
  /** The SBOM's absolute path and bytes. */
  readonly sbom: string;
  readonly sbomBytes: Buffer;
  readonly seconds: number;
  readonly origin: SourceDateOrigin;
  /** The commit id packed (the checkout's HEAD). */
  readonly commit: string;
  /** The packed paths, relative to package/, bytewise sorted. */
  readonly files: readonly string[];
  readonly manifest: ReleaseManifest;
}

/** The environment of git and npm children: nothing of an `npm run` that started us (its npm_* settings would change npm's answers). */
export function childEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !name.toLowerCase().startsWith('npm_')) out[name] = value;
  return out;
}

async function git(root: string, env: Record<string, string>, args: string[]): Promise<string> {
  try {
    return (await run('git', args, { cwd: root, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    throw new ReleaseError(`git ${args.join(' ')} failed in ${root}: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}; release from a git checkout with a commit`);
  }
}

/** The paths `git status --porcelain -z` reports (changed, staged, untracked; renames by both names), sorted. */
export function statusPaths(porcelain: string): string[] {
  const paths = new Set<string>();
  const records = porcelain.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as string;
    if (record.length < 4) continue;
    paths.add(record.slice(3));
    // A rename or copy is followed by its source path.
    if (record[0] === 'R' || record[0] === 'C') paths.add(records[++i] ?? '');
  }
  return [...paths].sort();
}

/** What the work tree holds beyond HEAD's commit that git shows (changes and untracked files; ignored ones are left out). */
export async function workTreeChanges(root: string, env: Env): Promise<string[]> {
  return statusPaths(await git(path.resolve(root), childEnv(env), ['status', '--porcelain=v1', '-z', '--untracked-files=all']));
}

/** HEAD's commit id and the release time (SOURCE_DATE_EPOCH, else the commit's time) of a checkout. */
async function headOf(root: string, env: Env): Promise<{ commit: string; seconds: number; origin: SourceDateOrigin }> {
  const children = childEnv(env);
  const commit = (await git(root, children, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
  const commitTime = await git(root, children, ['log', '-1', '--format=%ct', commit]);
  try {
    return { commit, ...releaseTime(env, () => commitTime) };
  } catch (error) {
    throw new ReleaseError((error as Error).message);
  }
}

/** npm's file list and tarball name for the checkout as it is (`npm pack --dry-run`, no scripts, no network). */
async function npmFileList(root: string, env: Record<string, string>): Promise<{ fileName: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--offline', '--loglevel=error'], { cwd: root, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 });
  const [listing] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (listing === undefined) throw new ReleaseError(`npm pack --dry-run --json printed no listing: ${stdout.slice(0, 200)}`);
  return { fileName: listing.filename, files: listing.files.map((f) => f.path) };
}

function parseManifest(text: string, where: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ReleaseError(`${where} is not JSON (${(error as Error).message}): fix it and commit`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ReleaseError(`${where} is not a JSON object: fix it and commit`);
  return parsed as Record<string, unknown>;
}

/**
 * Packs a checkout's dist/ and files exactly as they are, with the same file
 * list, modes, tar and gzip as a release, and writes its SBOM. Production
 * paths call it on a pristine clone only (packageRelease); on a work tree its
 * output is that work tree's build, not a release.
 */
export async function packCheckout(options: PackOptions): Promise<PackageResult> {
  const root = path.resolve(options.root);
  const env = options.env ?? process.env;
  const children = childEnv(env);
  const raw = parseManifest(readFileSync(path.join(root, 'package.json'), 'utf8'), `${root}/package.json`);
  const manifest = releaseManifest(raw);
  const head = await headOf(root, env);
  const listing = await npmFileList(root, children);
  const executable = executablePaths(await git(root, children, ['ls-files', '-s', '-z']));
  const files: CheckoutFile[] = listing.files.map((file) => ({ path: file, executable: executable.has(file), data: readFileSync(path.join(root, file)) }));
  // Only the build's output can pick up the checkout's path; the committed files are the same wherever they are cloned (and may well name a path like /opt/portcullis).
  const built = files.filter((file) => file.path.startsWith('dist/'));
  for (const needle of new Set([root, realpathSync(root)])) {
    const holding = filesHolding(built, needle);
    if (holding.length > 0) {
      throw new ReleaseError(`built files hold the build's absolute path ${needle} (${holding.slice(0, 10).join(', ')}): a rebuild elsewhere would differ; make the build refer to paths relative to the package`);
    }
  }
  const bytes = gzipFixed(ustarArchive(tarFiles(files, binPaths(raw)), head.seconds));
  const sha256 = sha256Hex(bytes);
  const sbomBytes = Buffer.from(sbomText({ ...manifest, tarballSha256: sha256, seconds: head.seconds, commit: head.commit }));
  mkdirSync(options.out, { recursive: true });
  const tarball = path.resolve(options.out, listing.fileName);
  const sbom = path.resolve(options.out, sbomFileName(manifest.name, manifest.version));
  writeFileSync(tarball, bytes);
  writeFileSync(sbom, sbomBytes);
  return {
    tarball,
    fileName: listing.fileName,
    sha256,
    bytes,
    sbom,
    sbomBytes,
    seconds: head.seconds,
    origin: head.origin,
    commit: head.commit,
    files: [...listing.files].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    manifest,
  };
}

/**
 * The release's tarball and SBOM of HEAD's commit: checks the release time
 * and package.json of the commit, clones the commit afresh, builds and packs
 * there, and removes the clone (also on failure, and on Ctrl-C, SIGTERM or SIGHUP). The work tree's changes
 * are never packed.
 */
export async function packageRelease(options: PackageOptions): Promise<PackageResult> {
  const root = path.resolve(options.root);
  const env = options.env ?? process.env;
  const children = childEnv(env);
  const head = await headOf(root, env);
  releaseManifest(parseManifest(await git(root, children, ['show', `${head.commit}:package.json`]), `package.json of commit ${head.commit}`));
  const interrupt = interruptible();
  let clone: Clone | undefined;
  try {
    clone = await pristineClone(root, head.commit, children, options.tmpParent, interrupt.signal);
    await buildClone(clone.dir, children, interrupt.signal);
    if (interrupt.signal.aborted) throw interrupt.signal.reason;
    return await packCheckout({ root: clone.dir, out: path.resolve(options.out), env });
  } finally {
    clone?.remove();
    interrupt.end();
  }
}

/** The line telling the releaser the release time and where it came from. */
export function releaseTimeNote(seconds: number, origin: SourceDateOrigin): string {
  return origin === 'commit'
    ? `release time ${seconds} (the commit's time)`
    : `release time ${seconds} from SOURCE_DATE_EPOCH, not the commit's: publish it with the release (the SBOM records it)`;
}

/** The command line of package.js and release.js: --out DIR and (release) --key PATH. */
export function parseReleaseArgs(args: readonly string[], allowKey: boolean): { out: string | undefined; key: string | undefined } {
  let out: string | undefined;
  let key: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--out' || (allowKey && arg === '--key')) {
      const value = args[++i];
      if (value === undefined || value === '' || value.startsWith('--')) throw new ReleaseError(`${arg} needs a path after it${value?.startsWith('--') === true ? `, not the option ${value}` : ''}`);
      if (arg === '--out') out = value;
      else key = value;
    } else if (arg === '--allow-dirty') {
      throw new ReleaseError(
        allowKey
          ? '--allow-dirty is refused: a release is of a clean work tree; commit or discard the changes (npm run package packs HEAD\'s commit for a local try)'
          : "--allow-dirty is not needed: npm run package always packs HEAD's commit, never the work tree's changes; leave it out",
      );
    } else {
      throw new ReleaseError(`unknown argument ${JSON.stringify(arg)}: the options are --out DIR${allowKey ? ', --key PATH' : ''}`);
    }
  }
  return { out, key };
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

/** A path as the releaser typed it: relative to where npm ran. */
export function shown(file: string): string {
  return path.relative(process.env['INIT_CWD'] ?? process.cwd(), file) || file;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    const args = parseReleaseArgs(process.argv.slice(2), false);
    const root = repositoryRootOfScript();
    const changes = await workTreeChanges(root, process.env);
    if (changes.length > 0) {
      console.error(`package: the work tree's changes are NOT in the tarball (${changes.slice(0, 10).join(', ')}${changes.length > 10 ? ', ...' : ''}): it packs HEAD's commit; commit them to pack them`);
    }
    const result = await packageRelease({ root, out: outDir(root, args.out) });
    console.error(`package: ${releaseTimeNote(result.seconds, result.origin)}`);
    console.log(`${result.sha256}  ${shown(result.tarball)}`);
    console.log(`${sha256Hex(result.sbomBytes)}  ${shown(result.sbom)}`);
  } catch (error) {
    if (!(error instanceof ReleaseError)) throw error;
    console.error(`package: ${error.message}`);
    process.exitCode = 1;
  }
}
