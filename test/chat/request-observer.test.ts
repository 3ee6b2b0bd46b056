import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import { createChatRequestObserver, validateChatRequest } from '../../src/chat/request-validator.ts';
import { InvalidRequestError, type ErrorBody } from '../../src/errors/api-error.ts';
import { createJsonParser, parseJson } from '../../src/json/parser.ts';
import { body, MODEL, REJECTIONS, USER, WEATHER_TOOL } from './request-fixtures.ts';

type Outcome = { ok: true; value: unknown } | { ok: false; error: ErrorBody; offset: number };

/** Feeds `text` in chunks of `chunkSize` bytes through the real parser with the observer. */
function observe(text: string, chunkSize = Number.POSITIVE_INFINITY): Outcome {
  const bytes = Buffer.from(text, 'utf8');
  const parser = createJsonParser({ observer: createChatRequestObserver(), rejectDuplicateKeys: true });
  let offset = 0;
  try {
    while (offset < bytes.length) {
      const end = Math.min(bytes.length, offset + chunkSize);
      parser.feed(bytes.subarray(offset, end));
      offset = end;
    }
    return { ok: true, value: parser.end() };
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError, `expected InvalidRequestError, got ${String(err)}`);
    return { ok: false, error: err.toBody(), offset };
  }
}

function lateError(value: unknown): ErrorBody {
  try {
    validateChatRequest(value);
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError);
    return err.toBody();
  }
  assert.fail('the validator accepted the body');
}

describe('early rejection is indistinguishable from late rejection', () => {
  for (const fixture of REJECTIONS) {
    test(`${fixture.early ? 'early' : 'late '}: ${fixture.name}`, () => {
      const late = lateError(parseJson(fixture.text));
      const outcome = observe(fixture.text);
      if (fixture.early) {
        assert.equal(outcome.ok, false, 'the observer let the body through');
        assert.deepEqual(!outcome.ok && outcome.error, late);
        assert.deepEqual(late.error, { message: fixture.message, type: 'invalid_request_error', param: fixture.param, code: fixture.code });
      } else {
        assert.deepEqual(outcome, { ok: true, value: JSON.parse(fixture.text) });
      }
    });
  }

  test('byte by byte, every early fixture fails the same way', () => {
    for (const fixture of REJECTIONS) {
      if (!fixture.early || fixture.text.length > 20_000) continue;
      const whole = observe(fixture.text);
      const bytewise = observe(fixture.text, 1);
      assert.equal(whole.ok, false, fixture.name);
      // Rejected before the closing byte: the rest of the body is never needed.
      assert.ok(!bytewise.ok && bytewise.offset < Buffer.byteLength(fixture.text) - 1, fixture.name);
      assert.deepEqual(bytewise.ok ? null : bytewise.error, whole.ok ? null : whole.error, fixture.name);
    }
  });
});

describe('the observer rejects before the body is complete', () => {
  const prefixes: [string, string, string | null, string][] = [
    ['root not an object', '[', null, 'invalid_type'],
    ['unknown top-level key, before its value', '{"model":"service-chat","foo"', 'foo', 'unknown_parameter'],
    ['temperature given a string, at its first byte', '{"temperature":"', 'temperature', 'invalid_type'],
    ['messages not an array', '{"messages":{', 'messages', 'invalid_type'],
    ['unknown message field', '{"messages":[{"role":"user","foo"', 'messages[0].foo', 'unknown_parameter'],
    ['the fifth stop entry', '{"stop":["a","b","c","d","', 'stop', 'array_above_max_length'],
    ['unknown content part field', '{"messages":[{"content":[{"type":"text","cache_control"', 'messages[0].content[0].cache_control', 'unknown_parameter'],
  ];
  for (const [name, prefix, param, code] of prefixes) {
    test(name, () => {
      const parser = createJsonParser({ observer: createChatRequestObserver() });
      assert.throws(
        () => parser.feed(Buffer.from(prefix, 'utf8')),
        (err: unknown) => err instanceof InvalidRequestError && err.param === param && err.code === code,
      );
    });
  }

  test('the 257th message, at its first byte', () => {
    const head = JSON.stringify(body({ messages: Array.from({ length: 256 }, () => USER) })).replace(/\]\}$/, ',');
    const parser = createJsonParser({ observer: createChatRequestObserver() });
    parser.feed(Buffer.from(head, 'utf8'));
    assert.throws(() => parser.feed(Buffer.from('{', 'utf8')), (err: unknown) => err instanceof InvalidRequestError && err.code === 'array_above_max_length');
  });

  test('the 65th tool, at its first byte', () => {
    const tools = Array.from({ length: 64 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } }));
    const head = JSON.stringify(body({ tools })).replace(/\]\}$/, ',');
    const parser = createJsonParser({ observer: createChatRequestObserver() });
    parser.feed(Buffer.from(head, 'utf8'));
    assert.throws(() => parser.feed(Buffer.from('"', 'utf8')), (err: unknown) => err instanceof InvalidRequestError && err.param === 'tools');
  });
});

describe('the observer lets valid bodies through', () => {
  const valid: [string, unknown][] = [
    ['minimal', body()],
    [
      'tool loop history with everything an SDK echoes',
      body({
        messages: [
          { role: 'developer', content: [{ type: 'text', text: 'x' }] },
          { role: 'user', name: 'u', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } }] },
          {
            role: 'assistant',
            content: null,
            refusal: null,
            annotations: [{ type: 'url_citation', url_citation: { url: 'https://x.test' } }],
            audio: { id: 'a', data: 'x' },
            function_call: null,
            reasoning_content: 'r',
            parsed: { deep: [{ a: null }] },
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}', parsed_arguments: { x: [1] } } }],
          },
          { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: '22 C' }] },
        ],
        tools: [WEATHER_TOOL, { type: 'function', function: { name: 'deep', parameters: { a: { b: { c: { d: { e: { f: [1, { g: 'h' }] } } } } } }, strict: null } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        response_format: { type: 'json_object' },
        temperature: null,
        top_p: 1,
        max_tokens: null,
        max_completion_tokens: 100,
        stop: ['a', 'b', 'c', 'd'],
        stream: true,
        stream_options: { include_usage: true },
        n: 1,
      }),
    ],
    ['256 messages and 64 tools', body({ messages: Array.from({ length: 256 }, () => USER), tools: Array.from({ length: 64 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })) })],
    ['string stop and string tool_choice', body({ stop: 'x', tools: [WEATHER_TOOL], tool_choice: 'auto' })],
  ];
  for (const [name, value] of valid) {
    test(name, () => {
      const text = JSON.stringify(value);
      const outcome = observe(text);
      assert.deepEqual(outcome, { ok: true, value: JSON.parse(text) });
      validateChatRequest(JSON.parse(text));
    });
  }

  test('a megabyte body with a wide tool schema and long contents', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) properties[`p${i}`] = { type: 'string', enum: ['a', 'b'], description: 'x'.repeat(20) };
    const text = JSON.stringify(
      body({
        model: MODEL,
        messages: Array.from({ length: 200 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: 'y'.repeat(4_000) })),
        tools: [{ type: 'function', function: { name: 'wide', parameters: { type: 'object', properties } } }],
      }),
    );
    assert.ok(text.length > 1_000_000);
    assert.equal(observe(text).ok, true);
  });
});
