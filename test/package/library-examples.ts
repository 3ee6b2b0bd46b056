// What each serving example of docs/library/ must do, run as a user runs it:
// the compiled program started with PORT=0, UPSTREAM_URL at a fake upstream
// and a DATA_DIR of its own; it prints `listening <url>` on stdout, answers
// real requests (fetch, and the openai SDK as a client would), and a SIGTERM
// ends it with exit 0 and nothing on stderr.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import OpenAI from 'openai';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../../src/testing/fake-upstream.ts';
import { run } from './packed-project.ts';

/** The promise: a host in under fifty lines. */
export const MAX_EXAMPLE_LINES = 50;

/** The key the config's apiKeyEnv (UPSTREAM_KEY) holds, for the examples that name it. */
const ENV_UPSTREAM_KEY = 'sk-upstream-from-env';
/** The vault's key in docs/library/vault-keys.ts and embedded.ts. */
const VAULT_KEY = 'sk-vault-upstream-1';
/** The client key of the host's key table in docs/library/own-keys.ts and embedded.ts. */
const TABLE_KEY = 'team-a-secret-key';
const UPSTREAM_MODEL = 'gpt-4o-mini';

const UPSTREAM_ANSWER = {
  id: 'chatcmpl-docs-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: UPSTREAM_MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from upstream.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
};

const INVALID_KEY_BODY = { error: { message: 'Incorrect API key provided, or the key has been revoked.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };

/** The admin listener's port when the config does not set one. */
const DEFAULT_ADMIN_PORT = 8081;

/** Keeps 127.0.0.1:`port` bound for the rest of this process (unref'd), or leaves it to whoever holds it already. */
async function holdPort(port: number): Promise<void> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve() : reject(err)));
    server.listen(port, '127.0.0.1', () => resolve());
  });
  server.unref();
}

export interface ExampleRun {
  /** What the program printed after `listening `. */
  readonly url: string;
  readonly upstream: FakeUpstream;
  /** Env given to the program beyond the common ones (the scenario's prepare()). */
  readonly extra: Readonly<Record<string, string>>;
}

export interface ExampleScenario {
  readonly title: string;
  /** Before the program starts: env it needs (a key made with the packed CLI, a key hash). */
  prepare?(context: { project: string; dataDir: string; env: Readonly<Record<string, string>> }): Promise<Record<string, string>>;
  check(run: ExampleRun): Promise<void>;
}

async function postChat(url: string, key: string | null): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content: 'Say hello.' }] }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function getText(url: string): Promise<[number, string]> {
  const response = await fetch(url);
  return [response.status, await response.text()];
}

/** A chat through the openai SDK at `baseURL`: the answer's text and model, and what the upstream received for it. */
async function sdkChat(run: ExampleRun, baseURL: string, apiKey: string): Promise<{ authorization: unknown }> {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 10_000 });
  const arrival = run.upstream.nextArrival();
  const completion = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'Say hello.' }] });
  assert.deepEqual([completion.model, completion.choices[0]?.message.content, completion.usage?.total_tokens], ['service-chat', 'Hello from upstream.', 13]);
  const received = await arrival;
  assert.equal(received.url, '/v1/chat/completions');
  assert.equal((JSON.parse(received.text) as { model: unknown }).model, UPSTREAM_MODEL);
  return { authorization: received.headers['authorization'] };
}

/** A wrong key and no key: 401 with the gateway's error body, and nothing sent upstream. */
async function refusesBadKeys(run: ExampleRun, chatUrl: string): Promise<void> {
  const before = run.upstream.count;
  assert.deepEqual(await postChat(chatUrl, 'not-a-known-key'), { status: 401, body: INVALID_KEY_BODY });
  assert.equal((await postChat(chatUrl, null)).status, 401);
  assert.equal(run.upstream.count, before);
}

/** The host's own routes next to the gateway's under /llm: a path outside /llm never reaches the gateway. */
async function hostRoutesServed(run: ExampleRun): Promise<void> {
  assert.deepEqual(await getText(`${run.url}/status`), [200, 'host ok\n']);
  assert.deepEqual(await getText(`${run.url}/v1/models`), [404, 'not found\n']);
  assert.deepEqual(await getText(`${run.url}/llm/nothing-here`), [404, 'not found\n']);
}

