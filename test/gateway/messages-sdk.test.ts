// The official @anthropic-ai/sdk (pinned in test/package.json) against the
// live gateway's Messages door, for both upstream kinds: a strict scripted
// Anthropic upstream (the request passed through) and a strict scripted
// OpenAI-compatible one (the request translated). Create, stream (text, a tool
// call with input_json_delta, then the tool result), count_tokens, the output
// cap, the key's usage and cost, a stream cut mid-way; every streamed answer
// through the strict event-grammar checker; and to the Anthropic upstream, thinking with its
// signature kept across turns, and the beta allow-list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { usageCostNanos } from '../../src/limits/cost.ts';
import { checkMessageStream } from '../support/anthropic-message-stream-checker.ts';
import { PLAIN_ANSWER, quoteAnswer, SCRIPTED_OUTPUT_TOKENS, scriptedTokenCount, THINKING_TEXT } from '../support/scripted-upstreams.ts';
import { accessLine, CLAUDE_CODE_ALIASES, OPUS, OUTPUT_CAP, postMessages, PRICE, startMessagesGateway, UPSTREAM_KINDS, UPSTREAM_MODEL, type MessagesSetup } from './messages-fixtures.ts';

const READ_TOOL = { name: 'Read', description: 'Reads a file of the project.', input_schema: { type: 'object' as const, properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
const NOTES = '/srv/project/notes.txt';
const FILE_TEXT = '1\tThe drawbridge is up.';

function lastBody(setup: MessagesSetup): Record<string, any> {
  return JSON.parse(setup.upstream.received.at(-1)?.text ?? '{}') as Record<string, any>;
}

/** The max tokens an upstream was sent, whichever field its kind uses. */
function sentMaxTokens(body: Record<string, any>): unknown {
  return body['max_tokens'] ?? body['max_completion_tokens'];
}

for (const kind of UPSTREAM_KINDS) {
  describe(`@anthropic-ai/sdk through the gateway to an ${kind} upstream`, () => {
    let setup: MessagesSetup;
    let client: Anthropic;
    before(async () => {
      setup = await startMessagesGateway(kind);
      client = new Anthropic({ apiKey: setup.gw.key, baseURL: setup.gw.baseUrl, maxRetries: 0 });
    });
    after(() => setup.close());

    test('create: the answer in Anthropic shape, model the alias, request-id the gateway request id, usage and cost on the key', async () => {
      const requestId = `sdk-create-${kind}`;
      const { data, request_id } = await client.messages
        .create({ model: OPUS, max_tokens: 256, messages: [{ role: 'user', content: 'say hi' }] }, { headers: { 'x-request-id': requestId } })
        .withResponse();
      assert.equal(request_id, requestId);
      const received = setup.upstream.received.at(-1)!;
      const inputTokens = scriptedTokenCount(received.text);
      assert.equal(data.type, 'message');
      assert.equal(data.role, 'assistant');
      assert.equal(data.model, OPUS);
      assert.match(data.id, /^msg_/);
      assert.deepEqual(data.content, [{ type: 'text', text: PLAIN_ANSWER }]);
      assert.equal(data.stop_reason, 'end_turn');
      assert.equal(data.stop_sequence, null);
      assert.equal(data.usage.input_tokens, inputTokens);
      assert.equal(data.usage.output_tokens, SCRIPTED_OUTPUT_TOKENS);
      const body = lastBody(setup);
      assert.equal(body['model'], UPSTREAM_MODEL[OPUS]);
      assert.equal(sentMaxTokens(body), 256);
      assert.equal(JSON.stringify(received.headers).includes(setup.gw.key), false, 'the gateway key never goes upstream');
      assert.deepEqual(setup.upstream.violations, []);
      const line = await accessLine(setup.gw, requestId);
      const usage = { promptTokens: inputTokens, cachedTokens: 0, completionTokens: SCRIPTED_OUTPUT_TOKENS };
      assert.deepEqual(
        { path: line['path'], status: line['status'], keyId: line['keyId'], alias: line['alias'], stream: line['stream'], promptTokens: line['promptTokens'], completionTokens: line['completionTokens'], costNanos: line['costNanos'] },
        { path: '/v1/messages', status: 200, keyId: setup.gw.keyId, alias: OPUS, stream: false, promptTokens: inputTokens, completionTokens: SCRIPTED_OUTPUT_TOKENS, costNanos: usageCostNanos(usage, { ...PRICE, cachedInput: PRICE.input }) },
      );
    });

    test('max_tokens 128000 (Claude Code\'s) is clamped to the alias\'s output cap upstream', async () => {
      // Raw: the SDK itself refuses a non-streamed create this large ("Streaming is required...").
      const res = await postMessages(setup.gw, { model: OPUS, max_tokens: 128000, messages: [{ role: 'user', content: 'say hi' }] });
      assert.equal(res.status, 200, res.text);
      assert.equal(sentMaxTokens(lastBody(setup)), OUTPUT_CAP);
      assert.deepEqual(setup.upstream.violations, []);
    });

    test('stream: text events in the strict grammar, and the SDK rebuilds the same message', async () => {
      const res = await postMessages(setup.gw, { model: OPUS, max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'say hi' }] });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/event-stream/);
      const checked = checkMessageStream(res.text);
      assert.equal(checked.message.model, OPUS);
      assert.deepEqual(checked.message.content, [{ type: 'text', text: PLAIN_ANSWER }]);
      assert.equal(checked.message.stop_reason, 'end_turn');
      assert.equal(checked.message.usage['output_tokens'], SCRIPTED_OUTPUT_TOKENS);
      assert.equal(checked.message.usage['input_tokens'], scriptedTokenCount(setup.upstream.received.at(-1)!.text));
      const streamed = await client.messages.stream({ model: OPUS, max_tokens: 256, messages: [{ role: 'user', content: 'say hi' }] }).finalMessage();
      assert.deepEqual(streamed.content, [{ type: 'text', text: PLAIN_ANSWER }]);
      assert.equal(streamed.model, OPUS);
      assert.deepEqual(setup.upstream.violations, []);
    });

    test('stream: a tool call arrives as input_json_delta with its whole input, and the tool result comes back to the upstream', async () => {
      setup.upstream.script.readPath = NOTES;
      try {
        const question = { role: 'user' as const, content: 'What does notes.txt say?' };
        const res = await postMessages(setup.gw, { model: OPUS, max_tokens: 1024, stream: true, tools: [READ_TOOL], messages: [question] });
        assert.equal(res.status, 200);
        const checked = checkMessageStream(res.text);
        assert.equal(checked.message.stop_reason, 'tool_use');
        const use = checked.message.content.find((block) => block.type === 'tool_use');
        assert.ok(use !== undefined, 'a tool_use block');
        assert.equal(use.name, 'Read');
        assert.deepEqual(use.input, { file_path: NOTES });
        assert.ok(checked.events.includes('content_block_delta'));
        assert.ok(res.text.includes('"type":"input_json_delta"'), 'the input streamed as input_json_delta');

        const stream = client.messages.stream({
          model: OPUS,
          max_tokens: 1024,
          tools: [READ_TOOL],
          messages: [
            question,
            { role: 'assistant', content: [{ type: 'tool_use', id: use.id as string, name: 'Read', input: { file_path: NOTES } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id as string, content: FILE_TEXT }] },
          ],
        });
        const answer = await stream.finalMessage();
        assert.deepEqual(answer.content, [{ type: 'text', text: quoteAnswer(FILE_TEXT) }]);
        assert.deepEqual(setup.upstream.toolResults, [FILE_TEXT]);
        assert.deepEqual(setup.upstream.violations, []);
      } finally {
        delete setup.upstream.script.readPath;
        setup.upstream.toolResults.length = 0;
      }
    });

    test('the upstream stream cut after it began: an error event ends the stream, never message_stop, and the SDK throws', async () => {
      // Anthropic: message_start, ping, the text block's start and first delta. OpenAI: the role chunk and the first text chunk.
      setup.upstream.script.cutStreamAfter = kind === 'anthropic' ? 4 : 2;
      const res = await postMessages(setup.gw, { model: OPUS, max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'say hi' }] });
      assert.equal(res.status, 200);
      const checked = checkMessageStream(res.text);
      assert.equal(checked.events.includes('message_stop'), false);
      assert.equal(checked.events.at(-1), 'error');
      assert.equal(checked.error?.type, 'api_error');
      assert.deepEqual(setup.upstream.answered.at(-1), 'cut');
      setup.upstream.script.cutStreamAfter = kind === 'anthropic' ? 4 : 2;
      await assert.rejects(client.messages.stream({ model: OPUS, max_tokens: 256, messages: [{ role: 'user', content: 'say hi' }] }).finalMessage(), Anthropic.APIError);
    });

    test('count_tokens: never 0, system and tools counted, the source in x-portcullis-token-count', async () => {
      const messages = [{ role: 'user' as const, content: 'say hi' }];
      const bare = await client.messages.countTokens({ model: OPUS, messages }).withResponse();
      const source = bare.response.headers.get('x-portcullis-token-count');
      assert.equal(source, kind === 'anthropic' ? 'upstream' : 'estimate');
      assert.ok(bare.data.input_tokens > 0);
      if (kind === 'anthropic') {
        const counted = setup.upstream.received.at(-1)!;
        assert.equal(counted.url, '/v1/messages/count_tokens');
        assert.equal(bare.data.input_tokens, scriptedTokenCount(counted.text));
        assert.equal(JSON.parse(counted.text).model, UPSTREAM_MODEL[OPUS]);
      }
      const system = 'You are a careful assistant for a castle. '.repeat(200);
      const full = await client.messages.countTokens({ model: OPUS, system, tools: [READ_TOOL], messages });
      assert.ok(full.input_tokens > bare.data.input_tokens + 1000, `${full.input_tokens} counts the system prompt and tools`);
      assert.deepEqual(setup.upstream.violations, []);
    });
  });
}

