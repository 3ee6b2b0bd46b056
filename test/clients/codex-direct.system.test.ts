// The harness itself, with no gateway between: Codex CLI (the version pinned
// in test/package.json) pointed straight at the strict scripted Responses
// fake answers a plain prompt, and does an exec_command round trip (the fake
// asks for `cat notes.txt`, Codex runs it in its working directory, the fake
// quotes the output), with encrypted reasoning carried back unaltered; and
// how it meets a refused WebSocket upgrade, which a gateway must answer so
// that Codex falls back to HTTP at once (426), not fail (400). If
// this fails, the gateway tests that run Codex through Portcullis cannot pass
// whatever the gateway does: the client, the fake or the harness moved.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CODEX_MODEL, CODEX_VERSION, runCodex } from '../support/codex.ts';
import { execCommandCall, PLAIN_ANSWER, quoteAnswer, SCRIPTED_UPSTREAM_KEY } from '../support/scripted-upstreams.ts';
import { encryptedReasoning, startScriptedResponses } from '../support/scripted-responses.ts';
import { tempDir } from '../support/temp-dir.ts';

const NOTE = 'The drawbridge is up.';
/** What Codex sends back from exec_command: a header, then the command's output. */
const EXEC_OUTPUT = new RegExp(`^Chunk ID: \\w+\\nWall time: [0-9.]+ seconds\\nProcess exited with code 0\\nOriginal token count: \\d+\\nOutput:\\n${NOTE}\\n$`);

/** Six runs of Codex (about a second each when idle) on a loaded machine: a hang bound, not a measurement. */
export const fileTimeoutMs = 180_000;

function workDir(): string {
  const dir = tempDir('codex-direct');
  writeFileSync(path.join(dir, 'notes.txt'), `${NOTE}\n`);
  return dir;
}

test('codex exec against the Responses fake: the plain answer on stdout, one strict streamed request to /v1/responses, nothing past loopback', async () => {
  const upstream = await startScriptedResponses();
  try {
    const run = await runCodex({ baseUrl: upstream.baseUrl, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'say hi' });
    assert.deepEqual(run.proxyAttempts, [], 'no request for a host past loopback');
    assert.deepEqual({ code: run.code, hung: run.hung, stdout: run.stdout }, { code: 0, hung: false, stdout: `${PLAIN_ANSWER}\n` });
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['text']);
    const [request] = upstream.received;
    assert.equal(upstream.received.length, 1);
    assert.equal(request?.url, '/v1/responses');
    assert.equal(request.headers['originator'], 'codex_exec');
    assert.match(request.headers['user-agent'] ?? '', new RegExp(`^codex_exec/${CODEX_VERSION.replaceAll('.', '\\.')} `));
    const body = JSON.parse(request.text) as Record<string, unknown>;
    assert.equal(body['model'], CODEX_MODEL);
    assert.equal(body['stream'], true);
    assert.equal(body['store'], false);
    assert.deepEqual(body['include'], ['reasoning.encrypted_content']);
  } finally {
    await upstream.close();
  }
});

test('codex exec with its own defaults reaches past loopback: plugins and analytics, which the harness turns off', async () => {
  const upstream = await startScriptedResponses();
  try {
    const run = await runCodex({ baseUrl: upstream.baseUrl, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'say hi', settings: { 'features.plugins': 'true', 'analytics.enabled': 'true' } });
    assert.equal(run.code, 0);
    assert.deepEqual([...new Set(run.proxyAttempts)].sort(), ['CONNECT ab.chatgpt.com:443 HTTP/1.1', 'CONNECT api.github.com:443 HTTP/1.1', 'CONNECT chatgpt.com:443 HTTP/1.1', 'CONNECT github.com:443 HTTP/1.1']);
  } finally {
    await upstream.close();
  }
});

test('codex exec against the Responses fake: exec_command round trip, the command output quoted back', async () => {
  const upstream = await startScriptedResponses({ toolCall: execCommandCall('cat notes.txt') });
  try {
    const run = await runCodex({ baseUrl: upstream.baseUrl, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'What does notes.txt say?', workDir: workDir() });
    assert.deepEqual(run.proxyAttempts, []);
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    assert.equal(upstream.toolResults.length, 1);
    assert.match(upstream.toolResults[0]!, EXEC_OUTPUT);
    assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: `${quoteAnswer(upstream.toolResults[0]!)}\n` });
  } finally {
    await upstream.close();
  }
});

test('codex exec against the Responses fake with reasoning: the encrypted reasoning item comes back unaltered with the command output', async () => {
  const upstream = await startScriptedResponses({ toolCall: execCommandCall('cat notes.txt'), thinking: true });
  try {
    const run = await runCodex({ baseUrl: upstream.baseUrl, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'What does notes.txt say?', workDir: workDir() });
    assert.deepEqual(run.proxyAttempts, []);
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    const second = JSON.parse(upstream.received[1]?.text ?? '{}') as { input: Array<Record<string, unknown>> };
    const reasoning = second.input.filter((item) => item['type'] === 'reasoning');
    // Codex adds `content: null` to the item it was given.
    assert.deepEqual(reasoning, [{ type: 'reasoning', id: 'rs_fake1', summary: [], content: null, encrypted_content: encryptedReasoning('rs_fake1') }]);
    assert.equal(run.code, 0);
  } finally {
    await upstream.close();
  }
});

test('codex exec with supports_websockets, the upgrade refused with 426: one attempt, then the answer over HTTP', async () => {
  const upstream = await startScriptedResponses({ websocketRefusal: 426 });
  try {
    const run = await runCodex({ baseUrl: upstream.baseUrl, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'say hi', providerSettings: { supports_websockets: 'true' } });
    assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: `${PLAIN_ANSWER}\n` });
    assert.deepEqual(upstream.answered, ['websocket 426', 'text']);
    assert.deepEqual(upstream.violations, []);
    const [attempt] = upstream.upgrades;
    assert.deepEqual([attempt?.method, attempt?.url, attempt?.headers['upgrade'], attempt?.headers['openai-beta']], ['GET', '/v1/responses', 'websocket', 'responses_websockets=2026-02-06']);
    assert.equal(attempt?.headers['authorization'], `Bearer ${SCRIPTED_UPSTREAM_KEY}`);
  } finally {
    await upstream.close();
  }
});

test('codex exec with supports_websockets, the upgrade refused with 400: Codex gives up without trying HTTP', async () => {
  const upstream = await startScriptedResponses({ websocketRefusal: 400 });
  try {
    const run = await runCodex({ baseUrl: upstream.baseUrl, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'say hi', providerSettings: { supports_websockets: 'true' } });
    assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 1, stdout: '' });
    assert.deepEqual(upstream.answered, ['websocket 400', 'websocket 400']);
    assert.equal(upstream.received.length, 0);
    assert.match(run.stderr, /ERROR: \{"error":\{"message":"WebSocket is not served here; use HTTP\."/);
  } finally {
    await upstream.close();
  }
});
