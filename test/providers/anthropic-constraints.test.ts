// The constraint checker of the fake Anthropic upstreams must itself refuse
// what Anthropic refuses, or every fake that uses it would accept anything.
// Each bad body below is one the adapter used to send or one that
// breaks another documented constraint; the good one must pass.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startFakeUpstream } from '../../src/testing/fake-upstream.ts';
import { anthropicRequestViolation, refuseLikeAnthropic } from './anthropic-constraints.ts';

type Body = Record<string, unknown>;

const USER = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };

const GOOD: Body = {
  model: 'claude-test',
  max_tokens: 64,
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '4°C' }, { type: 'text', text: 'Thanks' }] },
  ],
  tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
  tool_choice: { type: 'tool', name: 'get_weather' },
  stop_sequences: ['\nEND'],
  temperature: 0.5,
  stream: true,
};

function withBody(over: Body): Body {
  return { model: 'claude-test', max_tokens: 64, messages: [USER], ...over };
}

const OUTPUT: Body = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };

function withOutput(schema: Body): Body {
  return withBody({ output_config: { format: { type: 'json_schema', schema } } });
}

const BAD: [string, Body, string][] = [
  ['whitespace stop sequence', withBody({ stop_sequences: ['\n'] }), 'stop_sequences: each stop sequence must contain non-whitespace'],
  ['empty stop sequence', withBody({ stop_sequences: [''] }), 'stop_sequences: each stop sequence must be non-empty'],
  ['no messages', withBody({ messages: [] }), 'messages: at least one message is required'],
  ['empty text block', withBody({ messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] }), 'messages: text content blocks must be non-empty'],
  ['whitespace text block', withBody({ messages: [{ role: 'user', content: '\n\n' }] }), 'messages: text content blocks must contain non-whitespace text'],
  [
    'whitespace text before a tool call',
    withBody({
      messages: [
        USER,
        { role: 'assistant', content: [{ type: 'text', text: '\n\n' }, { type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    }),
    'messages: text content blocks must contain non-whitespace text',
  ],
  ['prefill ending in whitespace', withBody({ messages: [USER, { role: 'assistant', content: 'Sure, ' }] }), 'messages: final assistant content cannot end with trailing whitespace'],
  [
    'tool id outside the pattern',
    withBody({ messages: [USER, { role: 'assistant', content: [{ type: 'tool_use', id: 'functions.f:0', name: 'f', input: {} }] }] }),
    "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
  ],
  [
    'tool call without a result',
    withBody({ messages: [USER, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }, USER] }),
    'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  ],
  [
    'result without a call',
    withBody({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }] }),
    'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
  ],
  [
    'result after text',
    withBody({
      messages: [USER, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }, { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'tool_result', tool_use_id: 't' }] }],
    }),
    'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
  ],
  [
    'repeated tool id',
    withBody({
      messages: [
        USER,
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    }),
    'messages.3.content.0: `tool_use` ids must be unique',
  ],
  ['temperature and top_p', withBody({ temperature: 0.7, top_p: 0.9 }), '`temperature` and `top_p` cannot both be specified for this model. Please use only one.'],
  ['temperature above 1', withBody({ temperature: 1.5 }), 'temperature: Input should be less than or equal to 1'],
  ['max_tokens 0', withBody({ max_tokens: 0 }), 'max_tokens: Input should be greater than or equal to 1'],
  ['system role in messages', withBody({ messages: [{ role: 'system', content: 'x' }] }), "messages.0.role: Input should be 'user' or 'assistant'"],
  ['blank system block', withBody({ system: [{ type: 'text', text: ' ' }] }), 'system: text content blocks must contain non-whitespace text'],
  [
    'image source type',
    withBody({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', url: 'https://x' } }] }] }),
    "messages.0.content.0.source.type: Input tag does not match any of the expected tags: 'base64', 'url'",
  ],
  ['input_schema not an object', withBody({ tools: [{ name: 'f', input_schema: { type: 'string' } }] }), "tools.0.custom.input_schema.type: Input should be 'object'"],
  ['unknown field', withBody({ stop: ['x'] }), 'stop: Extra inputs are not permitted'],
  ['user_id above 512 characters', withBody({ metadata: { user_id: 'u'.repeat(513) } }), 'metadata.user_id: String should have at most 512 characters'],
  ['metadata pairs', withBody({ metadata: { team: 'a' } }), 'metadata.team: Extra inputs are not permitted'],
  ['disable_parallel_tool_use on none', withBody({ tool_choice: { type: 'none', disable_parallel_tool_use: true } }), 'tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted'],
  ['output format of another type', withBody({ output_config: { format: { type: 'json', schema: OUTPUT } } }), "output_config.format.type: Input should be 'json_schema'"],
  ['a numeric bound', withOutput({ ...OUTPUT, properties: { a: { type: 'integer', minimum: 1 } } }), "output_config.format.schema.properties.a: Unsupported keyword 'minimum'"],
  ['$schema', withOutput({ ...OUTPUT, $schema: 'http://json-schema.org/draft-07/schema#' }), "output_config.format.schema: Unsupported keyword '$schema'"],
  ['maxItems', withOutput({ ...OUTPUT, properties: { a: { type: 'array', items: { type: 'string' }, maxItems: 2 } } }), "output_config.format.schema.properties.a: Unsupported keyword 'maxItems'"],
  ['minItems 2', withOutput({ ...OUTPUT, properties: { a: { type: 'array', items: { type: 'string' }, minItems: 2 } } }), 'output_config.format.schema.properties.a: minItems values other than 0 or 1 are not supported'],
  ['an object without additionalProperties false', withOutput({ type: 'object', properties: {} }), "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false"],
  ['recursion', withOutput({ ...OUTPUT, properties: { a: { type: 'array', items: { $ref: '#' } } } }), 'output_config.format.schema.properties.a.items.$ref: Recursive schemas are not supported'],
  ['a lookahead', withOutput({ ...OUTPUT, properties: { a: { type: 'string', pattern: '^(?=a)' } } }), 'output_config.format.schema.properties.a: Unsupported regex pattern'],
  [
    '17 union types',
    withOutput({ ...OUTPUT, properties: Object.fromEntries(Array.from({ length: 17 }, (_, k) => [`p${k}`, { type: ['string', 'null'] }])) }),
    'Schemas contains too many parameters with union types (17 parameters with type arrays or anyOf) which exceeds the limit: 16',
  ],
  [
    '25 optional parameters',
    withOutput({ ...OUTPUT, properties: Object.fromEntries(Array.from({ length: 25 }, (_, k) => [`p${k}`, { type: 'string' }])) }),
    'Schemas contains too many optional parameters (25) which exceeds the limit: 24',
  ],
];

describe('the constraints of the fake Anthropic upstreams', () => {
  test('a request that keeps every constraint passes', () => {
    assert.equal(anthropicRequestViolation(GOOD), undefined);
    assert.equal(anthropicRequestViolation(withBody({ messages: [{ role: 'assistant', content: 'Hello.' }, USER] })), undefined, 'assistant first');
    assert.equal(anthropicRequestViolation(withBody({ messages: [USER, { role: 'assistant', content: 'The answer is (' }] })), undefined, 'prefill');
    const output = {
      ...OUTPUT,
      properties: { a: { type: 'string', format: 'date-time', pattern: '^\\d{4}' }, b: { anyOf: [{ $ref: '#/$defs/d' }, { type: 'null' }] }, c: { type: 'array', items: { $ref: '#/$defs/d' }, minItems: 1 } },
      required: ['a', 'b'],
      $defs: { d: { type: 'object', properties: { e: { enum: ['x', 1, null] } }, required: ['e'], additionalProperties: false } },
    };
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    assert.equal(
      anthropicRequestViolation(withBody({ output_config: { format: { type: 'json_schema', schema: output } }, metadata: { user_id: 'u'.repeat(512) }, tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } })),
      undefined,
      'structured output, metadata, disable_parallel_tool_use',
    );
  });

  for (const [name, body, message] of BAD) {
    test(`refused: ${name}`, () => {
      assert.equal(anthropicRequestViolation(body), message);
    });
  }

  test('refuseLikeAnthropic answers 400 with Anthropic error body, and lets a good request through', async () => {
    const server = await startFakeUpstream((_req, res, received) => {
      if (refuseLikeAnthropic(res, received.text)) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const url = `${server.baseUrl}/messages`;
    try {
      const bad = await fetch(url, { method: 'POST', body: JSON.stringify(withBody({ stop_sequences: ['\n'] })) });
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), { type: 'error', error: { type: 'invalid_request_error', message: 'stop_sequences: each stop sequence must contain non-whitespace' } });
      const good = await fetch(url, { method: 'POST', body: JSON.stringify(GOOD) });
      assert.equal(good.status, 200);
      await good.text();
    } finally {
      await server.close();
    }
  });
});
