import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkChatRequest, validateChatRequest } from '../../src/chat/request-validator.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { body, MODEL, REJECTIONS, USER, WEATHER_TOOL } from './request-fixtures.ts';

function rejectionOf(value: unknown): InvalidRequestError {
  try {
    validateChatRequest(value);
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError, `expected InvalidRequestError, got ${String(err)}`);
    return err;
  }
  assert.fail('the request was accepted');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('validateChatRequest rejects with the exact OpenAI-style error', () => {
  for (const fixture of REJECTIONS) {
    test(fixture.name, () => {
      const err = rejectionOf(JSON.parse(fixture.text));
      assert.equal(err.status, 400);
      assert.deepEqual(err.toBody(), {
        error: { message: fixture.message, type: 'invalid_request_error', param: fixture.param, code: fixture.code },
      });
    });
  }
});

describe('validateChatRequest accepts what the limits allow', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['256 messages', { messages: Array.from({ length: 256 }, () => USER) }],
    ['64 tools', { tools: Array.from({ length: 64 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })) }],
    ['4 stop entries', { stop: ['a', 'b', 'c', 'd'] }],
    ['temperature 0', { temperature: 0 }],
    ['temperature 2', { temperature: 2 }],
    ['top_p 0', { top_p: 0 }],
    ['top_p 1', { top_p: 1 }],
    ['max_tokens 1', { max_tokens: 1 }],
    ['max_completion_tokens 1000000', { max_completion_tokens: 1_000_000 }],
    ['a 64-character function name', { tools: [{ type: 'function', function: { name: `a-_${'Z9'.repeat(30)}x` } }] }],
    ['a 256-character model', { model: 'm'.repeat(256) }],
  ];
  for (const [name, extra] of cases) {
    test(name, () => {
      const request = validateChatRequest(body(extra));
      for (const [key, value] of Object.entries(extra)) assert.deepEqual((request as unknown as Record<string, unknown>)[key], value);
    });
  }
});

