// The scripted upstreams and their constraints, without a gateway: what the
// real clients send keeps them (the captured fixtures), what Anthropic or
// OpenAI would refuse is refused in their shapes, the scripts do the round
// trip, and their streams keep the strict grammar.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { checkMessageStream } from './anthropic-message-stream-checker.ts';
import { anthropicEventStream } from './anthropic-answers.ts';
import { messagesRequestViolation } from './anthropic-messages-constraints.ts';
import { chatRequestViolation } from './openai-chat-constraints.ts';
import { repositoryRoot } from './repository-root.ts';
import { execCommandCall, PLAIN_ANSWER, quoteAnswer, SCRIPTED_UPSTREAM_KEY, scriptedTokenCount, startScriptedAnthropic, startScriptedOpenAI, THINKING_TEXT } from './scripted-upstreams.ts';

const FIXTURES = path.join(repositoryRoot(), 'test', 'fixtures', 'messages');

interface Captured {
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}

function fixture(name: string): Captured {
  return JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Captured;
}

test('every request the pinned clients sent keeps the strict Anthropic constraints', () => {
  const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.json'));
  assert.equal(names.length, 9);
  for (const name of names) {
    const captured = fixture(name);
    assert.equal(messagesRequestViolation(captured.body, { headers: captured.headers, countTokens: captured.path.startsWith('/v1/messages/count_tokens') }), undefined, name);
  }
});

test('what needs a beta header is refused without it, as Anthropic refuses an extra input', () => {
  const claude = fixture('claude-code-first.json');
  const without = (beta: string): Record<string, string> => ({ ...claude.headers, 'anthropic-beta': claude.headers['anthropic-beta']!.split(',').filter((b) => b !== beta).join(',') });
  assert.equal(messagesRequestViolation(claude.body, { headers: without('context-management-2025-06-27') }), 'context_management: Extra inputs are not permitted');
  assert.equal(messagesRequestViolation(claude.body, { headers: without('advanced-tool-use-2025-11-20') }), 'tools.10.custom.defer_loading: Extra inputs are not permitted');
  assert.equal(messagesRequestViolation(claude.body, { headers: without('per-turn-control-2026-07-01') }), 'messages.1.output_config: Extra inputs are not permitted');
  assert.equal(
    messagesRequestViolation(claude.body, { headers: claude.headers, betas: ['claude-code-20250219'] }),
    'Unexpected value(s) `interleaved-thinking-2025-05-14`, `context-management-2025-06-27`, `per-turn-control-2026-07-01`, `mid-conversation-tool-changes-2026-07-01`, `thinking-token-count-2026-05-13`, `advanced-tool-use-2025-11-20`, `effort-2025-11-24` for the `anthropic-beta` header. Please consult our documentation at docs.claude.com or try again without the header.',
  );
});

test('thinking: its documented bounds, and a signature that does not match is refused', () => {
  const base = { model: 'm', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] };
  assert.equal(messagesRequestViolation({ ...base, thinking: { type: 'enabled', budget_tokens: 1000 } }), 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
  assert.equal(messagesRequestViolation({ ...base, thinking: { type: 'enabled', budget_tokens: 4096 } }), '`max_tokens` must be greater than `thinking.budget_tokens`.');
  assert.equal(messagesRequestViolation({ ...base, thinking: { type: 'adaptive' }, temperature: 0.5 }), '`temperature` may only be set to 1 when thinking is enabled.');
  assert.equal(messagesRequestViolation({ ...base, thinking: { type: 'adaptive', display: 'full' } }), "thinking.adaptive.display: Input should be 'summarized' or 'omitted'");
  assert.equal(messagesRequestViolation({ ...base, thinking: { type: 'adaptive' }, tools: [{ name: 't', input_schema: { type: 'object' } }], tool_choice: { type: 'any' } }), 'Thinking may not be enabled when tool_choice forces tool use.');
  const history = {
    ...base,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'T', signature: 'good' }, { type: 'text', text: 'Hello.' }] },
      { role: 'user', content: 'again' },
    ],
  };
  const signatureValid = (thinking: string, signature: string): boolean => thinking === 'T' && signature === 'good';
  assert.equal(messagesRequestViolation(history, { signatureValid }), undefined);
  const altered = structuredClone(history);
  (altered.messages[1]!.content as unknown as Array<Record<string, string>>)[0]!['thinking'] = 'T, edited';
  assert.equal(messagesRequestViolation(altered, { signatureValid }), 'messages.1.content.0: Invalid `signature` in `thinking` block');
  assert.equal(messagesRequestViolation({ ...base, messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 'T', signature: 'good' }] }] }), 'messages.0.content.0: thinking blocks are only allowed in assistant messages');
});

test('count_tokens takes no max_tokens; a system message cannot open the conversation', () => {
  assert.equal(messagesRequestViolation({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { countTokens: true }), 'max_tokens: Extra inputs are not permitted');
  assert.equal(
    messagesRequestViolation({ model: 'm', max_tokens: 5, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] }),
    'messages.0.role: a system message cannot open the conversation: use the top-level system parameter',
  );
});

