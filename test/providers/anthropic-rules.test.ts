// Each request the Anthropic adapter used to send and Anthropic
// refuses, now translated faithfully or refused with a 400 naming the
// parameter before anything is sent. Every body that translates is also held
// to Anthropic's documented constraints (./anthropic-constraints.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatMessage, ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { type AnthropicRequest, toAnthropicRequest } from '../../src/providers/anthropic-translate.ts';
import { anthropicRequestViolation } from './anthropic-constraints.ts';

function request(messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'claude-test', messages, max_tokens: 64, ...extra };
}

const HI: ChatMessage[] = [{ role: 'user', content: 'Hi' }];

function translated(req: ChatRequest): AnthropicRequest {
  const body = toAnthropicRequest(req);
  assert.equal(anthropicRequestViolation(JSON.parse(JSON.stringify(body))), undefined);
  return body;
}

function refusal(req: ChatRequest): { param: string | null; message: string } {
  try {
    toAnthropicRequest(req);
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    const body = error.toBody().error;
    assert.equal(error.status, 400);
    assert.equal(body.type, 'invalid_request_error');
    assert.equal(body.code, 'invalid_value');
    return { param: body.param, message: body.message };
  }
  return assert.fail('expected a 400');
}

function call(id: string, name = 'f', args = '{}'): NonNullable<ChatMessage['tool_calls']>[number] {
  return { id, type: 'function', function: { name, arguments: args } };
}

describe('1. stop sequences', () => {
  test('an empty or whitespace-only stop sequence is a 400 naming it: there is no way to stop on it', () => {
    assert.deepEqual(refusal(request(HI, { stop: ['\n'] })), {
      param: 'stop[0]',
      message:
        "Invalid value for 'stop[0]': the stop sequence is empty or only whitespace. The provider behind this model alias refuses such stop sequences, and leaving it out would let the answer run past it. Remove it, or use a sequence with a visible character.",
    });
    assert.equal(refusal(request(HI, { stop: ['END', ' \t'] })).param, 'stop[1]');
    assert.equal(refusal(request(HI, { stop: '' })).param, 'stop');
    assert.equal(refusal(request(HI, { stop: ['\u3000'] })).param, 'stop[0]');
  });

  test('a stop sequence with a visible character is sent as it is, whitespace included', () => {
    assert.deepEqual(translated(request(HI, { stop: ['\nEND', ' x '] })).stop_sequences, ['\nEND', ' x ']);
  });
});

describe('2. a conversation without a user message', () => {
  test('only system or developer messages: a 400 naming messages', () => {
    assert.deepEqual(refusal(request([{ role: 'system', content: 'Be brief.' }, { role: 'developer', content: 'Really.' }])), {
      param: 'messages',
      message:
        "Invalid value for 'messages': there is no user message, only system or developer messages. The provider behind this model alias needs at least one user message to answer.",
    });
  });

  test("a user message whose content is '' or only whitespace: a 400 naming its content", () => {
    for (const content of ['', ' \n\t', [{ type: 'text' as const, text: '' }, { type: 'text' as const, text: '\n' }]]) {
      assert.deepEqual(refusal(request([{ role: 'system', content: 'S' }, { role: 'user', content }])), {
        param: 'messages[1].content',
        message:
          "Invalid value for 'messages[1].content': the user message is empty or only whitespace. The provider behind this model alias refuses text without a visible character, and leaving the message out would change the conversation. Remove the message or give it content.",
      });
    }
  });
});

describe('3. whitespace-only text', () => {
  test("an assistant's blank text beside its tool calls is left out (models emit \\n\\n before a call)", () => {
    const body = translated(
      request([
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '\n\n', tool_calls: [call('call_1')] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ]),
    );
    assert.deepEqual(body.messages[1], { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] });
  });

  test('a blank text part beside other content is left out; the rest is kept in order', () => {
    const body = translated(
      request([{ role: 'user', content: [{ type: 'text', text: ' ' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'text', text: 'What is it?' }] }]),
    );
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          { type: 'text', text: 'What is it?' },
        ],
      },
    ]);
  });

  test('a blank assistant message between user messages is left out; the user turns merge as Anthropic merges them', () => {
    const body = translated(request([{ role: 'user', content: 'a' }, { role: 'assistant', content: ' \n' }, { role: 'user', content: 'b' }]));
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }]);
  });

  test("a tool's blank result is a result without content; blank system text is left out", () => {
    const body = translated(
      request([
        { role: 'system', content: '  ' },
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: null, tool_calls: [call('t1'), call('t2')] },
        { role: 'tool', tool_call_id: 't1', content: '\n' },
        { role: 'tool', tool_call_id: 't2', content: [{ type: 'text', text: ' ' }, { type: 'text', text: 'ok' }] },
      ]),
    );
    assert.equal('system' in body, false);
    assert.deepEqual(body.messages[2], {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1' },
        { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'ok' }] },
      ],
    });
  });
});

