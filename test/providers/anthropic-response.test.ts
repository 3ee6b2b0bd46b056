import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import { finishReasonOf, fromAnthropicResponse } from '../../src/providers/anthropic-translate.ts';
import { fixtureJson } from '../fixtures/anthropic/fixtures.ts';

const CREATED = 1700000000;

function message(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test-1',
    content: [{ type: 'text', text: 'Hello' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 3 },
    ...extra,
  };
}

function malformed(raw: unknown): unknown {
  try {
    fromAnthropicResponse(raw, CREATED);
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return { status: error.status, body: error.toBody() };
  }
  return assert.fail('expected a rejection');
}

function malformedAt(path: string): unknown {
  return {
    status: 502,
    body: { error: { message: `The upstream provider returned a malformed response (at ${path}).`, type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
  };
}

describe('fromAnthropicResponse', () => {
  test('the fixture: thinking skipped, text joined, tool_use as tool calls, cache usage counted', () => {
    assert.deepEqual(fromAnthropicResponse(fixtureJson('response.anthropic.json'), CREATED), fixtureJson('response.openai.json'));
  });

  test('text only', () => {
    assert.deepEqual(fromAnthropicResponse(message(), CREATED), {
      id: 'msg_1',
      object: 'chat.completion',
      created: CREATED,
      model: 'claude-test-1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, prompt_tokens_details: { cached_tokens: 0 } },
    });
  });

  test('a tool_use id the gateway encoded reaches the client as its own id again; Anthropic ids as they are', () => {
    const completion = fromAnthropicResponse(
      message({
        content: [
          { type: 'tool_use', id: 'pcl_id-functions_002ef_003a0', name: 'f', input: {} },
          { type: 'tool_use', id: 'toolu_01A', name: 'f', input: {} },
        ],
        stop_reason: 'tool_use',
      }),
      CREATED,
    );
    assert.deepEqual(completion.choices[0]?.message.tool_calls.map((call) => call.id), ['functions.f:0', 'toolu_01A']);
  });

  test('only tool_use: content is null; a tool_use without input has arguments {}', () => {
    const completion = fromAnthropicResponse(
      message({ content: [{ type: 'tool_use', id: 'toolu_1', name: 'now' }], stop_reason: 'tool_use' }),
      CREATED,
    );
    assert.deepEqual(completion.choices[0], {
      index: 0,
      message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'now', arguments: '{}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  test('no content blocks at all: content is the empty string', () => {
    assert.deepEqual(fromAnthropicResponse(message({ content: [] }), CREATED).choices[0]?.message, { role: 'assistant', content: '', refusal: null, tool_calls: [] });
  });

  test('unknown block types are skipped', () => {
    const completion = fromAnthropicResponse(
      message({ content: [{ type: 'redacted_thinking', data: 'xx' }, { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: {} }, { type: 'text', text: 'Hi' }] }),
      CREATED,
    );
    assert.deepEqual(completion.choices[0]?.message, { role: 'assistant', content: 'Hi', refusal: null, tool_calls: [] });
  });

  test('usage: absent cache fields count 0; no usage, no usage key', () => {
    assert.deepEqual(fromAnthropicResponse(message({ usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: null } }), CREATED).usage, {
      prompt_tokens: 5,
      completion_tokens: 1,
      total_tokens: 6,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    assert.equal('usage' in fromAnthropicResponse(message({ usage: undefined }), CREATED), false);
  });

  test('a missing id gets a generated one; a missing model is empty; created defaults to now', () => {
    const before = Math.floor(Date.now() / 1000);
    const completion = fromAnthropicResponse(message({ id: undefined, model: undefined }));
    assert.match(completion.id, /^chatcmpl-[0-9a-f]{24}$/);
    assert.equal(completion.model, '');
    assert.ok(completion.created >= before && completion.created <= Math.floor(Date.now() / 1000));
  });

  test('malformed bodies are 502 naming the path', () => {
    assert.deepEqual(malformed('text'), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a malformed response.', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
    });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ content: undefined }, 'content'],
      [{ content: { type: 'text' } }, 'content'],
      [{ content: ['x'] }, 'content[0]'],
      [{ content: [{ text: 'no type' }] }, 'content[0].type'],
      [{ content: [{ type: 'text', text: 5 }] }, 'content[0].text'],
      [{ content: [{ type: 'tool_use', name: 'f', input: {} }] }, 'content[0].id'],
      [{ content: [{ type: 'text', text: 'a' }, { type: 'tool_use', id: 't', name: '', input: {} }] }, 'content[1].name'],
      [{ content: [{ type: 'tool_use', id: 't', name: 'f', input: '{}' }] }, 'content[0].input'],
      [{ stop_reason: 1 }, 'stop_reason'],
      [{ id: 7 }, 'id'],
      [{ model: ['m'] }, 'model'],
      [{ usage: 'lots' }, 'usage'],
      [{ usage: { input_tokens: -1, output_tokens: 1 } }, 'usage.input_tokens'],
      [{ usage: { input_tokens: 1, output_tokens: 1.5 } }, 'usage.output_tokens'],
      [{ usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: '3' } }, 'usage.cache_read_input_tokens'],
      [{ usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: {} } }, 'usage.cache_creation_input_tokens'],
    ];
    for (const [extra, path] of cases) assert.deepEqual(malformed(message(extra)), malformedAt(path), path);
  });
});

describe('finishReasonOf: stop_reason to finish_reason', () => {
  test('every documented stop_reason, null, and an unknown one', () => {
    const table: Array<[unknown, string | null]> = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['pause_turn', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
      ['something_new', 'stop'],
      [null, null],
      [undefined, null],
    ];
    for (const [raw, expected] of table) {
      assert.equal(finishReasonOf(raw, 'stop_reason'), expected, String(raw));
      if (raw !== undefined) assert.equal(fromAnthropicResponse(message({ stop_reason: raw }), CREATED).choices[0]?.finish_reason, expected);
    }
  });
});