test('the OpenAI chat constraints: a tool message answers a call, every call is answered, no unknown field', () => {
  const call = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'Read', arguments: '{}' } }] };
  const ok = { model: 'm', messages: [{ role: 'user', content: 'hi' }, call, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] };
  assert.equal(chatRequestViolation(ok), undefined);
  assert.equal(chatRequestViolation({ ...ok, messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] }), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.");
  assert.equal(
    chatRequestViolation({ ...ok, messages: [{ role: 'user', content: 'hi' }, call, { role: 'user', content: 'and?' }] }),
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
  );
  assert.equal(chatRequestViolation({ ...ok, thinking: { type: 'adaptive' } }), 'Unrecognized request argument supplied: thinking');
  assert.equal(chatRequestViolation({ ...ok, stream_options: { include_usage: true } }), "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
  assert.equal(chatRequestViolation({ ...ok, messages: [{ role: 'user', content: 'hi' }, { ...call, tool_calls: [{ id: 'c', type: 'function', function: { name: 'Read', arguments: {} } }] }] }), "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got object instead.");
});

test('the Anthropic fake with the SDK: plain create and stream, then a Read round trip with a signed thinking block', async () => {
  const plain = await startScriptedAnthropic();
  const scripted = await startScriptedAnthropic({ readPath: '/srv/notes.txt', thinking: true });
  try {
    const client = new Anthropic({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL: plain.origin, maxRetries: 0 });
    const params = { model: 'up-1', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
    const created = await client.messages.create(params);
    assert.deepEqual(created.content, [{ type: 'text', text: PLAIN_ANSWER }]);
    const streamed = await client.messages.stream(params).finalMessage();
    assert.deepEqual(streamed.content, [{ type: 'text', text: PLAIN_ANSWER }]);
    assert.deepEqual(await client.messages.countTokens({ model: 'up-1', messages: params.messages }), { input_tokens: 15 });
    assert.deepEqual(plain.answered, ['text', 'text', 'count']);

    const agent = new Anthropic({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL: scripted.origin, maxRetries: 0 });
    const tools = [{ name: 'Read', description: 'Reads a file', input_schema: { type: 'object' as const, properties: { file_path: { type: 'string' } } } }];
    const first = await agent.messages.stream({ ...params, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tools }).finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content.map((b) => b.type), ['thinking', 'tool_use']);
    const [thinking, use] = first.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock];
    assert.equal(thinking.thinking, THINKING_TEXT);
    assert.deepEqual(use.input, { file_path: '/srv/notes.txt' });
    const history = [...params.messages, { role: 'assistant' as const, content: first.content }];
    const answer = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: use.id, content: '1\tHello' }] };
    const second = await agent.messages.create({ ...params, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tools, messages: [...history, answer] });
    assert.deepEqual(second.content.at(-1), { type: 'text', text: quoteAnswer('1\tHello') });
    assert.deepEqual(scripted.violations, []);

    // The same history with the thinking altered: Anthropic's refusal, kept in violations.
    const altered = [...params.messages, { role: 'assistant' as const, content: [{ ...thinking, thinking: 'edited' }, use] }, answer];
    await assert.rejects(agent.messages.create({ ...params, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tools, messages: altered }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError);
      assert.equal(error.message, '400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `signature` in `thinking` block"},"request_id":"req_fake3"}');
      return true;
    });
    assert.deepEqual(scripted.violations, ['messages.1.content.0: Invalid `signature` in `thinking` block']);
  } finally {
    await plain.close();
    await scripted.close();
  }
});

test('the Anthropic fake refuses a wrong key and answers a queued failure in Anthropic shape', async () => {
  const upstream = await startScriptedAnthropic();
  try {
    const wrong = new Anthropic({ apiKey: 'sk-wrong', baseURL: upstream.origin, maxRetries: 0 });
    await assert.rejects(wrong.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }), Anthropic.AuthenticationError);
    upstream.failures.push({ status: 529, type: 'overloaded_error', message: 'Overloaded' });
    const client = new Anthropic({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL: upstream.origin, maxRetries: 0 });
    await assert.rejects(client.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError);
      assert.equal(error.status, 529);
      assert.equal(error.requestID, 'req_fake2');
      return true;
    });
    assert.deepEqual(upstream.answered, ['failure']);
  } finally {
    await upstream.close();
  }
});

