// Codex CLI itself (`codex exec`, the native binary pinned in
// test/package.json) run the way a user points it at a gateway: a model
// provider in CODEX_HOME/config.toml whose base_url is the gateway and whose
// wire_api is "responses", the key in an environment variable the provider
// names, a temporary working directory and HOME (no login, config or history
// of the machine's user), only loopback reachable: every proxy variable points
// at a listener of the run's own that refuses and records each attempt
// (`proxyAttempts`, for the test to assert empty). Codex's read-only sandbox
// cannot create its helper when CODEX_HOME is a temporary directory, so it
// runs with `-s danger-full-access`; approvals are already "never" under exec.
// Its plugins and analytics are off (QUIET_SETTINGS): they would reach
// github.com and chatgpt.com at every start.
// A hang bound kills it; a killed test process takes it along.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { killWithThisProcess } from './child-watchdog.ts';
import { tempDir } from './temp-dir.ts';

/** The version pinned in test/package.json; the tests name it. */
export const CODEX_VERSION = '0.169.0';

/** The provider's name in config.toml and the model Codex asks for by default here. */
export const CODEX_PROVIDER = 'gw';
export const CODEX_MODEL = 'service-code';
/** The environment variable the provider's `env_key` names. */
export const CODEX_KEY_VARIABLE = 'GW_KEY';

const HANG_BOUND_MS = 120_000;

/**
 * Settings that keep Codex from reaching past its provider on its own: its
 * plugins sync github.com, api.github.com and chatgpt.com at every start, and
 * its analytics post to ab.chatgpt.com (seen as CONNECTs on the proxy).
 */
export const QUIET_SETTINGS: Record<string, string> = { 'features.plugins': 'false', 'analytics.enabled': 'false' };

/** Rust target triples of the platform packages, as Codex's own launcher maps them. */
const TARGETS: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

export interface CodexOptions {
  /** The provider's base_url, with /v1 (Codex appends /responses): e.g. http://127.0.0.1:40123/v1. */
  baseUrl: string;
  apiKey: string;
  prompt: string;
  /** Default: a new temporary directory. */
  workDir?: string;
  /** Default CODEX_MODEL. */
  model?: string;
  /** More top-level `key = value` lines (dotted keys reach tables: `features.x = false`), TOML as written; they replace the defaults of the same key. */
  settings?: Record<string, string>;
  /** More `key = value` lines for `[model_providers.gw]` (request_max_retries, supports_websockets, ...), TOML as written. */
  providerSettings?: Record<string, string>;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Default 120 s: a generous bound for a loaded machine, not a measurement. */
  hangBoundMs?: number;
  /** Where HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point; default a listener of the run's own whose record is `proxyAttempts`. */
  proxyUrl?: string;
}

export interface CodexRun {
  stdout: string;
  stderr: string;
  /** null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Killed at the hang bound. */
  hung: boolean;
  /** The first line of each connection to the run's own proxy (`CONNECT github.com:443 HTTP/1.1`): attempts to reach past loopback, refused. Empty when `proxyUrl` was given. */
  proxyAttempts: string[];
  workDir: string;
  /** CODEX_HOME (config.toml, sessions). */
  codexHome: string;
  /** performance.now() at spawn, to measure Codex's start against a server's arrival times. */
  spawnedAt: number;
  /** From spawn to exit, in milliseconds of the wall clock (a measurement of Codex, not the test's time). */
  elapsedMs: number;
}

/** The native binary, found the way Codex's npm launcher finds it, without the launcher's extra Node process. */
export function codexBinary(): string {
  const require = createRequire(import.meta.url);
  const suffix = `${process.platform}-${process.arch}`;
  const target = TARGETS[suffix];
  if (target === undefined) throw new Error(`Codex has no native binary for ${suffix}`);
  let vendor: string;
  try {
    vendor = path.join(path.dirname(require.resolve(`@openai/codex-${suffix}/package.json`)), 'vendor');
  } catch {
    throw new Error(`Codex is not installed for ${suffix} (@openai/codex-${suffix}): run npm ci --prefix test`);
  }
  const binary = path.join(vendor, target, 'bin', process.platform === 'win32' ? 'codex.exe' : 'codex');
  if (!existsSync(binary)) throw new Error(`Codex's binary is missing at ${binary}: run npm ci --prefix test`);
  return binary;
}

