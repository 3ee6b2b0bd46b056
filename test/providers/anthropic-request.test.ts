import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatMessage, ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { toAnthropicRequest } from '../../src/providers/anthropic-translate.ts';
import { fixtureJson } from '../fixtures/anthropic/fixtures.ts';

function request(messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'claude-test', messages, max_tokens: 64, ...extra };
}

function rejection(req: ChatRequest): unknown {
  try {
    toAnthropicRequest(req);
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return { status: error.status, body: error.toBody() };
  }
  return assert.fail('expected a rejection');
}

describe('toAnthropicRequest: the fixture', () => {
  test('system/developer hoisted, turns merged, images, tool calls and results, tools, tool_choice, stop, limits', () => {
    const input = fixtureJson<ChatRequest>('request.openai.json');
    const before = JSON.stringify(input);
    assert.deepEqual(toAnthropicRequest(input), fixtureJson('request.anthropic.json'));
    assert.equal(JSON.stringify(input), before, 'the input is not modified');
  });
});

describe('toAnthropicRequest: fields', () => {
  test('a minimal request', () => {
    assert.deepEqual(toAnthropicRequest(request([{ role: 'user', content: 'Hi' }])), {
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
  });

  test('max_tokens: max_completion_tokens, else max_tokens, else the spec default 4096', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    assert.equal(toAnthropicRequest({ model: 'm', messages, max_completion_tokens: 7 }).max_tokens, 7);
    assert.equal(toAnthropicRequest({ model: 'm', messages, max_tokens: 9 }).max_tokens, 9);
    assert.equal(toAnthropicRequest({ model: 'm', messages }).max_tokens, 4096);
  });

  test('stop: a string becomes a one-entry list, a list is copied', () => {
    const stop = ['a', 'b'];
    const body = toAnthropicRequest(request([{ role: 'user', content: 'Hi' }], { stop }));
    assert.deepEqual(body.stop_sequences, ['a', 'b']);
    assert.notEqual(body.stop_sequences, stop);
    assert.deepEqual(toAnthropicRequest(request([{ role: 'user', content: 'Hi' }], { stop: 'x' })).stop_sequences, ['x']);
  });

  test('stream only when true; stream_options, n and response_format text are not sent', () => {
    const base = [{ role: 'user' as const, content: 'Hi' }];
    assert.equal('stream' in toAnthropicRequest(request(base, { stream: false })), false);
    assert.deepEqual(toAnthropicRequest(request(base, { stream: true, stream_options: { include_usage: true }, n: 1, response_format: { type: 'text' } })), {
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: true,
    });
  });

  test('temperature 0 to 1 and top_p pass through alone', () => {
    const base = [{ role: 'user' as const, content: 'Hi' }];
    assert.equal(toAnthropicRequest(request(base, { temperature: 0 })).temperature, 0);
    assert.equal(toAnthropicRequest(request(base, { top_p: 0 })).top_p, 0);
    assert.equal(toAnthropicRequest(request(base, { temperature: 1 })).temperature, 1);
  });

  test('tool_choice none, auto, required and named', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }];
    const base = [{ role: 'user' as const, content: 'Hi' }];
    assert.deepEqual(toAnthropicRequest(request(base, { tools, tool_choice: 'none' })).tool_choice, { type: 'none' });
    assert.deepEqual(toAnthropicRequest(request(base, { tools, tool_choice: 'auto' })).tool_choice, { type: 'auto' });
    assert.deepEqual(toAnthropicRequest(request(base, { tools, tool_choice: 'required' })).tool_choice, { type: 'any' });
    assert.deepEqual(
      toAnthropicRequest(request(base, { tools, tool_choice: { type: 'function', function: { name: 'f' } } })).tool_choice,
      { type: 'tool', name: 'f' },
    );
    assert.deepEqual(toAnthropicRequest(request(base, { tools })).tools, [
      { name: 'f', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
    ]);
    assert.equal('tools' in toAnthropicRequest(request(base, { tools: [] })), false);
  });
});

