// The Vercel AI SDK's Anthropic provider (`@ai-sdk/anthropic` with `ai`,
// pinned in test/package.json) with its `baseURL` at the gateway, to both
// upstream kinds: generateText, and streamText running a tool in two steps
// (the tool call streamed, the SDK runs the tool, the result goes back). Every
// streamed answer is read through the strict event-grammar checker too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { checkMessageStream } from '../support/anthropic-message-stream-checker.ts';
import { PLAIN_ANSWER, quoteAnswer } from '../support/scripted-upstreams.ts';
import { OPUS, startMessagesGateway, UPSTREAM_KINDS, type MessagesSetup } from '../gateway/messages-fixtures.ts';

const CALL = { maxRetries: 0, timeout: 20_000 } as const;
const NOTES = '/srv/project/notes.txt';
const FILE_TEXT = '1\tThe drawbridge is up.';

/** A fetch that keeps the text of every event-stream answer it passes on. */
function teeingFetch(streams: Array<Promise<string>>): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) streams.push(response.clone().text());
    return response;
  };
}

for (const kind of UPSTREAM_KINDS) {
  describe(`@ai-sdk/anthropic through the gateway to an ${kind} upstream`, () => {
    let setup: MessagesSetup;
    before(async () => {
      setup = await startMessagesGateway(kind);
    });
    after(() => setup.close());

    test('generateText: the upstream\'s answer', async () => {
      const anthropic = createAnthropic({ apiKey: setup.gw.key, baseURL: `${setup.gw.baseUrl}/v1` });
      const result = await generateText({ model: anthropic(OPUS), prompt: 'say hi', ...CALL });
      assert.equal(result.text, PLAIN_ANSWER);
      assert.equal(result.finishReason, 'stop');
      assert.equal(result.response.modelId, OPUS);
      assert.ok((result.usage.inputTokens ?? 0) > 0);
      assert.deepEqual(setup.upstream.violations, []);
    });

    test('streamText with a tool: the call streamed, the tool run by the SDK, its result quoted in the second step', async () => {
      setup.upstream.script.readPath = NOTES;
      try {
        const streams: Array<Promise<string>> = [];
        const anthropic = createAnthropic({ apiKey: setup.gw.key, baseURL: `${setup.gw.baseUrl}/v1`, fetch: teeingFetch(streams) });
        const ran: unknown[] = [];
        const result = streamText({
          model: anthropic(OPUS),
          prompt: 'What does notes.txt say?',
          stopWhen: stepCountIs(2),
          tools: {
            Read: tool({
              description: 'Reads a file of the project.',
              inputSchema: jsonSchema<{ file_path: string }>({ type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'], additionalProperties: false }),
              execute: async (input) => {
                ran.push(input);
                return FILE_TEXT;
              },
            }),
          },
          ...CALL,
        });
        assert.equal(await result.text, quoteAnswer(FILE_TEXT));
        assert.deepEqual(ran, [{ file_path: NOTES }]);
        assert.deepEqual(setup.upstream.answered.slice(-2), ['tool_use', 'text']);
        assert.deepEqual(setup.upstream.violations, []);
        const [first, second] = await Promise.all(streams);
        const call = checkMessageStream(first as string);
        assert.equal(call.message.stop_reason, 'tool_use');
        assert.deepEqual(call.message.content.find((b) => b.type === 'tool_use')?.input, { file_path: NOTES });
        assert.equal(checkMessageStream(second as string).message.stop_reason, 'end_turn');
      } finally {
        delete setup.upstream.script.readPath;
      }
    });
  });
}
