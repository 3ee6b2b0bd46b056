// OpenAI's optional request fields, accepted by the operator's requestFields,
// reaching an Anthropic alias end to end: the body the strict fake Anthropic
// receives for a structured-output request as the openai SDK's
// zodResponseFormat sends it (with user and parallel_tool_calls), the answer
// back non-streamed and streamed, an answer that breaks a bound left out of
// what Anthropic was sent (the gateway's check still holds it), and a field
// Anthropic has no equivalent of: a 400 for an Anthropic-only alias, a skipped
// target in a mixed one.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { refuseLikeAnthropic } from '../providers/anthropic-constraints.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let claude: FakeUpstream;
let primary: FakeUpstream;
let gw: TestGateway;

before(async () => {
  claude = await startFakeUpstream(() => {});
  primary = await startFakeUpstream(() => {});
  const breaker = { failureThreshold: 1000 };
  gw = await startGateway({
    configValue: {
      requestFields: ['json_schema', 'user', 'safety_identifier', 'parallel_tool_calls', 'seed'],
      providers: {
        claude: { type: 'anthropic', baseUrl: claude.baseUrl, apiKeyEnv: 'CLAUDE_KEY', retry: { maxAttempts: 1 }, circuitBreaker: breaker },
        local: { type: 'openai', baseUrl: primary.baseUrl, retry: { maxAttempts: 1 }, circuitBreaker: breaker },
      },
      aliases: {
        'service-claude': { provider: 'claude', model: 'claude-test-1' },
        'service-mixed': {
          targets: [
            { provider: 'local', model: 'p-model', priority: 0 },
            { provider: 'claude', model: 'claude-test-1', priority: 1 },
          ],
        },
      },
    },
    env: { CLAUDE_KEY: 'sk-ant-test' },
  });
});
after(async () => {
  await gw.close();
  await claude.close();
  await primary.close();
});
beforeEach(() => {
  claude.requests.length = 0;
  primary.requests.length = 0;
  primary.handle = (_r, res) => json(res, 500, { error: { message: 'the primary is down', type: 'server_error', param: null, code: null } });
});

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The fake Anthropic: a request outside Anthropic's constraints is answered 400 as Anthropic would. */
function serve(handle: FakeUpstream['handle']): void {
  claude.handle = (record, res) => {
    if (refuseLikeAnthropic(res, record.body)) return;
    return handle(record, res);
  };
}

// zodResponseFormat(z.object({ name: z.string(), qty: z.number().int().min(1) }), 'part')
const RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: {
    name: 'part',
    strict: true,
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { name: { type: 'string' }, qty: { type: 'integer', minimum: 1, maximum: 9007199254740991 } },
      required: ['name', 'qty'],
      additionalProperties: false,
    },
  },
};
const TOOLS = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } }];
const BODY = { messages: [{ role: 'user', content: 'One part, please.' }], response_format: RESPONSE_FORMAT, user: 'user-7c1e', parallel_tool_calls: false, tools: TOOLS };
const SENT = {
  model: 'claude-test-1',
  max_tokens: 4096,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'One part, please.' }] }],
  tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  output_config: {
    format: { type: 'json_schema', schema: { type: 'object', properties: { name: { type: 'string' }, qty: { type: 'integer' } }, required: ['name', 'qty'], additionalProperties: false } },
  },
  metadata: { user_id: 'user-7c1e' },
};
const ANSWER = '{"name":"bolt","qty":2}';
const MISMATCH = "The upstream's answer does not match the response_format json_schema: $.qty: 0 is below the minimum 1";

