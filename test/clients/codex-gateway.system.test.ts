// Codex CLI itself (`codex exec`, pinned in test/package.json) through the
// gateway, set up as a user would: a model provider in CODEX_HOME whose
// base_url is the gateway's /v1 and whose key is a gateway key, wire_api
// "responses". Its model is an alias of a strict scripted upstream of each
// kind: one that speaks Responses (an "openai" provider with "responses":
// "passthrough": the client's body goes through) and one that speaks only
// chat completions (the translation). A plain answer and an exec_command
// round trip for each; the output maximum sent, usage and cost on the key.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../src/config/config.ts';
import { CODEX_MODEL, runCodex } from '../support/codex.ts';
import { execCommandCall, PLAIN_ANSWER, quoteAnswer, SCRIPTED_UPSTREAM_KEY, startScriptedOpenAI, type ScriptedUpstream } from '../support/scripted-upstreams.ts';
import { startScriptedResponses } from '../support/scripted-responses.ts';
import { tempDir } from '../support/temp-dir.ts';
import { startGateway, type TestGateway } from '../gateway/harness.ts';

const NOTE = 'The drawbridge is up.';
const UPSTREAM_MODEL = 'code-upstream-1';
const OUTPUT_CAP = 8192;

/** Four runs of Codex (about a second each when idle) on a loaded machine: a hang bound, not a measurement. */
export const fileTimeoutMs = 240_000;

const KINDS = [
  { name: 'Responses', mode: 'passthrough', path: '/v1/responses', start: (toolCall?: ReturnType<typeof execCommandCall>) => startScriptedResponses(toolCall === undefined ? {} : { toolCall }) },
  { name: 'chat-completions-only', mode: 'translate', path: '/v1/chat/completions', start: (toolCall?: ReturnType<typeof execCommandCall>) => startScriptedOpenAI(toolCall === undefined ? {} : { toolCall }) },
] as const;

async function gatewayFor(upstream: ScriptedUpstream, mode: string): Promise<TestGateway> {
  return startGateway({
    configValue: {
      providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'SCRIPTED_KEY', responses: mode, retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } } },
      aliases: { [CODEX_MODEL]: { provider: 'up', model: UPSTREAM_MODEL, maxOutputTokens: OUTPUT_CAP, price: { input: 3, output: 15 } } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
}

function responsesLines(gw: TestGateway): Array<Record<string, unknown>> {
  return gw.logs.filter((l) => l['msg'] === 'request' && l['path'] === '/v1/responses');
}

for (const kind of KINDS) {
  describe(`Codex through the gateway to a ${kind.name} upstream`, () => {
    let upstream: ScriptedUpstream;
    let gw: TestGateway;
    before(async () => {
      upstream = await kind.start();
      gw = await gatewayFor(upstream, kind.mode);
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });

    test('codex exec "say hi": the answer printed; the output maximum sent; on the key with its usage and cost', async () => {
      const run = await runCodex({ baseUrl: `${gw.baseUrl}/v1`, apiKey: gw.key, prompt: 'say hi' });
      assert.deepEqual(run.proxyAttempts, []);
      assert.deepEqual({ code: run.code, hung: run.hung, stdout: run.stdout }, { code: 0, hung: false, stdout: `${PLAIN_ANSWER}\n` });
      assert.deepEqual(upstream.violations, []);
      const received = upstream.received.at(-1)!;
      assert.equal(received.url, kind.path);
      const body = JSON.parse(received.text) as Record<string, unknown>;
      assert.equal(body['model'], UPSTREAM_MODEL);
      // Codex sends no max_output_tokens: the gateway's default maximum (4096), within the alias's cap, is sent and reserved.
      assert.equal(body['max_output_tokens'] ?? body['max_tokens'] ?? body['max_completion_tokens'], Math.min(DEFAULT_MAX_OUTPUT_TOKENS, OUTPUT_CAP));
      assert.equal(body['stream'], true);
      await gw.flushUsage();
      const line = responsesLines(gw).at(-1)!;
      assert.deepEqual({ status: line['status'], keyId: line['keyId'], alias: line['alias'], stream: line['stream'] }, { status: 200, keyId: gw.keyId, alias: CODEX_MODEL, stream: true });
      assert.ok((line['promptTokens'] as number) > 0 && (line['completionTokens'] as number) > 0, 'the upstream usage is on the line');
      assert.ok((line['costNanos'] as number) > 0, 'the alias is priced: the answer costs');
      // Codex offers web_search on every request: a chat-only upstream cannot run it, so it is left out of the offer, and said.
      assert.equal(line['toolsLeftOut'], kind.mode === 'translate' ? 'web_search' : undefined);
    });
  });

  test(`codex exec through the gateway to a ${kind.name} upstream: exec_command round trip, the output quoted back`, async () => {
    const upstream = await kind.start(execCommandCall('cat notes.txt'));
    const gw = await gatewayFor(upstream, kind.mode);
    try {
      const dir = tempDir('codex-gw');
      writeFileSync(path.join(dir, 'notes.txt'), `${NOTE}\n`);
      const run = await runCodex({ baseUrl: `${gw.baseUrl}/v1`, apiKey: gw.key, prompt: 'What does notes.txt say?', workDir: dir });
      assert.deepEqual(run.proxyAttempts, []);
      assert.deepEqual(upstream.violations, []);
      assert.deepEqual(upstream.answered, ['tool_use', 'text']);
      assert.equal(upstream.toolResults.length, 1);
      assert.match(upstream.toolResults[0]!, new RegExp(`Output:\\n${NOTE}\\n$`));
      assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: `${quoteAnswer(upstream.toolResults[0]!)}\n` });
      assert.equal(responsesLines(gw).length, 2);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
}