describe('what real SDKs send passes, normalised to what is forwarded', () => {
  test('openai-node tool loop: the response message pushed back into history', () => {
    const history = {
      model: MODEL,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '22 C' },
      ],
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
    };
    const expected = {
      model: MODEL,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '22 C' },
      ],
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
    };
    assert.deepEqual(validateChatRequest(deepFreeze(history)), expected);
  });

  test('a full response message echoed back: audio and function_call null, annotations, refusal string', () => {
    const request = validateChatRequest(
      body({
        messages: [
          USER,
          { role: 'assistant', content: 'No.', refusal: null, annotations: [{ type: 'url_citation' }], audio: null, function_call: null, tool_calls: [] },
          { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
          { role: 'assistant', content: 'Here', audio: { id: 'audio_1', data: 'xx', expires_at: 1, transcript: 'Here' } },
          USER,
        ],
      }),
    );
    assert.deepEqual(request.messages, [
      USER,
      { role: 'assistant', content: 'No.' },
      { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
      { role: 'assistant', content: 'Here' },
      USER,
    ]);
  });

  test('openai-node runTools / parse() helpers: parsed and parsed_arguments echoed back', () => {
    const request = validateChatRequest(
      body({
        messages: [
          USER,
          {
            role: 'assistant',
            content: null,
            refusal: null,
            parsed: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}', parsed_arguments: { city: 'Oslo' } } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
          { role: 'assistant', content: '{"a":1}', refusal: null, parsed: { a: 1 } },
          USER,
        ],
        tools: [WEATHER_TOOL],
      }),
    );
    assert.deepEqual(request.messages, [
      USER,
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: '{"a":1}' },
      USER,
    ]);
  });

  test('openai-python parse(): stream false; LangChain: stream false and n 1', () => {
    assert.deepEqual(validateChatRequest(body({ stream: false })), { model: MODEL, messages: [USER], stream: false });
    assert.deepEqual(validateChatRequest(body({ stream: false, n: 1, temperature: 0.7 })), {
      model: MODEL,
      messages: [USER],
      stream: false,
      n: 1,
      temperature: 0.7,
    });
  });

  test('LangChain ToolMessage: name on a tool message is accepted and not forwarded', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
    assert.deepEqual(
      validateChatRequest({
        model: MODEL,
        messages: [USER, { role: 'assistant', content: '', tool_calls: [call] }, { role: 'tool', content: 'sunny', name: 'get_weather', tool_call_id: 'call_1' }],
      }),
      {
        model: MODEL,
        messages: [USER, { role: 'assistant', content: '', tool_calls: [call] }, { role: 'tool', content: 'sunny', tool_call_id: 'call_1' }],
      },
    );
  });

  test('Vercel AI SDK openai-compatible: stream with usage, reasoning_content, text-part tool results', () => {
    const request = validateChatRequest({
      model: MODEL,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: '',
          reasoning_content: 'The user wants weather.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: '22 C' }] },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'd', parameters: { type: 'object' }, strict: null } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 512,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.deepEqual(request, {
      model: MODEL,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: '22 C' }] },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'd', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 512,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test('@ai-sdk/openai reasoning model: developer role and max_completion_tokens', () => {
    assert.deepEqual(validateChatRequest(body({ messages: [{ role: 'developer', content: 'd' }, USER], max_completion_tokens: 2000 })), {
      model: MODEL,
      messages: [{ role: 'developer', content: 'd' }, USER],
      max_completion_tokens: 2000,
    });
  });

  test('explicit nulls on nullable fields are absent', () => {
    const request = validateChatRequest(
      body({
        temperature: null,
        top_p: null,
        max_tokens: null,
        max_completion_tokens: 10,
        stop: null,
        stream: null,
        stream_options: null,
        n: null,
      }),
    );
    assert.deepEqual(request, { model: MODEL, messages: [USER], max_completion_tokens: 10 });
  });

  test('images by https URL, with and without detail; text parts in system and tool messages', () => {
    const request = validateChatRequest(
      body({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], name: 'rules' },
          {
            role: 'user',
            name: 'ann',
            content: [
              { type: 'text', text: 'Compare' },
              { type: 'image_url', image_url: { url: 'https://img.test/a.png' } },
              { type: 'image_url', image_url: { url: 'https://img.test/b.png?x=1', detail: 'high' } },
            ],
          },
        ],
      }),
    );
    assert.deepEqual(request.messages, [
      { role: 'system', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], name: 'rules' },
      {
        role: 'user',
        name: 'ann',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image_url', image_url: { url: 'https://img.test/a.png' } },
          { type: 'image_url', image_url: { url: 'https://img.test/b.png?x=1', detail: 'high' } },
        ],
      },
    ]);
  });

  test('assistant content as text and refusal parts: text kept, refusal moved to the refusal field', () => {
    const request = validateChatRequest(
      body({
        messages: [
          USER,
          { role: 'assistant', content: [{ type: 'text', text: 'Part one.' }, { type: 'refusal', refusal: 'Not that.' }] },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'Ignored.' }], refusal: 'Kept.' },
        ],
      }),
    );
    assert.deepEqual(request.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'text', text: 'Part one.' }], refusal: 'Not that.' },
      { role: 'assistant', content: null, refusal: 'No.' },
      { role: 'assistant', content: null, refusal: 'Kept.' },
    ]);
  });

  test('no-op values are dropped: empty tools, stop and tool_calls; tool_choice none without tools; empty stream_options', () => {
    assert.deepEqual(
      validateChatRequest(
        body({
          messages: [USER, { role: 'assistant', content: 'ok', tool_calls: [] }],
          tools: [],
          stop: [],
          tool_choice: 'none',
          stream: true,
          stream_options: {},
        }),
      ),
      { model: MODEL, messages: [USER, { role: 'assistant', content: 'ok' }], stream: true },
    );
    assert.deepEqual(validateChatRequest(body({ tool_choice: 'none' })), { model: MODEL, messages: [USER] });
  });

  test('tool_choice none, required and a string stop are forwarded', () => {
    const request = validateChatRequest(body({ tools: [WEATHER_TOOL], tool_choice: 'required', stop: '\n\n' }));
    assert.equal(request.tool_choice, 'required');
    assert.equal(request.stop, '\n\n');
    assert.equal(validateChatRequest(body({ tools: [WEATHER_TOOL], tool_choice: 'none' })).tool_choice, 'none');
  });

  test('response_format text and json_object', () => {
    assert.deepEqual(validateChatRequest(body({ response_format: { type: 'json_object' } })).response_format, { type: 'json_object' });
    assert.deepEqual(validateChatRequest(body({ response_format: { type: 'text' } })).response_format, { type: 'text' });
  });
});

