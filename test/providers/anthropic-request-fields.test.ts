// OpenAI's optional request fields on the way to Anthropic
// (src/providers/anthropic-request-fields.ts and the tool_choice of
// ./anthropic-request.ts): user and safety_identifier as metadata.user_id,
// parallel_tool_calls false as disable_parallel_tool_use, and a 400 for each
// field without an equivalent. Every body sent is held to the strict fake.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { toAnthropicRequest } from '../../src/providers/anthropic-translate.ts';
import { anthropicRequestViolation } from './anthropic-constraints.ts';

const TOOLS: ChatRequest['tools'] = [
  { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'g', parameters: { type: 'object', properties: {} } } },
];

function request(extra: Partial<ChatRequest>): ChatRequest {
  return { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], ...extra };
}

/** The body sent, after checking it keeps Anthropic's constraints. */
function sent(extra: Partial<ChatRequest>): ReturnType<typeof toAnthropicRequest> {
  const body = toAnthropicRequest(request(extra));
  assert.equal(anthropicRequestViolation(body), undefined);
  return body;
}

function refusal(extra: Partial<ChatRequest>): unknown {
  try {
    toAnthropicRequest(request(extra));
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return { status: error.status, ...error.toBody().error };
  }
  return assert.fail('expected a refusal');
}

describe('user and safety_identifier: metadata.user_id', () => {
  test('the exact body: metadata after the other fields', () => {
    assert.equal(
      JSON.stringify(sent({ user: 'user-4f2a', stop: ['END'] })),
      JSON.stringify({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        stop_sequences: ['END'],
        metadata: { user_id: 'user-4f2a' },
      }),
    );
  });

  test('either one, or both with one value', () => {
    assert.deepEqual(sent({ safety_identifier: 'hash-1' }).metadata, { user_id: 'hash-1' });
    assert.deepEqual(sent({ user: 'hash-1', safety_identifier: 'hash-1' }).metadata, { user_id: 'hash-1' });
    assert.equal('metadata' in sent({}), false);
  });

  test('both with different values: 400 naming user', () => {
    assert.deepEqual(refusal({ user: 'a', safety_identifier: 'b' }), {
      status: 400,
      type: 'invalid_request_error',
      param: 'user',
      code: 'invalid_value',
      message:
        "Invalid value for 'user': it differs from 'safety_identifier', and the provider behind this model alias takes one end-user id (metadata.user_id). Send one of them, or both with the same value.",
    });
  });

  test('Anthropic\'s bound: 512 characters sent, 513 a 400 naming the field; characters, not UTF-16 units', () => {
    assert.deepEqual(sent({ user: 'u'.repeat(512) }).metadata, { user_id: 'u'.repeat(512) });
    assert.deepEqual(sent({ user: '😀'.repeat(512) }).metadata, { user_id: '😀'.repeat(512) });
    assert.deepEqual(refusal({ user: 'u'.repeat(513) }), {
      status: 400,
      type: 'invalid_request_error',
      param: 'user',
      code: 'invalid_value',
      message: "Invalid value for 'user': 513 characters. The provider behind this model alias takes an end-user id of at most 512 characters; send a shorter one, such as a hash of it.",
    });
    assert.equal((refusal({ safety_identifier: '😀'.repeat(513) }) as { param: string }).param, 'safety_identifier');
  });
});

describe('parallel_tool_calls', () => {
  const cases: [string, Partial<ChatRequest>, unknown][] = [
    ['false without tool_choice: auto', {}, { type: 'auto', disable_parallel_tool_use: true }],
    ['false with auto', { tool_choice: 'auto' }, { type: 'auto', disable_parallel_tool_use: true }],
    ['false with required: any', { tool_choice: 'required' }, { type: 'any', disable_parallel_tool_use: true }],
    ['false with a named tool', { tool_choice: { type: 'function', function: { name: 'g' } } }, { type: 'tool', name: 'g', disable_parallel_tool_use: true }],
    ['false with none: none alone (no call can be made)', { tool_choice: 'none' }, { type: 'none' }],
  ];
  for (const [name, extra, choice] of cases) {
    test(name, () => {
      assert.deepEqual(sent({ tools: TOOLS, parallel_tool_calls: false, ...extra }).tool_choice, choice);
    });
  }

  test('true is Anthropic\'s default: nothing added', () => {
    assert.equal('tool_choice' in sent({ tools: TOOLS, parallel_tool_calls: true }), false);
    assert.deepEqual(sent({ tools: TOOLS, parallel_tool_calls: true, tool_choice: 'required' }).tool_choice, { type: 'any' });
  });

  test('false without tools: nothing to limit, nothing sent', () => {
    assert.equal('tool_choice' in sent({ parallel_tool_calls: false }), false);
  });

  test('the exact body', () => {
    assert.equal(
      JSON.stringify(sent({ tools: [TOOLS[0] as NonNullable<ChatRequest['tools']>[number]], parallel_tool_calls: false })),
      JSON.stringify({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      }),
    );
  });
});

describe('fields without an Anthropic equivalent: 400 unsupported_parameter', () => {
  const refused: [keyof ChatRequest, unknown, string][] = [
    ['seed', 7, 'Anthropic has no sampling seed, so the answer would not be repeatable as asked'],
    ['metadata', { team: 'a' }, "Anthropic's metadata holds only a user id (send it as 'user' or 'safety_identifier'), not key-value pairs"],
    ['logprobs', true, 'Anthropic returns no log probabilities'],
    ['top_logprobs', 2, 'Anthropic returns no log probabilities'],
    ['frequency_penalty', 0.5, 'Anthropic has no repetition penalties'],
    ['presence_penalty', -1, 'Anthropic has no repetition penalties'],
    ['logit_bias', { '50256': -100 }, "Anthropic has no token bias (and its token ids are not OpenAI's)"],
    ['reasoning_effort', 'low', "Anthropic's effort and extended-thinking settings differ by model and take other values, and the gateway does not guess from model names"],
    ['service_tier', 'auto', "Anthropic's service tiers are not OpenAI's"],
    ['prediction', { type: 'content', content: 'x' }, 'Anthropic has no predicted outputs'],
    ['verbosity', 'low', 'Anthropic has no verbosity setting'],
    ['store', true, 'Anthropic does not store completions for later retrieval'],
    ['prompt_cache_key', 'k', 'Anthropic caches prompts at cache_control breakpoints, not by a key'],
  ];
  for (const [field, value, why] of refused) {
    test(`${field}: ${JSON.stringify(value)}`, () => {
      assert.deepEqual(refusal({ [field]: value }), {
        status: 400,
        type: 'invalid_request_error',
        param: field,
        code: 'unsupported_parameter',
        message: `Unsupported parameter: '${field}' is not supported by the provider behind this model alias: ${why}. Remove it, or use a model alias served by an OpenAI-compatible provider.`,
      });
    });
  }

  test('a value that changes nothing is left out: store false, logprobs false, penalties 0, empty metadata and logit_bias', () => {
    const body = sent({ store: false, logprobs: false, frequency_penalty: 0, presence_penalty: 0, metadata: {}, logit_bias: {} });
    assert.deepEqual(body, { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
  });
});