describe('@anthropic-ai/sdk through the gateway to an Anthropic upstream: what is passed through', () => {
  let setup: MessagesSetup;
  let client: Anthropic;
  before(async () => {
    setup = await startMessagesGateway('anthropic', { thinking: true });
    client = new Anthropic({ apiKey: setup.gw.key, baseURL: setup.gw.baseUrl, maxRetries: 0 });
  });
  after(() => setup.close());

  test('thinking: the signed block streams through and, sent back with the tool result, the upstream accepts its signature', async () => {
    setup.upstream.script.readPath = NOTES;
    const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
    const question = { role: 'user' as const, content: 'What does notes.txt say?' };
    const res = await postMessages(setup.gw, { model: OPUS, max_tokens: 4096, stream: true, thinking, tools: [READ_TOOL], messages: [question] });
    assert.equal(res.status, 200);
    const checked = checkMessageStream(res.text);
    const [block, use] = checked.message.content;
    assert.deepEqual(block, { type: 'thinking', thinking: THINKING_TEXT, signature: `sig_fake1_${Buffer.from(THINKING_TEXT).toString('base64url')}` });
    assert.equal(use?.type, 'tool_use');
    const answer = await client.messages.create({
      model: OPUS,
      max_tokens: 4096,
      thinking,
      tools: [READ_TOOL],
      messages: [
        question,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: block!.thinking as string, signature: block!.signature as string },
            { type: 'tool_use', id: use!.id as string, name: 'Read', input: { file_path: NOTES } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.id as string, content: FILE_TEXT }] },
      ],
    });
    assert.deepEqual(setup.upstream.violations, []);
    assert.equal(answer.content.at(-1)?.type, 'text');
    assert.deepEqual(answer.content.at(-1), { type: 'text', text: quoteAnswer(FILE_TEXT) });
  });

  test('the answer is the upstream\'s own (its id, its blocks), with the alias as model', async () => {
    delete setup.upstream.script.readPath;
    const { data } = await client.messages.create({ model: OPUS, max_tokens: 64, messages: [{ role: 'user', content: 'say hi' }] }).withResponse();
    assert.equal(data.id, `msg_fake${setup.upstream.received.length}`);
    assert.equal(data.model, OPUS);
    assert.deepEqual(data.content, [{ type: 'text', text: PLAIN_ANSWER }]);
  });

  test('cache_control, metadata and Claude Code\'s betas reach the upstream; a beta outside the allow-list does not', async () => {
    const body = {
      model: OPUS,
      max_tokens: 64,
      metadata: { user_id: 'user-7' },
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'say hi', cache_control: { type: 'ephemeral' } }] }],
    };
    const res = await postMessages(setup.gw, body, { 'anthropic-beta': 'claude-code-20250219,context-management-2025-06-27,made-up-beta-2099-01-01', 'x-request-id': 'beta-1' });
    assert.equal(res.status, 200, res.text);
    const received = setup.upstream.received.at(-1)!;
    assert.deepEqual(JSON.parse(received.text), { ...body, model: UPSTREAM_MODEL[OPUS] });
    assert.equal(received.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(String(received.headers['anthropic-beta']).split(','), ['claude-code-20250219', 'context-management-2025-06-27']);
    assert.deepEqual(setup.upstream.violations, []);
    const line = await accessLine(setup.gw, 'beta-1');
    assert.equal(line['betasDropped'], 'made-up-beta-2099-01-01');
  });
});

test('models.list: the aliases in Anthropic\'s list shape, the key as the SDK sends it', async () => {
  const setup = await startMessagesGateway('anthropic');
  try {
    const client = new Anthropic({ apiKey: setup.gw.key, baseURL: setup.gw.baseUrl, maxRetries: 0 });
    const models: Anthropic.ModelInfo[] = [];
    for await (const model of client.models.list()) models.push(model);
    assert.deepEqual(models.map((m) => m.id).sort(), [...CLAUDE_CODE_ALIASES, 'service-auto'].sort());
    for (const model of models) {
      assert.equal(model.type, 'model');
      assert.equal(model.display_name, model.id);
      assert.match(model.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    }
  } finally {
    await setup.close();
  }
});