describe('toAnthropicRequest: messages', () => {
  test('system and developer anywhere become system text blocks in order, one per part; empty ones are skipped', () => {
    const body = toAnthropicRequest(
      request([
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: 'First.' },
        { role: 'assistant', content: 'Hello' },
        { role: 'system', content: '' },
        { role: 'system', content: [{ type: 'text', text: 'Second' }, { type: 'text', text: '.' }] },
        { role: 'user', content: 'Go on' },
      ]),
    );
    assert.deepEqual(body.system, [
      { type: 'text', text: 'First.' },
      { type: 'text', text: 'Second' },
      { type: 'text', text: '.' },
    ]);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] },
      { role: 'user', content: [{ type: 'text', text: 'Go on' }] },
    ]);
  });

  test('no system key when there is no system text', () => {
    assert.equal('system' in toAnthropicRequest(request([{ role: 'system', content: '' }, { role: 'user', content: 'Hi' }])), false);
  });

  test('consecutive same-role messages merge into one turn', () => {
    const body = toAnthropicRequest(
      request([
        { role: 'user', content: 'a' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: 'c' },
        { role: 'assistant', content: [{ type: 'text', text: 'd' }] },
        { role: 'user', content: 'e' },
      ]),
    );
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'c' }, { type: 'text', text: 'd' }] },
      { role: 'user', content: [{ type: 'text', text: 'e' }] },
    ]);
  });

  test('a user message before tool results: tool_result blocks move first, each group keeps its order', () => {
    const body = toAnthropicRequest(
      request([
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 't2', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'user', content: 'hurry' },
        { role: 'tool', tool_call_id: 't1', content: 'one' },
        { role: 'user', content: 'please' },
        { role: 'tool', tool_call_id: 't2', content: 'two' },
      ]),
    );
    assert.deepEqual(body.messages[2], {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'one' },
        { type: 'tool_result', tool_use_id: 't2', content: 'two' },
        { type: 'text', text: 'hurry' },
        { type: 'text', text: 'please' },
      ],
    });
  });

  test('empty text beside other content is dropped and an empty assistant turn is omitted', () => {
    const body = toAnthropicRequest(
      request([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: '' },
        { role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'again' }] },
      ]),
    );
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: 'again' }] }]);
  });

  test('an assistant refusal is sent as its text', () => {
    const body = toAnthropicRequest(
      request([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, refusal: "I can't help with that." },
        { role: 'user', content: 'OK' },
      ]),
    );
    assert.deepEqual(body.messages[1], { role: 'assistant', content: [{ type: 'text', text: "I can't help with that." }] });
  });

  test('a tool message with empty content has no content key', () => {
    const body = toAnthropicRequest(
      request([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 't2', type: 'function', function: { name: 'f', arguments: ' ' } }] },
        { role: 'tool', tool_call_id: 't1', content: '' },
        { role: 'tool', tool_call_id: 't2', content: [{ type: 'text', text: '' }] },
      ]),
    );
    assert.deepEqual(body.messages.slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'f', input: {} },
          { type: 'tool_use', id: 't2', name: 'f', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1' },
          { type: 'tool_result', tool_use_id: 't2' },
        ],
      },
    ]);
  });
});

describe('toAnthropicRequest: what Anthropic cannot take is a 400', () => {
  test('temperature above 1 is refused with the range, not clamped', () => {
    for (const temperature of [1.01, 2]) {
      assert.deepEqual(rejection(request([{ role: 'user', content: 'Hi' }], { temperature })), {
        status: 400,
        body: {
          error: {
            message: `Invalid value for 'temperature': ${temperature}. The provider behind this model alias accepts a temperature from 0 to 1.`,
            type: 'invalid_request_error',
            param: 'temperature',
            code: 'invalid_value',
          },
        },
      });
    }
  });

  test('response_format json_object is refused', () => {
    assert.deepEqual(rejection(request([{ role: 'user', content: 'JSON please' }], { response_format: { type: 'json_object' } })), {
      status: 400,
      body: {
        error: {
          message:
            "Invalid value for 'response_format.type': 'json_object' is not supported by the provider behind this model alias. " +
            'Ask for JSON in the prompt, or use a model alias served by an OpenAI-compatible provider.',
          type: 'invalid_request_error',
          param: 'response_format.type',
          code: 'invalid_value',
        },
      },
    });
  });

  test('tool call arguments that are not JSON name their path', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 't2', type: 'function', function: { name: 'f', arguments: '{"city": ' } }] },
    ];
    assert.deepEqual(rejection(request(messages)), {
      status: 400,
      body: {
        error: {
          message:
            "Invalid value for 'messages[1].tool_calls[1].function.arguments': the arguments are not valid JSON, and the provider behind this model alias needs them as a JSON object.",
          type: 'invalid_request_error',
          param: 'messages[1].tool_calls[1].function.arguments',
          code: 'invalid_value',
        },
      },
    });
  });

  test('tool call arguments that are JSON but not an object', () => {
    for (const args of ['[1]', '"x"', 'null', '3']) {
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: args } }] },
      ];
      assert.deepEqual(rejection(request(messages)), {
        status: 400,
        body: {
          error: {
            message: "Invalid value for 'messages[1].tool_calls[0].function.arguments': the provider behind this model alias needs the arguments as a JSON object.",
            type: 'invalid_request_error',
            param: 'messages[1].tool_calls[0].function.arguments',
            code: 'invalid_value',
          },
        },
      }, args);
    }
  });
});
