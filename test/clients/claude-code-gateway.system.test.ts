// Claude Code itself (`claude -p`, pinned in test/package.json) through the
// gateway, set up the way the docs tell a user: ANTHROPIC_BASE_URL at the
// gateway, ANTHROPIC_API_KEY a gateway key, its non-essential traffic off, in
// a temporary project. The model names it sends (claude-opus-5-5 by default,
// claude-haiku-5-5, claude-haiku-4-5) are aliases of a strict scripted
// upstream of each kind: Anthropic (the request passed through) and
// OpenAI-compatible (translated). A plain answer and a Read round trip for
// each, and thinking to the Anthropic upstream; the request clamped to the
// alias's output cap, usage and cost on the key's access line.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runClaudeCode } from '../support/claude-code.ts';
import { PLAIN_ANSWER, quoteAnswer, SCRIPTED_OUTPUT_TOKENS, scriptedTokenCount, THINKING_TEXT } from '../support/scripted-upstreams.ts';
import { tempDir } from '../support/temp-dir.ts';
import { HAIKU_4, HAIKU_5, messagesLines, OPUS, OUTPUT_CAP, startMessagesGateway, UPSTREAM_KINDS, UPSTREAM_MODEL, type MessagesSetup } from '../gateway/messages-fixtures.ts';

const NOTE = 'The drawbridge is up.';

/** Nine runs of Claude Code (a few seconds each when idle) on a loaded machine: a hang bound, not a measurement. */
export const fileTimeoutMs = 300_000;

for (const kind of UPSTREAM_KINDS) {
  describe(`Claude Code through the gateway to an ${kind} upstream`, () => {
    let setup: MessagesSetup;
    before(async () => {
      setup = await startMessagesGateway(kind);
    });
    after(() => setup.close());

    test('claude -p "say hi": the answer printed; the request clamped, on the key, with its usage and cost', async () => {
      const linesBefore = messagesLines(setup.gw).length;
      const run = await runClaudeCode({ baseUrl: setup.gw.baseUrl, apiKey: setup.gw.key, prompt: 'say hi' });
      assert.deepEqual({ code: run.code, hung: run.hung, stdout: run.stdout, stderr: run.stderr }, { code: 0, hung: false, stdout: `${PLAIN_ANSWER}\n`, stderr: '' });
      assert.deepEqual(setup.upstream.violations, []);
      assert.deepEqual(setup.upstream.answered, ['text']);
      const received = setup.upstream.received[0]!;
      const body = JSON.parse(received.text) as Record<string, unknown>;
      assert.equal(body['model'], UPSTREAM_MODEL[OPUS]);
      assert.equal(body['max_tokens'] ?? body['max_completion_tokens'], OUTPUT_CAP);
      assert.equal(body['stream'], true);
      await setup.gw.flushUsage();
      const lines = messagesLines(setup.gw).slice(linesBefore);
      assert.equal(lines.length, 1);
      const line = lines[0]!;
      assert.deepEqual(
        { path: line['path'], status: line['status'], keyId: line['keyId'], alias: line['alias'], stream: line['stream'], promptTokens: line['promptTokens'], completionTokens: line['completionTokens'] },
        { path: '/v1/messages', status: 200, keyId: setup.gw.keyId, alias: OPUS, stream: true, promptTokens: scriptedTokenCount(received.text), completionTokens: SCRIPTED_OUTPUT_TOKENS },
      );
      assert.ok((line['costNanos'] as number) > 0, 'the alias is priced: the answer costs');
    });

    test('claude -p with a Read round trip: the upstream asks for the file, Claude Code reads it, the answer quotes it', async () => {
      const project = tempDir('claude-gw');
      const file = path.join(project, 'notes.txt');
      writeFileSync(file, NOTE);
      setup.upstream.script.readPath = file;
      const answeredBefore = setup.upstream.answered.length;
      try {
        const run = await runClaudeCode({ baseUrl: setup.gw.baseUrl, apiKey: setup.gw.key, prompt: 'What does notes.txt say?', projectDir: project });
        assert.deepEqual(setup.upstream.violations, []);
        assert.deepEqual(setup.upstream.answered.slice(answeredBefore), ['tool_use', 'text']);
        assert.deepEqual(setup.upstream.toolResults, [`1\t${NOTE}`]);
        assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code: 0, stdout: `${quoteAnswer(`1\t${NOTE}`)}\n`, stderr: '' });
      } finally {
        delete setup.upstream.script.readPath;
      }
    });

    if (kind === 'anthropic') {
      test('claude -p with thinking and a Read round trip: the signed thinking block goes back upstream unaltered', async () => {
        const project = tempDir('claude-gw-thinking');
        const file = path.join(project, 'notes.txt');
        writeFileSync(file, NOTE);
        Object.assign(setup.upstream.script, { readPath: file, thinking: true });
        const receivedBefore = setup.upstream.received.length;
        try {
          const run = await runClaudeCode({ baseUrl: setup.gw.baseUrl, apiKey: setup.gw.key, prompt: 'What does notes.txt say?', projectDir: project });
          assert.deepEqual(setup.upstream.violations, []);
          assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: `${quoteAnswer(`1\t${NOTE}`)}\n` });
          const [first, second] = setup.upstream.received.slice(receivedBefore);
          const n = first!.n;
          const history = (JSON.parse(second!.text) as { messages: Array<{ role: string; content: unknown }> }).messages;
          const assistant = history.find((m) => m.role === 'assistant')?.content as Array<Record<string, unknown>>;
          assert.deepEqual(assistant[0], { type: 'thinking', thinking: THINKING_TEXT, signature: `sig_fake${n}_${Buffer.from(THINKING_TEXT).toString('base64url')}` });
        } finally {
          delete setup.upstream.script.readPath;
          delete setup.upstream.script.thinking;
        }
      });
    }

    for (const alias of [HAIKU_5, HAIKU_4]) {
      test(`claude -p --model ${alias}: its alias serves it`, async () => {
        const run = await runClaudeCode({ baseUrl: setup.gw.baseUrl, apiKey: setup.gw.key, prompt: 'say hi', model: alias });
        assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code: 0, stdout: `${PLAIN_ANSWER}\n`, stderr: '' });
        assert.equal((JSON.parse(setup.upstream.received.at(-1)!.text) as Record<string, unknown>)['model'], UPSTREAM_MODEL[alias]);
        assert.deepEqual(setup.upstream.violations, []);
      });
    }
  });
}