test('the Anthropic fake streams the strict grammar, tool input in pieces and a signed thinking block', () => {
  const text = anthropicEventStream({
    id: 'msg_1',
    model: 'm',
    content: [
      { type: 'thinking', thinking: 'Hmm, a file.', signature: 'sig' },
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a/b.txt' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 3, output_tokens: 2 },
  });
  const checked = checkMessageStream(text);
  assert.deepEqual(checked.message.content, [
    { type: 'thinking', thinking: 'Hmm, a file.', signature: 'sig' },
    { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a/b.txt' } },
  ]);
  assert.equal(checked.events.filter((e) => e === 'content_block_delta').length, 6);
  assert.throws(() => checkMessageStream(text.replace(/event: content_block_delta\ndata: \{[^\n]*signature_delta[^\n]*\n\n/, '')), /event 5 \(content_block_stop\): thinking block without its signature/);
});

test('the OpenAI fake: a Read call streamed in pieces, then the tool message quoted', async () => {
  const upstream = await startScriptedOpenAI({ readPath: '/srv/notes.txt' });
  try {
    const post = async (body: unknown): Promise<Response> =>
      fetch(`${upstream.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${SCRIPTED_UPSTREAM_KEY}` }, body: JSON.stringify(body) });
    const tools = [{ type: 'function', function: { name: 'Read', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } } }];
    const firstBody = { model: 'up-1', stream: true, stream_options: { include_usage: true }, tools, messages: [{ role: 'user', content: 'read it' }] };
    const first = await post(firstBody);
    const chunks = (await first.text()).split('\n\n').filter((frame) => frame.startsWith('data: {')).map((frame) => JSON.parse(frame.slice(6)) as Record<string, any>);
    const args = chunks.flatMap((c) => c['choices'].flatMap((choice: any) => choice.delta.tool_calls ?? [])).map((call: any) => call.function.arguments).join('');
    assert.equal(args, '{"file_path":"/srv/notes.txt"}');
    assert.equal(chunks.at(-2)?.['choices'][0].finish_reason, 'tool_calls');
    const prompt = scriptedTokenCount(JSON.stringify(firstBody));
    assert.deepEqual(chunks.at(-1)?.['usage'], { prompt_tokens: prompt, completion_tokens: 7, total_tokens: prompt + 7 });
    const second = await post({
      model: 'up-1',
      tools,
      messages: [
        { role: 'user', content: 'read it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_fake1', type: 'function', function: { name: 'Read', arguments: args } }] },
        { role: 'tool', tool_call_id: 'call_fake1', content: '1\tHello' },
      ],
    });
    const completion = (await second.json()) as Record<string, any>;
    assert.deepEqual(completion['choices'][0].message, { role: 'assistant', content: quoteAnswer('1\tHello'), refusal: null });
    assert.deepEqual(upstream.answered, ['tool_use', 'text']);
    assert.deepEqual(upstream.violations, []);
    const refused = await post({ model: 'up-1', messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'adaptive' } });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error: { message: 'Unrecognized request argument supplied: thinking', type: 'invalid_request_error', param: null, code: null } });
  } finally {
    await upstream.close();
  }
});

test('a stream cut after N events: the first N arrive, then the connection ends, once', async () => {
  const upstream = await startScriptedAnthropic();
  try {
    upstream.script.cutStreamAfter = 3;
    const res = await fetch(`${upstream.baseUrl}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': SCRIPTED_UPSTREAM_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await assert.rejects(res.text());
    assert.equal(upstream.script.cutStreamAfter, undefined);
    const client = new Anthropic({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL: upstream.origin, maxRetries: 0 });
    const whole = await client.messages.stream({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    assert.deepEqual(whole.content, [{ type: 'text', text: PLAIN_ANSWER }]);
    assert.deepEqual(upstream.answered, ['cut', 'text']);
  } finally {
    await upstream.close();
  }
});

test('the OpenAI fake scripting another tool: the exec_command of Codex as tool_calls, its tool message quoted, a missing offer a violation', async () => {
  const upstream = await startScriptedOpenAI({ toolCall: execCommandCall('cat notes.txt') });
  try {
    const post = async (body: unknown): Promise<Record<string, any>> =>
      (await fetch(`${upstream.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${SCRIPTED_UPSTREAM_KEY}` }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;
    const tools = [{ type: 'function', function: { name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } }];
    const first = await post({ model: 'up-1', tools, messages: [{ role: 'user', content: 'what is in notes.txt?' }] });
    const call = { id: 'call_fake1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"cat notes.txt"}' } };
    assert.deepEqual([first['choices'][0].message, first['choices'][0].finish_reason], [{ role: 'assistant', content: null, refusal: null, tool_calls: [call] }, 'tool_calls']);
    const second = await post({ model: 'up-1', tools, messages: [{ role: 'user', content: 'what is in notes.txt?' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_fake1', content: 'Output:\nThe drawbridge is up.\n' }] });
    assert.equal(second['choices'][0].message.content, quoteAnswer('Output:\nThe drawbridge is up.\n'));
    const unoffered = await post({ model: 'up-1', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(unoffered['choices'][0].message.content, PLAIN_ANSWER);
    assert.deepEqual(upstream.answered, ['tool_use', 'text', 'text']);
    assert.deepEqual(upstream.violations, ['request 3: the exec_command tool was not offered']);
  } finally {
    await upstream.close();
  }
});
