// What the release system tests share: clean clones of the repository's
// committed HEAD (a clone gets the commit, never the work tree's changes),
// built offline with node_modules linked from the repository, commands run
// through sh with a chosen umask, time zone and locale, and the shell blocks
// of docs/verify.md.
import { execFile } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** A build (tsc, ~20-40 s here) on a loaded machine may take this long. */
export const BUILD_MS = 240_000;

/** The environment of every child: this Node.js first on PATH, nothing of an npm run that started the tests, no PORTCULLIS_* or SOURCE_DATE_EPOCH, no agent. */
export const baseEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) {
  if (value === undefined || name.toLowerCase().startsWith('npm_') || name.startsWith('PORTCULLIS_')) continue;
  if (['SOURCE_DATE_EPOCH', 'SSH_AUTH_SOCK', 'INIT_CWD', 'TZ', 'LANG', 'LC_ALL'].includes(name)) continue;
  baseEnv[name] = value;
}
baseEnv['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;
// npm offline and quiet, without changing the documented commands.
Object.assign(baseEnv, { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });

/** How a command runs: where, the umask, and what to add to baseEnv. */
export interface Shell {
  readonly cwd: string;
  readonly umask: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `script` with sh -c under the shell's umask and environment; never throws for a non-zero exit. */
export async function sh(shell: Shell, script: string, timeout = BUILD_MS): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileAsync('sh', ['-c', `umask ${shell.umask}\n${script}`], {
      cwd: shell.cwd,
      env: { ...baseEnv, ...shell.env },
      timeout,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== 'number') throw new Error(`sh -c ${JSON.stringify(script)} did not finish: ${e.message}\n${e.stderr ?? ''}`);
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Like sh, but a non-zero exit is an error showing the output. */
export async function shOk(shell: Shell, script: string, timeout = BUILD_MS): Promise<Ran> {
  const ran = await sh(shell, script, timeout);
  if (ran.code !== 0) throw new Error(`${script} exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** Single-quoted for sh. */
export function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Links the repository's node_modules into a clone: the build's packages, offline. */
export function linkNodeModules(root: string, clone: string): void {
  symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
}

/** The fenced blocks of a Markdown page with their info string ('sh', '' ...), in order. */
export function fencedBlocks(markdown: string): Array<{ lang: string; body: string }> {
  return [...markdown.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] ?? '', body: m[2] ?? '' }));
}

/** The package's name and version. */
export function manifestOf(root: string): { name: string; version: string; engines: { node: string } } {
  return JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; engines: { node: string } };
}
