// A host's project with the package installed from its tarball: packed by the
// release packer's code (scripts/release/ packCheckout: the file list, modes,
// tar and gzip of `npm run package`) from the work tree's own build this test
// run made, not a release of a commit (no clone and rebuild, and the work
// tree's uncommitted changes are in it),
// installed offline with a private npm cache into a temporary "type": "module"
// project, so what a test imports is what the registry would serve, resolved
// through package.json `exports`. TypeScript and @types/node are linked from the
// repository's node_modules for the tests that type-check a consumer.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packCheckout } from '../../scripts/release/package.ts';

export const run = promisify(execFile);

/** Any single step (a pack, an install, a compile, a child process) may take this long. */
export const STEP_MS = 60_000;

/**
 * The environment of the npm and node children: this Node.js first on PATH;
 * nothing of the npm run that started the tests (npm_* variables: its prefix,
 * cache, scripts) nor any PORTCULLIS_* setting.
 */
export const baseEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) {
  if (value !== undefined && !name.toLowerCase().startsWith('npm_') && !name.startsWith('PORTCULLIS_')) baseEnv[name] = value;
}
baseEnv['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;

/** Why the packed tests cannot run here, or false when they can. */
export async function packedSkipReason(): Promise<string | false> {
  try {
    await run('npm', ['--version'], { env: baseEnv, timeout: STEP_MS });
    return false;
  } catch {
    return 'npm is not on PATH: cannot pack or install the package';
  }
}

function npmFlags(tmp: string): string[] {
  return ['--cache', path.join(tmp, 'npm-cache'), '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
}

/** Packs the work tree's build at `root` into `tmp` with the release packer's code (not a release: test/release covers those): the tarball's path and the files it holds, sorted. */
export async function packRepository(root: string, tmp: string): Promise<{ tarball: string; files: string[] }> {
  const packed = await packCheckout({ root, out: tmp, env: baseEnv });
  return { tarball: packed.tarball, files: [...packed.files].sort() };
}

/** A "type": "module" project at tmp/`name` with the tarball installed offline as a dependency. */
export async function hostProject(tmp: string, tarball: string, name: string): Promise<string> {
  const project = path.join(tmp, name);
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
  await run('npm', ['install', '--offline', ...npmFlags(tmp), tarball], { cwd: project, env: baseEnv, timeout: STEP_MS });
  return project;
}

/** Links typescript and @types/node from the repository into the project (after npm install, which would prune them). */
export function linkTypeScript(root: string, project: string): void {
  mkdirSync(path.join(project, 'node_modules', '@types'), { recursive: true });
  symlinkSync(path.join(root, 'node_modules', 'typescript'), path.join(project, 'node_modules', 'typescript'), 'dir');
  symlinkSync(path.join(root, 'node_modules', '@types', 'node'), path.join(project, 'node_modules', '@types', 'node'), 'dir');
}

/** Every path under `dir` (relative, sorted), with each file's size: a snapshot to tell whether anything was created or written. */
export function treeOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(at, entry.name);
      const relative = path.relative(dir, full);
      if (entry.isDirectory()) {
        out.push(`${relative}/`);
        walk(full);
      } else {
        out.push(`${relative} ${entry.isSymbolicLink() ? 'link' : statSync(full).size}`);
      }
    }
  };
  walk(dir);
  return out;
}
