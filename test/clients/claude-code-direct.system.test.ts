// The harness itself, with no gateway between: Claude Code (the version
// pinned in test/package.json) pointed straight at the strict scripted
// Anthropic fake answers a plain prompt, and does a Read round trip (the fake
// asks for a file of the project, then quotes what came back). If this fails,
// the gateway tests that run Claude Code through Portcullis cannot pass
// whatever the gateway does: the client, the fake or the harness moved.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { runClaudeCode } from '../support/claude-code.ts';
import { PLAIN_ANSWER, quoteAnswer, SCRIPTED_UPSTREAM_KEY, startScriptedAnthropic, THINKING_TEXT } from '../support/scripted-upstreams.ts';
import { tempDir } from '../support/temp-dir.ts';

const NOTE = 'The drawbridge is up.';

/** Three runs of Claude Code (a few seconds each when idle) on a loaded machine: a hang bound, not a measurement. */
export const fileTimeoutMs = 180_000;

function project(): { dir: string; file: string } {
  const dir = tempDir('claude-direct');
  const file = path.join(dir, 'notes.txt');
  writeFileSync(file, NOTE);
  return { dir, file };
}

test('claude -p against the Anthropic fake: the plain answer on stdout, one strict request to /v1/messages?beta=true, nothing past loopback', async () => {
  const upstream = await startScriptedAnthropic();
  // Its proxy: any request for a host other than loopback would come here.
  const attempts: string[] = [];
  const proxy = net.createServer((socket) => {
    socket.once('data', (data: Buffer) => attempts.push(data.toString('latin1').split('\r\n')[0] ?? ''));
    socket.on('error', () => undefined);
    socket.end();
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  try {
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const run = await runClaudeCode({ baseUrl: upstream.origin, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'say hi', proxyUrl });
    assert.deepEqual(attempts, [], 'no request for a host past loopback');
    assert.deepEqual({ code: run.code, hung: run.hung, stdout: run.stdout, stderr: run.stderr }, { code: 0, hung: false, stdout: `${PLAIN_ANSWER}\n`, stderr: '' });
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['text']);
    const [request] = upstream.received;
    assert.equal(request?.url, '/v1/messages?beta=true');
    assert.equal(request.headers['anthropic-version'], '2023-06-01');
    const body = JSON.parse(request.text) as Record<string, unknown>;
    assert.equal(body['model'], 'claude-opus-5-5');
    assert.equal(body['stream'], true);
    assert.equal(body['max_tokens'], 128000);
  } finally {
    proxy.close();
    await upstream.close();
  }
});

test('claude -p against the Anthropic fake: Read round trip, the file quoted back', async () => {
  const { dir, file } = project();
  const upstream = await startScriptedAnthropic({ readPath: file });
  try {
    const run = await runClaudeCode({ baseUrl: upstream.origin, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'What does notes.txt say?', projectDir: dir });
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    // Claude Code numbers the lines it read.
    assert.deepEqual(upstream.toolResults, [`1\t${NOTE}`]);
    assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code: 0, stdout: `${quoteAnswer(`1\t${NOTE}`)}\n`, stderr: '' });
  } finally {
    await upstream.close();
  }
});

test('claude -p against the Anthropic fake with thinking: the signed thinking block comes back unaltered with the tool result', async () => {
  const { dir, file } = project();
  const upstream = await startScriptedAnthropic({ readPath: file, thinking: true });
  try {
    const run = await runClaudeCode({ baseUrl: upstream.origin, apiKey: SCRIPTED_UPSTREAM_KEY, prompt: 'What does notes.txt say?', projectDir: dir });
    assert.deepEqual(upstream.violations, []);
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    const second = JSON.parse(upstream.received[1]?.text ?? '{}') as { messages: Array<{ role: string; content: unknown }> };
    const assistant = second.messages.find((m) => m.role === 'assistant');
    assert.deepEqual((assistant?.content as Array<Record<string, unknown>>)[0], { type: 'thinking', thinking: THINKING_TEXT, signature: `sig_fake1_${Buffer.from(THINKING_TEXT).toString('base64url')}` });
    assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: `${quoteAnswer(`1\t${NOTE}`)}\n` });
  } finally {
    await upstream.close();
  }
});