describe('4. a conversation that ends with an assistant message', () => {
  const prefill =
    'the conversation ends with an assistant message. The provider behind this model alias would continue that message as the beginning of its own answer (a prefill), which is not what this request means. End the conversation with a user or tool message.';

  test('is a 400 naming the last message, however it ends', () => {
    assert.deepEqual(refusal(request([...HI, { role: 'assistant', content: 'Sure, ' }])), { param: 'messages[1].role', message: `Invalid value for 'messages[1].role': ${prefill}` });
    assert.equal(refusal(request([...HI, { role: 'assistant', content: '' }])).param, 'messages[1].role');
    assert.equal(refusal(request([...HI, { role: 'assistant', content: 'x' }, { role: 'system', content: 'Be brief.' }])).param, 'messages[1].role');
    assert.equal(refusal(request([...HI, { role: 'assistant', content: null, tool_calls: [call('c')] }])).param, 'messages[1].role');
  });

  test('an assistant message first is sent (Anthropic takes it); only the last one matters', () => {
    const body = translated(request([{ role: 'assistant', content: 'How can I help?' }, { role: 'user', content: 'Hi' }]));
    assert.deepEqual(body.messages.map((m) => m.role), ['assistant', 'user']);
  });
});

describe("5. tool-call ids outside Anthropic's pattern", () => {
  test('are encoded the same way in the call and its result, and decoded in the answer (see anthropic-tool-ids.test.ts)', () => {
    const body = translated(
      request(
        [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [call('functions.get_weather:0', 'get_weather', '{"city":"Oslo"}')] },
          { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '4°C' },
        ],
        { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }] },
      ),
    );
    assert.deepEqual(body.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'pcl_id-functions_002eget_005fweather_003a0', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'pcl_id-functions_002eget_005fweather_003a0', content: '4°C' }] },
    ]);
  });

  test('a call without a result, a result without a call and a repeated id are each a 400 naming the message', () => {
    assert.deepEqual(refusal(request([...HI, { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'a', content: 'x' }])), {
      param: 'messages[1].tool_calls[1].id',
      message:
        "Invalid value for 'messages[1].tool_calls[1].id': no tool message answers this tool call before the conversation goes on. The provider behind this model alias needs each tool call answered by a tool message with its tool_call_id, right after the assistant message.",
    });
    assert.deepEqual(refusal(request([...HI, { role: 'tool', tool_call_id: 'z', content: 'x' }])), {
      param: 'messages[1].tool_call_id',
      message:
        "Invalid value for 'messages[1].tool_call_id': it does not answer a tool call of the assistant message right before it. The provider behind this model alias needs every tool message to answer a tool call of the preceding assistant message.",
    });
    const twice: ChatMessage[] = [
      ...HI,
      { role: 'assistant', content: null, tool_calls: [call('a')] },
      { role: 'tool', tool_call_id: 'a', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [call('a')] },
      { role: 'tool', tool_call_id: 'a', content: 'y' },
    ];
    assert.equal(refusal(request(twice)).param, 'messages[3].tool_calls[0].id');
    const answeredTwice: ChatMessage[] = [...HI, { role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'tool', tool_call_id: 'a', content: 'x' }, { role: 'tool', tool_call_id: 'a', content: 'y' }];
    assert.equal(refusal(request(answeredTwice)).param, 'messages[3].tool_call_id');
  });

  test('text of the merged assistant turn comes before its calls, and a later call keeps its own index in errors', () => {
    const messages: ChatMessage[] = [...HI, { role: 'assistant', content: 'Let me look.' }, { role: 'assistant', content: 'x', tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'a', content: '1' }];
    assert.equal(refusal(request(messages)).param, 'messages[2].tool_calls[1].id');
  });
});

describe('6. temperature and top_p together', () => {
  test('a value that changes nothing (top_p 1, temperature 1) is left out; any other pair is a 400 naming top_p', () => {
    assert.deepEqual(refusal(request(HI, { temperature: 0.7, top_p: 0.9 })), {
      param: 'top_p',
      message:
        "Invalid value for 'top_p': 0.9 together with temperature 0.7. The provider behind this model alias refuses temperature and top_p in one request; set only one of them.",
    });
    const topOne = translated(request(HI, { temperature: 0.7, top_p: 1 }));
    assert.deepEqual([topOne.temperature, 'top_p' in topOne], [0.7, false]);
    const tempOne = translated(request(HI, { temperature: 1, top_p: 0.5 }));
    assert.deepEqual(['temperature' in tempOne, tempOne.top_p], [false, 0.5]);
    const both = translated(request(HI, { temperature: 1, top_p: 1 }));
    assert.deepEqual([both.temperature, 'top_p' in both], [1, false]);
  });
});

describe('7. system text parts', () => {
  test('each part is its own text block, never joined without a separator', () => {
    const body = translated(request([{ role: 'system', content: [{ type: 'text', text: 'part 1' }, { type: 'text', text: 'part 2' }] }, ...HI]));
    assert.deepEqual(body.system, [
      { type: 'text', text: 'part 1' },
      { type: 'text', text: 'part 2' },
    ]);
  });
});

describe('tool definitions', () => {
  test('parameters without a type are an object schema; another type is a 400', () => {
    const tools = (parameters: Record<string, unknown>): ChatRequest['tools'] => [{ type: 'function', function: { name: 'f', parameters } }];
    assert.deepEqual(translated(request(HI, { tools: tools({ properties: { a: { type: 'string' } } }) })).tools, [
      { name: 'f', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
    ]);
    assert.deepEqual(refusal(request(HI, { tools: tools({ type: 'string' }) })), {
      param: 'tools[0].function.parameters.type',
      message: "Invalid value for 'tools[0].function.parameters.type': the provider behind this model alias needs a tool's parameters to be a schema of type \"object\".",
    });
  });
});