async function accessLine(requestId: string): Promise<Record<string, unknown>> {
  const find = () => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

test('json_schema strict, user, parallel_tool_calls false: Anthropic receives them translated; the JSON answer comes back', async () => {
  serve((_r, res) =>
    json(res, 200, {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test-1',
      content: [{ type: 'text', text: ANSWER }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 9 },
    }),
  );
  const res = await postChat(gw, { model: 'service-claude', ...BODY });
  assert.equal(res.status, 200, res.text);
  assert.equal(claude.requests.length, 1);
  assert.deepEqual(claude.requests[0]?.body, SENT);
  const completion = res.json() as { model: string; choices: [{ message: { content: string }; finish_reason: string }] };
  assert.equal(completion.model, 'service-claude');
  assert.equal(completion.choices[0].message.content, ANSWER);
  assert.equal(completion.choices[0].finish_reason, 'stop');
});

test('streamed: the same body with stream true; the JSON answer arrives in content deltas, then [DONE]', async () => {
  serve((_r, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const events: [string, unknown][] = [
      ['message_start', { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-test-1', content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '{"name":"bolt",' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '"qty":2}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }],
      ['message_stop', { type: 'message_stop' }],
    ];
    for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    res.end();
  });
  const res = await postChat(gw, { model: 'service-claude', stream: true, ...BODY });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(claude.requests[0]?.body, { ...SENT, stream: true });
  const data = sseData(res.text);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: [{ delta: { content?: string }; finish_reason: string | null }?] });
  assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), ANSWER);
  assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason === 'stop').length, 1);
});

test('an answer that breaks the minimum left out of what Anthropic was sent: the gateway\'s check holds it, 502 upstream_schema_mismatch', async () => {
  serve((_r, res) =>
    json(res, 200, {
      id: 'msg_3',
      type: 'message',
      role: 'assistant',
      model: 'claude-test-1',
      content: [{ type: 'text', text: '{"name":"bolt","qty":0}' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 9 },
    }),
  );
  const res = await postChat(gw, { model: 'service-claude', ...BODY });
  assert.equal(res.status, 502, res.text);
  assert.deepEqual(res.json(), {
    error: { message: MISMATCH, type: 'upstream_error', param: null, code: 'upstream_schema_mismatch' },
  });
  assert.deepEqual(claude.requests[0]?.body, SENT);
});

test('seed on an Anthropic-only alias: 400 unsupported_parameter naming seed, nothing sent', async () => {
  const res = await postChat(gw, { model: 'service-claude', messages: [{ role: 'user', content: 'Hi' }], seed: 7 });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), {
    error: {
      message:
        "Unsupported parameter: 'seed' is not supported by the provider behind this model alias: Anthropic has no sampling seed, so the answer would not be repeatable as asked. Remove it, or use a model alias served by an OpenAI-compatible provider.",
      type: 'invalid_request_error',
      param: 'seed',
      code: 'unsupported_parameter',
    },
  });
  assert.equal(claude.requests.length, 0);
});

test('a recursive schema on an Anthropic-only alias: 400 unsupported_schema naming the $ref', async () => {
  const schema = { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } }, required: ['kids'], additionalProperties: false };
  const res = await postChat(gw, {
    model: 'service-claude',
    messages: [{ role: 'user', content: 'Hi' }],
    response_format: { type: 'json_schema', json_schema: { name: 'tree', schema, strict: true } },
  });
  assert.equal(res.status, 400, res.text);
  const param = 'response_format.json_schema.schema.properties.kids.items.$ref';
  assert.deepEqual(res.json(), {
    error: {
      message: `Invalid schema for response_format: '${param}': a recursive schema is not supported by the provider behind this model alias: this "$ref" leads back to the schema that holds it.`,
      type: 'invalid_request_error',
      param,
      code: 'unsupported_schema',
    },
  });
  assert.equal(claude.requests.length, 0);
});

test('seed on a mixed alias whose primary fails: the primary\'s failure, Claude skipped and named in the access line', async () => {
  const res = await postChat(gw, { model: 'service-mixed', messages: [{ role: 'user', content: 'Hi' }], seed: 7 }, { 'x-request-id': 'fields-mixed' });
  assert.equal(res.status, 502, res.text);
  assert.equal((primary.requests[0]?.body as { seed: unknown }).seed, 7);
  assert.equal(claude.requests.length, 0);
  assert.equal((await accessLine('fields-mixed'))['attempts'], 'local/p-model:fallback:502,claude/claude-test-1:skipped_unsupported:seed');
});
