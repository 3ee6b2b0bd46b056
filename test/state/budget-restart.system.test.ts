// Spend, restart, spend again on the file backend with the compiled server in a
// child process: after SIGTERM, and after kill -9, a key's token budget refuses at
// the same request as on a server that never stopped. A request in flight at a
// kill -9 stays counted at its reservation (over, never under).
//
// The figures: the prompt "hi" with max_tokens 10 reserves 64 + 8 + 4 + 2 + 10 = 88
// tokens; the fake upstream reports 9 (7 + 2). A budget of 200 admits while
// used <= 112: thirteen requests (used 108 before the thirteenth), the fourteenth
// is refused.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { request, startFakeUpstream } from '../gateway/harness.ts';
import { completionBody, createGate, fakeProvider } from '../gateway/lifecycle-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { tempDir } from '../support/temp-dir.ts';
import { skipUnlessCompiled as skip, spawnServe, type ServeProcess } from '../cli/serve-process.ts';

const tmp = tempDir('budget-restart');
const dataDir = path.join(tmp, 'data');
const configFile = path.join(tmp, 'portcullis.json');
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

const BUDGET = { tokenBudget: { tokens: 200, period: 'day' } };
const BODY = { model: 'service-a', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
const ADMITTED = 13;

/** The upstream holds an answer while `hold` is set. */
let hold: Promise<void> | null = null;
let upstreamCalls = 0;

async function start(): Promise<{ server: ServeProcess; baseUrl: string }> {
  const server = spawnServe({ args: ['--config', configFile, '--port', '0'], cwd: tmp, env: { UPSTREAM_KEY: 'sk-upstream-budget' } });
  cleanup.push(() => server.kill());
  const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
  return { server, baseUrl: String(listening['api']) };
}

async function chat(baseUrl: string, key: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; message: string }> {
  const res = await request(baseUrl, 'POST', '/v1/chat/completions', { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
  const message = res.status === 200 ? '' : (res.json() as { error: { message: string } }).error.message;
  return { status: res.status, headers: res.headers, message };
}

/** Requests until the first refusal (at most 40); how many were answered 200. */
async function spendUntilRefused(baseUrl: string, key: string): Promise<number> {
  for (let i = 0; i < 40; i++) {
    const res = await chat(baseUrl, key);
    if (res.status !== 200) {
      assert.equal(res.status, 429, res.message);
      return i;
    }
  }
  return 40;
}

async function spend(baseUrl: string, key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) assert.equal((await chat(baseUrl, key)).status, 200);
}

/** The count budgets.json holds for key `id`'s token budget today. */
function journalled(id: string): number | undefined {
  try {
    const file = JSON.parse(readFileSync(path.join(dataDir, 'budgets.json'), 'utf8')) as { keys: Record<string, { tokens?: Record<string, number> }> };
    return file.keys[id]?.tokens?.[new Date().toISOString().slice(0, 10)];
  } catch {
    return undefined;
  }
}

describe('budgets across restarts (file backend)', { skip }, () => {
  test('SIGTERM and kill -9 between requests: the refusal comes at the same request; a request in flight at kill -9 stays charged at its reservation', async () => {
    const upstream = await startFakeUpstream(async (_req, res) => {
      upstreamCalls++;
      if (hold !== null) await hold;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completionBody('ok'));
    });
    cleanup.push(() => upstream.close());
    writeFileSync(configFile, JSON.stringify({ admin: { enabled: false }, dataDir, providers: { fake: fakeProvider(upstream.baseUrl) }, aliases: { 'service-a': { provider: 'fake', model: 'm' } } }));
    const store = openKeyStore(dataDir, { watch: false });
    const straight = await store.create('straight', { limits: BUDGET });
    const term = await store.create('sigterm', { limits: BUDGET });
    const killed = await store.create('kill', { limits: BUDGET });
    const inFlight = await store.create('in-flight', { limits: BUDGET });
    await store.close();

    let { server, baseUrl } = await start();
    // Without a restart.
    assert.equal(await spendUntilRefused(baseUrl, straight.key), ADMITTED);
    // SIGTERM after 5.
    await spend(baseUrl, term.key, 5);
    server.child.kill('SIGTERM');
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    ({ server, baseUrl } = await start());
    assert.equal(await spendUntilRefused(baseUrl, term.key), ADMITTED - 5);

    // kill -9 after 7, once their settlements are written (the admission's write holds the reservation; the settlement's follows the answer).
    await spend(baseUrl, killed.key, 7);
    await eventually(() => journalled(killed.record.id) === 63, 'budgets.json holding the 7 settled requests');
    server.child.kill('SIGKILL');
    assert.deepEqual(await server.exited, { code: null, signal: 'SIGKILL' });
    ({ server, baseUrl } = await start());
    assert.equal(await spendUntilRefused(baseUrl, killed.key), ADMITTED - 7);

    // kill -9 with a request in flight: 3 settled (27) plus the reservation (88) = 115.
    await spend(baseUrl, inFlight.key, 3);
    let release: () => void = () => {};
    hold = new Promise<void>((resolve) => (release = resolve));
    const calls = upstreamCalls;
    const pending = chat(baseUrl, inFlight.key).catch(() => null);
    await eventually(() => upstreamCalls === calls + 1, 'the held request at the upstream');
    assert.equal(journalled(inFlight.record.id), 115);
    server.child.kill('SIGKILL');
    await server.exited;
    release();
    hold = null;
    await pending;
    ({ server, baseUrl } = await start());
    const refused = await chat(baseUrl, inFlight.key);
    assert.equal(refused.status, 429);
    assert.match(refused.message, /^This request may use up to 88 tokens \(its prompt and max_tokens\); the key's token budget has 85 left this day, with no requests in flight\./);
    server.child.kill('SIGTERM');
    await server.exited;
  });
});