describe('the result is fresh and the input untouched', () => {
  test('frozen input validates; no object of the result is an object of the input, except parameters', () => {
    const input = deepFreeze(
      body({
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
        tools: [WEATHER_TOOL],
        stop: ['a'],
        stream: true,
        stream_options: { include_usage: false },
      }),
    );
    const before = JSON.stringify(input);
    const request = validateChatRequest(input);
    assert.equal(JSON.stringify(input), before);
    const messages = input['messages'] as { content: unknown[] }[];
    assert.notEqual(request.messages, messages);
    assert.notEqual(request.messages[0], messages[0]);
    assert.notEqual(request.messages[0]?.content, messages[0]?.content);
    assert.notEqual(request.stop, input['stop']);
    assert.notEqual(request.tools?.[0], WEATHER_TOOL);
    assert.notEqual(request.tools?.[0]?.function, WEATHER_TOOL.function);
    assert.equal(request.tools?.[0]?.function.parameters, WEATHER_TOOL.function.parameters);
    assert.notEqual(request.stream_options, input['stream_options']);
  });

  test('__proto__ keys from JSON are reported, never applied', () => {
    const input: unknown = JSON.parse(
      '{"model":"service-chat","messages":[{"role":"user","content":[{"type":"text","text":"x","__proto__":{"polluted":true}}]}]}',
    );
    const err = rejectionOf(input);
    assert.equal(err.param, 'messages[0].content[0].__proto__');
    assert.equal(err.code, 'unknown_parameter');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  test('a __proto__ key inside a tool schema is carried as data', () => {
    const input: unknown = JSON.parse(
      '{"model":"service-chat","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"__proto__":{"a":1}}}}]}',
    );
    const parameters = validateChatRequest(input).tools?.[0]?.function.parameters;
    assert.ok(parameters !== undefined && Object.hasOwn(parameters, '__proto__'));
    assert.equal(Object.getPrototypeOf(parameters), Object.prototype);
  });

  test('the result objects have only the known keys and ordinary prototypes', () => {
    const request = validateChatRequest(body());
    assert.equal(Object.getPrototypeOf(request), Object.prototype);
    assert.deepEqual(Object.keys(request), ['model', 'messages']);
  });
});

describe('values only a JavaScript caller can pass', () => {
  test('own properties holding undefined are absent', () => {
    assert.deepEqual(validateChatRequest({ model: MODEL, messages: [{ role: 'user', content: 'x', name: undefined }], temperature: undefined }), {
      model: MODEL,
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.deepEqual(validateChatRequest(body({ stream: true, stream_options: { include_usage: undefined } })), { model: MODEL, messages: [USER], stream: true });
  });

  test('NaN temperature is out of range; undefined in an array is not JSON', () => {
    assert.equal(rejectionOf(body({ temperature: Number.NaN })).message, "Invalid value for 'temperature': NaN. Expected a number from 0 to 2.");
    assert.equal(
      rejectionOf(body({ messages: [undefined] })).message,
      "Invalid type for 'messages[0]': expected an object, but got a non-JSON value instead.",
    );
  });
});

describe('checkChatRequest', () => {
  test('collects every issue of the failing pass, in document order', () => {
    const check = checkChatRequest({ model: '', messages: [{ role: 'tool', content: 'x' }], n: 2, max_tokens: 1, max_completion_tokens: 1 });
    assert.equal(check.ok, false);
    assert.deepEqual(
      check.ok ? [] : check.issues.map((i) => [i.code, i.path]),
      [
        ['invalid_value', ['model']],
        ['missing_required_parameter', ['messages', 0, 'tool_call_id']],
        ['invalid_value', ['n']],
        ['invalid_value', ['max_completion_tokens']],
      ],
    );
  });

  test('structural issues alone when there are any', () => {
    const check = checkChatRequest({ model: '', foo: 1, temperature: 'x', n: 2 });
    assert.deepEqual(
      check.ok ? [] : check.issues.map((i) => [i.code, i.path]),
      [
        ['unknown_parameter', ['foo']],
        ['invalid_type', ['temperature']],
      ],
    );
  });

  test('ok with the request', () => {
    assert.deepEqual(checkChatRequest(body()), { ok: true, request: { model: MODEL, messages: [USER] } });
  });
});