/** The examples that serve, by file name in docs/library/. */
export const EXAMPLE_SCENARIOS: Readonly<Record<string, ExampleScenario>> = {
  'http-server.ts': {
    title: "the host's routes next to the gateway under /llm, a key made with the packed CLI",
    async prepare({ project, dataDir, env }) {
      const cli = path.join(project, 'node_modules', '.bin', 'portcullis');
      const { stdout } = await run(cli, ['keys', 'create', '--name', 'docs-client', '--json', '--data-dir', dataDir], { cwd: project, env });
      return { CLIENT_KEY: (JSON.parse(stdout) as { key: string }).key };
    },
    async check(run) {
      await hostRoutesServed(run);
      const key = run.extra['CLIENT_KEY'] as string;
      assert.deepEqual(await sdkChat(run, `${run.url}/llm/v1`, key), { authorization: `Bearer ${ENV_UPSTREAM_KEY}` });
      await refusesBadKeys(run, `${run.url}/llm/v1/chat/completions`);
    },
  },
  'own-keys.ts': {
    title: "keys from the host's own table through authenticate",
    async check(run) {
      assert.deepEqual(await sdkChat(run, `${run.url}/v1`, TABLE_KEY), { authorization: `Bearer ${ENV_UPSTREAM_KEY}` });
      await refusesBadKeys(run, `${run.url}/v1/chat/completions`);
    },
  },
  'vault-keys.ts': {
    title: "the vault's key sent upstream",
    async prepare() {
      // The admin listener's default port is taken: a program that started one anyway would fail to listen.
      await holdPort(DEFAULT_ADMIN_PORT);
      return { CLIENT_KEY_SHA256: createHash('sha256').update('vault-example-client').digest('hex') };
    },
    async check(run) {
      assert.deepEqual(await sdkChat(run, `${run.url}/v1`, 'vault-example-client'), { authorization: `Bearer ${VAULT_KEY}` });
      await refusesBadKeys(run, `${run.url}/v1/chat/completions`);
    },
  },
  'embedded.ts': {
    title: "own server, own key table and the vault's key together",
    async check(run) {
      await hostRoutesServed(run);
      assert.deepEqual(await sdkChat(run, `${run.url}/llm/v1`, TABLE_KEY), { authorization: `Bearer ${VAULT_KEY}` });
      await refusesBadKeys(run, `${run.url}/llm/v1/chat/completions`);
    },
  },
};

export interface ServedExample {
  /** The host project (its node_modules has the packed package). */
  project: string;
  /** The compiled example. */
  file: string;
  /** Its working directory (an empty one). */
  cwd: string;
  env: Readonly<Record<string, string>>;
  scenario: ExampleScenario;
  /** How long the program may take to print its line, and to exit after SIGTERM. */
  timeoutMs: number;
}

/** Starts the program, waits for its `listening` line, runs the scenario, then SIGTERM: exit 0, stderr empty. */
export async function runServedExample(example: ServedExample): Promise<void> {
  const upstream = await startFakeUpstream((_req, res) => sendJson(res, 200, UPSTREAM_ANSWER));
  const dataDir = mkdtempSync(path.join(example.cwd, 'data-'));
  const extra = (await example.scenario.prepare?.({ project: example.project, dataDir, env: example.env })) ?? {};
  const env = { ...example.env, ...extra, PORT: '0', UPSTREAM_URL: upstream.baseUrl, DATA_DIR: dataDir, UPSTREAM_KEY: ENV_UPSTREAM_KEY };
  const child = spawn(process.execPath, [example.file], { cwd: example.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  try {
    const url = await listeningLine(child.stdout, exited, example.timeoutMs, () => `stdout:\n${stdout}\nstderr:\n${stderr}`);
    await example.scenario.check({ url, upstream, extra });
    child.kill('SIGTERM');
    const [code, signal] = await withDeadline(exited, example.timeoutMs, 'exit after SIGTERM');
    assert.deepEqual({ code, signal, stderr }, { code: 0, signal: null, stderr: '' }, stdout);
    assert.deepEqual(stdout.split('\n').filter((line) => line.startsWith('listening')), [`listening ${url}`]);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await upstream.close();
  }
}

/** The URL of the program's `listening <url>` line, as soon as it is printed. */
function listeningLine(stdout: NodeJS.ReadableStream, exited: Promise<unknown>, timeoutMs: number, output: () => string): Promise<string> {
  let seen = '';
  const line = new Promise<string>((resolve) => {
    stdout.on('data', (text: string) => {
      seen += text;
      const match = /^listening (http:\/\/\S+)$/m.exec(seen);
      if (match !== null) resolve(match[1] as string);
    });
  });
  const died = exited.then(() => Promise.reject(new Error(`the example exited before printing its listening line\n${output()}`)));
  died.catch(() => {}); // once the line won, a later exit is not a failure here
  return withDeadline(Promise.race([line, died]), timeoutMs, 'its listening line', output);
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string, output: () => string = () => ''): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms\n${output()}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
