// A pristine checkout of one commit to build a release in: a fresh clone into
// a temporary directory, never the releaser's work tree, so nothing the work
// tree holds beyond the commit gets in (untracked or ignored files, changes
// hidden by --skip-worktree or --assume-unchanged, CRLF from core.autocrlf, an
// execute bit core.fileMode=false ignores). The clone reads no user or system
// git config (a global smudge filter or autocrlf would change its bytes) and
// uses the checkout's node_modules, which `npm ci` there installs exactly as
// the lockfile pins.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ReleaseError } from './release-error.ts';

const run = promisify(execFile);
/** A clone, a build or an npm listing on a loaded machine can take this long. */
export const STEP_MS = 300_000;

/** Settings that make git write the commit's bytes and modes as they are. */
const PRISTINE = ['core.autocrlf=false', 'core.eol=lf', 'core.fileMode=true', 'core.symlinks=true'];

/** `env` without any GIT_* variable (GIT_DIR, GIT_CONFIG_COUNT ... would reach into the clone), reading no global or system config. */
export function gitCleanEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (!name.startsWith('GIT_')) out[name] = value;
  return { ...out, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
}

async function step(file: string, args: string[], cwd: string, env: Record<string, string>, what: string, signal?: AbortSignal): Promise<void> {
  try {
    await run(file, args, { cwd, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024, ...(signal === undefined ? {} : { signal }) });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new ReleaseError(`${what} failed:\n${`${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message}`);
  }
}

export interface Clone {
  /** The clone's directory (its realpath). */
  readonly dir: string;
  /** Removes the clone and its temporary parent. */
  readonly remove: () => void;
}

/**
 * Clones `root` at `commit` into a new directory under `parent` (the system's
 * temporary folder by default) and links root's node_modules into it; the
 * caller removes it with `remove`, also when a later step fails.
 */
export async function pristineClone(root: string, commit: string, env: Readonly<Record<string, string>>, parent = os.tmpdir(), signal?: AbortSignal): Promise<Clone> {
  const modules = path.join(root, 'node_modules');
  if (!existsSync(modules)) throw new ReleaseError(`${root} has no node_modules: run npm ci there first (it installs the build's toolchain as package-lock.json pins it)`);
  const holder = realpathSync(mkdtempSync(path.join(parent, 'portcullis-release-')));
  // Retried: a build stopped by a signal may still be closing files in it.
  const remove = (): void => rmSync(holder, { recursive: true, force: true, maxRetries: 5 });
  const dir = path.join(holder, 'checkout');
  const gitEnv = gitCleanEnv(env);
  const settings = PRISTINE.flatMap((s) => ['-c', s]);
  try {
    await step('git', [...settings, 'clone', '-q', '--no-local', '--no-hardlinks', '--no-checkout', ...settings, root, dir], holder, gitEnv, `git clone of ${root}`, signal);
    await step('git', [...settings, 'checkout', '-q', '--detach', commit], dir, gitEnv, `git checkout of ${commit} in a clone of ${root}`, signal);
    symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, remove };
}

/** `npm run build` in the clone (the package's own build, from scratch). */
export async function buildClone(dir: string, env: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<void> {
  await step('npm', ['run', '--silent', 'build'], dir, { ...env }, `npm run build in a clean clone (${dir})`, signal);
}