/** A TOML basic string: JSON's escaping is a subset TOML reads the same way. */
function tomlString(text: string): string {
  return JSON.stringify(text);
}

/** config.toml for one provider at `baseUrl` speaking Responses, its key read from CODEX_KEY_VARIABLE. */
export function codexConfig(options: { baseUrl: string; model?: string; settings?: Record<string, string>; providerSettings?: Record<string, string> }): string {
  const settings: Record<string, string> = { ...QUIET_SETTINGS, ...options.settings };
  const lines = [
    `model = ${tomlString(options.model ?? CODEX_MODEL)}`,
    `model_provider = ${tomlString(CODEX_PROVIDER)}`,
    ...Object.entries(settings).map(([key, value]) => `${key} = ${value}`),
    '',
    `[model_providers.${CODEX_PROVIDER}]`,
    `name = ${tomlString(CODEX_PROVIDER)}`,
    `base_url = ${tomlString(options.baseUrl)}`,
    `env_key = ${tomlString(CODEX_KEY_VARIABLE)}`,
    'wire_api = "responses"',
  ];
  for (const [key, value] of Object.entries(options.providerSettings ?? {})) lines.push(`${key} = ${value}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The environment for a run, nothing inherited but PATH: proxies point at a
 * loopback port (default a closed one) so any attempt to reach past loopback
 * fails instead of leaving the machine.
 */
export function codexEnv(options: { apiKey: string; home: string; codexHome: string; proxyUrl?: string; env?: Record<string, string> }): Record<string, string> {
  const closed = options.proxyUrl ?? 'http://127.0.0.1:9';
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: options.home,
    XDG_CONFIG_HOME: path.join(options.home, '.config'),
    TMPDIR: options.home,
    CODEX_HOME: options.codexHome,
    [CODEX_KEY_VARIABLE]: options.apiKey,
    HTTP_PROXY: closed,
    HTTPS_PROXY: closed,
    ALL_PROXY: closed,
    http_proxy: closed,
    https_proxy: closed,
    all_proxy: closed,
    NO_PROXY: '127.0.0.1,localhost,::1',
    no_proxy: '127.0.0.1,localhost,::1',
    ...options.env,
  };
}

/** A loopback listener standing in for a proxy: it records the first line of each connection and closes it. */
async function refusingProxy(): Promise<{ url: string; attempts: string[]; close(): void }> {
  const attempts: string[] = [];
  const server = net.createServer((socket) => {
    socket.once('data', (data: Buffer) => attempts.push(data.toString('latin1').split('\r\n')[0] ?? ''));
    socket.on('error', () => undefined);
    socket.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts, close: () => server.close() };
}

export async function runCodex(options: CodexOptions): Promise<CodexRun> {
  const workDir = options.workDir ?? tempDir('codex-work');
  const home = tempDir('codex-home');
  const codexHome = path.join(home, '.codex');
  const configOptions: Parameters<typeof codexConfig>[0] = { baseUrl: options.baseUrl };
  if (options.model !== undefined) configOptions.model = options.model;
  if (options.settings !== undefined) configOptions.settings = options.settings;
  if (options.providerSettings !== undefined) configOptions.providerSettings = options.providerSettings;
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(configOptions));
  const proxy = options.proxyUrl === undefined ? await refusingProxy() : undefined;
  const envOptions: Parameters<typeof codexEnv>[0] = { apiKey: options.apiKey, home, codexHome, proxyUrl: options.proxyUrl ?? proxy!.url };
  if (options.env !== undefined) envOptions.env = options.env;
  const args = ['exec', '--skip-git-repo-check', '-s', 'danger-full-access', options.prompt];
  const started = performance.now();
  const child = spawn(codexBinary(), args, { cwd: workDir, env: codexEnv(envOptions), stdio: ['ignore', 'pipe', 'pipe'] });
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
      proxy?.close();
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(bound);
      proxy?.close();
      const elapsedMs = performance.now() - started;
      const proxyAttempts = proxy?.attempts ?? [];
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code, signal, hung, proxyAttempts, workDir, codexHome, spawnedAt: started, elapsedMs });
    });
  });
}
