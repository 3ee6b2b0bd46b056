// The Anthropic adapter against the strict fake Anthropic with OpenAI's newer
// request fields: the exact bytes sent for a json_schema request with user and
// parallel_tool_calls (non-stream and stream), the structured answer coming
// back both ways, and refusal() (what the dispatcher asks before a call)
// naming the field, with nothing sent.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import { collect } from '../support/collect.ts';
import { call, json, MESSAGE_START, pinCreated, providerFor, startEventStream, useAnthropicUpstream } from './anthropic-fixtures.ts';

const upstream = useAnthropicUpstream();

// The openai SDK's zodResponseFormat for {name: string, qty: int >= 1}.
const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { name: { type: 'string' }, qty: { type: 'integer', minimum: 1, maximum: 9007199254740991 } },
  required: ['name', 'qty'],
  additionalProperties: false,
};
const FIELDS: Partial<ChatRequest> = {
  response_format: { type: 'json_schema', json_schema: { name: 'part', schema: SCHEMA, strict: true } },
  user: 'user-7c1e',
  parallel_tool_calls: false,
  tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }],
};
const SENT = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  system: [{ type: 'text', text: 'Be brief.' }],
  tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { id: { type: 'string' } } } }],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  output_config: {
    format: {
      type: 'json_schema',
      schema: { type: 'object', properties: { name: { type: 'string' }, qty: { type: 'integer' } }, required: ['name', 'qty'], additionalProperties: false },
    },
  },
  metadata: { user_id: 'user-7c1e' },
};
const ANSWER = '{"name":"bolt","qty":2}';

describe('a json_schema request to Anthropic', () => {
  test('non-stream: the exact body sent; the JSON answer comes back as the message content', async () => {
    upstream.handle = (_req, res) =>
      json(res, 200, {
        id: 'msg_s1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: ANSWER }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 20, output_tokens: 9 },
      });
    const completion = await providerFor(upstream).complete(call(FIELDS));
    assert.equal(upstream.received.length, 1);
    assert.equal(upstream.received[0]?.text, JSON.stringify(SENT));
    assert.deepEqual(completion.choices, [
      { index: 0, message: { role: 'assistant', content: ANSWER, refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' },
    ]);
  });

  test('stream: the exact body sent (stream last); the JSON answer arrives as content deltas', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(
        MESSAGE_START +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{\\"name\\":\\"bolt\\","}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\"qty\\":2}"}}\n\n' +
          'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
          'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}\n\n' +
          'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      );
    };
    const chunks: ChatCompletionChunk[] = pinCreated(await collect(providerFor(upstream).stream(call({ ...FIELDS, stream: true }))));
    assert.equal(upstream.received[0]?.text, JSON.stringify({ ...SENT, stream: true }));
    const chunk = (choices: ChatCompletionChunk['choices'], usage?: ChatCompletionChunk['usage']): ChatCompletionChunk => ({
      id: 'msg_x',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'claude-test',
      choices,
      ...(usage === undefined ? {} : { usage }),
    });
    assert.deepEqual(chunks, [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: '{"name":"bolt",' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: '"qty":2}' }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      chunk([], { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0 } }),
    ]);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), ANSWER);
  });
});

describe('refusal(): what the dispatcher asks before a call', () => {
  const refusalOf = (extra: Partial<ChatRequest>) => providerFor(upstream).provider.refusal?.(call(extra).request) ?? null;

  test('a field without an equivalent: the 400 naming it, and complete() sends nothing', async () => {
    const error = refusalOf({ seed: 42 });
    assert.deepEqual(error?.toBody(), {
      error: {
        message:
          "Unsupported parameter: 'seed' is not supported by the provider behind this model alias: Anthropic has no sampling seed, so the answer would not be repeatable as asked. Remove it, or use a model alias served by an OpenAI-compatible provider.",
        type: 'invalid_request_error',
        param: 'seed',
        code: 'unsupported_parameter',
      },
    });
    await assert.rejects(providerFor(upstream).complete(call({ seed: 42 })), { code: 'unsupported_parameter', param: 'seed' });
    assert.equal(upstream.received.length, 0);
  });

  test('a recursive schema: the 400 naming the $ref', () => {
    const schema = { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } }, required: ['kids'], additionalProperties: false };
    const error = refusalOf({ response_format: { type: 'json_schema', json_schema: { name: 'tree', schema, strict: true } } });
    assert.equal(error?.code, 'unsupported_schema');
    assert.equal(error?.param, 'response_format.json_schema.schema.properties.kids.items.$ref');
  });

  test('what Anthropic takes: no refusal', () => {
    assert.equal(refusalOf(FIELDS), null);
  });
});
