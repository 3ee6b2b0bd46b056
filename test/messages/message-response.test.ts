import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../src/chat/types.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { generateMessageId, stopReasonOf, toAnthropicMessage, usageOf } from '../../src/messages/message-response.ts';

function completion(
  message: { content?: string | null; refusal?: string | null; tool_calls?: ToolCall[] },
  finishReason: FinishReason | null,
  usage?: Usage,
): ChatCompletion {
  const body: ChatCompletion = {
    id: 'chatcmpl-up',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: message.content ?? null, refusal: message.refusal ?? null, tool_calls: message.tool_calls ?? [] },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
  };
  if (usage !== undefined) body.usage = usage;
  return body;
}

function call(id: string, name: string, args: string): ToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137, prompt_tokens_details: { cached_tokens: 100 } };

describe('toAnthropicMessage', () => {
  test('a text answer: exact body bytes, model the alias, usage split into uncached and cached input', () => {
    const body = toAnthropicMessage(completion({ content: 'Hello there.' }, 'stop', USAGE), 'claude-sonnet-4-5', { id: 'msg_fixed' });
    assert.equal(
      JSON.stringify(body),
      '{"id":"msg_fixed","type":"message","role":"assistant","model":"claude-sonnet-4-5",' +
        '"content":[{"type":"text","text":"Hello there."}],"stop_reason":"end_turn","stop_sequence":null,' +
        '"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":17}}',
    );
  });

  test('text and tool calls: text first, then one tool_use per call with the input parsed and the upstream id kept', () => {
    const body = toAnthropicMessage(
      completion(
        { content: 'Reading both.', tool_calls: [call('call_a', 'Read', '{"file_path":"/tmp/a"}'), call('call_b', 'Glob', '{"pattern":"**/*.ts","n":[1,{"x":null}]}')] },
        'tool_calls',
      ),
      'claude-opus-5-5',
      { id: 'msg_t' },
    );
    assert.deepEqual(body.content, [
      { type: 'text', text: 'Reading both.' },
      { type: 'tool_use', id: 'call_a', name: 'Read', input: { file_path: '/tmp/a' } },
      { type: 'tool_use', id: 'call_b', name: 'Glob', input: { pattern: '**/*.ts', n: [1, { x: null }] } },
    ]);
    assert.equal(body.stop_reason, 'tool_use');
    assert.equal(
      JSON.stringify(body.content[1]),
      '{"type":"tool_use","id":"call_a","name":"Read","input":{"file_path":"/tmp/a"}}',
    );
  });

  test('a tool-only answer (content null) has no text block; no usage from the upstream is all zeros', () => {
    const body = toAnthropicMessage(completion({ tool_calls: [call('call_1', 'Bash', '{}')] }, 'tool_calls'), 'a', { id: 'msg_1' });
    assert.deepEqual(body.content, [{ type: 'tool_use', id: 'call_1', name: 'Bash', input: {} }]);
    assert.deepEqual(body.usage, { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
  });

  test('empty text makes no block', () => {
    const body = toAnthropicMessage(completion({ content: '' }, 'stop'), 'a', { id: 'msg_1' });
    assert.deepEqual(body.content, []);
    assert.equal(body.stop_reason, 'end_turn');
  });

  test('a refusal is a text block and stop_reason refusal', () => {
    const body = toAnthropicMessage(completion({ refusal: 'I cannot help with that.' }, 'stop'), 'a', { id: 'msg_1' });
    assert.deepEqual(body.content, [{ type: 'text', text: 'I cannot help with that.' }]);
    assert.equal(body.stop_reason, 'refusal');
  });

  const stopCases: Array<[FinishReason | null, boolean, boolean, string]> = [
    ['stop', false, false, 'end_turn'],
    ['length', false, false, 'max_tokens'],
    ['length', true, false, 'max_tokens'],
    ['tool_calls', true, false, 'tool_use'],
    // Some servers finish a tool-calling answer with `stop`.
    ['stop', true, false, 'tool_use'],
    ['content_filter', false, false, 'refusal'],
    ['stop', false, true, 'refusal'],
    [null, false, false, 'end_turn'],
    [null, true, false, 'tool_use'],
  ];
  for (const [finish, tools, refused, expected] of stopCases) {
    test(`finish_reason ${finish}${tools ? ' with tool calls' : ''}${refused ? ' with a refusal' : ''} → ${expected}`, () => {
      assert.equal(stopReasonOf(finish, tools, refused), expected);
    });
  }

  test('empty arguments (a tool without parameters) are input {}', () => {
    const body = toAnthropicMessage(completion({ tool_calls: [call('call_1', 'ListAgents', '')] }, 'tool_calls'), 'a', { id: 'msg_1' });
    assert.deepEqual(body.content, [{ type: 'tool_use', id: 'call_1', name: 'ListAgents', input: {} }]);
    assert.equal(body.stop_reason, 'tool_use');
  });

  const cutArguments = ['{"file_path":"big.ts","content":"export const b', '', '{"a":1}[', '[1'];
  for (const args of cutArguments) {
    test(`a call cut by the output limit (arguments ${JSON.stringify(args)}) is left out, never input {}; stop_reason max_tokens`, () => {
      const cut = completion({ content: 'Writing both.', tool_calls: [call('call_a', 'Read', '{"file_path":"/tmp/a"}'), call('call_b', 'Write', args)] }, 'length', USAGE);
      const body = toAnthropicMessage(cut, 'a', { id: 'msg_1' });
      assert.deepEqual(body.content, [
        { type: 'text', text: 'Writing both.' },
        { type: 'tool_use', id: 'call_a', name: 'Read', input: { file_path: '/tmp/a' } },
      ]);
      assert.equal(body.stop_reason, 'max_tokens');
      assert.equal(body.usage.output_tokens, 17);
    });
  }

  const badArguments: Array<[string, string]> = [
    ['{"file_path": "/tmp/a"', 'are not valid JSON'],
    ['not json', 'are not valid JSON'],
    ['[1,2]', 'are not a JSON object'],
    ['"text"', 'are not a JSON object'],
    ['null', 'are not a JSON object'],
    ['42', 'are not a JSON object'],
  ];
  for (const [args, what] of badArguments) {
    test(`arguments ${JSON.stringify(args)} are the upstream's fault: 502 naming the call, never input {}`, () => {
      const bad = completion({ tool_calls: [call('call_ok', 'A', '{}'), call('call_bad', 'B', args)] }, 'tool_calls');
      assert.throws(
        () => toAnthropicMessage(bad, 'a'),
        (error: unknown) => {
          assert.ok(error instanceof UpstreamError);
          assert.equal(error.status, 502);
          assert.equal(error.code, 'bad_upstream_response');
          assert.equal(
            error.message,
            `The upstream provider returned tool call arguments that ${what} (at choices[0].message.tool_calls[1].function.arguments); a tool_use input must be a JSON object.`,
          );
          return true;
        },
      );
    });
  }

  test('cached tokens above prompt_tokens (a confused upstream) never make input_tokens negative', () => {
    const usage = usageOf({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_tokens_details: { cached_tokens: 9 } });
    assert.deepEqual(usage, { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, output_tokens: 1 });
  });

  test('generated ids: msg_ and 24 hex digits, distinct', () => {
    const a = generateMessageId();
    assert.match(a, /^msg_[0-9a-f]{24}$/);
    assert.notEqual(a, generateMessageId());
    assert.match(toAnthropicMessage(completion({ content: 'x' }, 'stop'), 'a').id, /^msg_[0-9a-f]{24}$/);
  });
});
