// Claude Code itself (`claude -p`, the native binary pinned in
// test/package.json) run the way a user points it at a gateway: in a
// temporary project directory, with a temporary HOME (no login, settings or
// history of the machine's user), only loopback reachable, its non-essential
// traffic off, and only the Read tool allowed without asking. A hang bound
// kills it; a killed test process takes it along.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { killWithThisProcess } from './child-watchdog.ts';
import { tempDir } from './temp-dir.ts';

/** The version pinned in test/package.json; the tests and the README name it. */
export const CLAUDE_CODE_VERSION = '2.1.328';

const HANG_BOUND_MS = 120_000;

export interface ClaudeCodeOptions {
  /** e.g. http://127.0.0.1:40123 (no /v1: Claude Code adds it). */
  baseUrl: string;
  apiKey: string;
  prompt: string;
  /** Default: a new temporary directory. */
  projectDir?: string;
  /** `--model`; default Claude Code's own. */
  model?: string;
  /** Extra environment (ANTHROPIC_SMALL_FAST_MODEL, ...). */
  env?: Record<string, string>;
  /** Default 120 s: a generous bound for a loaded machine, not a measurement. */
  hangBoundMs?: number;
  /** Where HTTP_PROXY and HTTPS_PROXY point; default a closed loopback port. A test may listen there to see any attempt to leave loopback. */
  proxyUrl?: string;
}

export interface ClaudeCodeRun {
  stdout: string;
  stderr: string;
  /** null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Killed at the hang bound. */
  hung: boolean;
  projectDir: string;
}

/** The native binary: the platform package's own file, so a skipped postinstall (which copies it over the wrapper's stub) does not matter. */
export function claudeCodeBinary(): string {
  const require = createRequire(import.meta.url);
  const suffix = `${process.platform}-${process.arch}`;
  try {
    const dir = path.dirname(require.resolve(`@anthropic-ai/claude-code-${suffix}/package.json`));
    const binary = path.join(dir, process.platform === 'win32' ? 'claude.exe' : 'claude');
    if (existsSync(binary)) return binary;
  } catch {
    // fall back to the wrapper's bin below
  }
  const wrapper = path.join(path.dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'bin', 'claude.exe');
  if (!existsSync(wrapper)) throw new Error(`Claude Code is not installed for ${suffix}: run npm ci --prefix test`);
  return wrapper;
}

/**
 * The environment a user sets to point Claude Code at a gateway,
 * nothing inherited but PATH: proxies point at a closed loopback port so any
 * attempt to reach past loopback fails instead of leaving the machine.
 */
export function claudeCodeEnv(options: { baseUrl: string; apiKey: string; home: string; proxyUrl?: string; env?: Record<string, string> }): Record<string, string> {
  const closed = options.proxyUrl ?? 'http://127.0.0.1:9';
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: options.home,
    XDG_CONFIG_HOME: path.join(options.home, '.config'),
    TMPDIR: options.home,
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: options.apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    HTTP_PROXY: closed,
    HTTPS_PROXY: closed,
    NO_PROXY: '127.0.0.1,localhost,::1',
    ...options.env,
  };
}

export function runClaudeCode(options: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const projectDir = options.projectDir ?? tempDir('claude-project');
  const home = tempDir('claude-home');
  const args = ['-p', options.prompt, '--allowedTools', 'Read'];
  if (options.model !== undefined) args.push('--model', options.model);
  const envOptions: Parameters<typeof claudeCodeEnv>[0] = { baseUrl: options.baseUrl, apiKey: options.apiKey, home };
  if (options.env !== undefined) envOptions.env = options.env;
  if (options.proxyUrl !== undefined) envOptions.proxyUrl = options.proxyUrl;
  const child = spawn(claudeCodeBinary(), args, { cwd: projectDir, env: claudeCodeEnv(envOptions), stdio: ['ignore', 'pipe', 'pipe'] });
  killWithThisProcess(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (part: Buffer) => out.push(part));
  child.stderr.on('data', (part: Buffer) => err.push(part));
  let hung = false;
  const bound = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, options.hangBoundMs ?? HANG_BOUND_MS);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(bound);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(bound);
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code, signal, hung, projectDir });
    });
  });
}
