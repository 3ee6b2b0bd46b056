// The encoder's events read by the real `openai` SDK (pinned in
// test/package.json): its ResponseStream helper (`responses.stream`) must
// rebuild the response the gateway meant, function calls included, from a
// loopback server that serves the encoded bytes as POST /v1/responses; a
// failure mid-stream must reject finalResponse() with the gateway's error;
// and the whole answer must read back through `responses.create`.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../src/chat/types.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { toResponseObject } from '../../src/responses/response-answer.ts';
import { createResponseStreamEncoder } from '../../src/responses/response-stream.ts';
import { checkResponseStream } from '../support/responses-stream-checker.ts';

let server: http.Server;
let body = '';
let contentType = 'text/event-stream';
let client: OpenAI;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': contentType });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new OpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk => ({
  ...base,
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const USAGE: Usage = { prompt_tokens: 1200, completion_tokens: 31, total_tokens: 1231, prompt_tokens_details: { cached_tokens: 1024 } };
const TOOLS = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];

const PARSER_KEYS = new Set(['parsed', 'parsed_arguments', 'output_parsed']);

function serveStream(chunks: ChatCompletionChunk[], failure?: unknown): string {
  const encoder = createResponseStreamEncoder({ alias: 'service-code', id: 'resp_sdk', echo: { tools: TOOLS } });
  const out: string[] = [];
  for (const c of chunks) encoder.push(c, out);
  if (failure === undefined) encoder.end(out);
  else encoder.fail(failure, out);
  body = out.join('');
  contentType = 'text/event-stream';
  return body;
}

test('text, then a function call in pieces, usage last: responses.stream rebuilds the same response', async () => {
  const wire = serveStream([
    chunk({ role: 'assistant', content: 'Let me look ' }),
    chunk({ content: 'that up.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
    chunk({}, 'tool_calls'),
    { ...base, choices: [], usage: USAGE },
  ]);
  const texts: string[] = [];
  const argumentSnapshots: string[] = [];
  const stream = client.responses.stream({ model: 'service-code', input: 'Weather in Oslo?', tools: TOOLS });
  stream.on('response.output_text.delta', (event) => texts.push(event.delta));
  stream.on('response.function_call_arguments.delta', (event) => argumentSnapshots.push(event.snapshot));
  const response = await stream.finalResponse();
  assert.deepEqual(texts, ['Let me look ', 'that up.']);
  assert.deepEqual(argumentSnapshots, ['{"city":', '{"city":"Oslo"}']);
  assert.equal(response.id, 'resp_sdk');
  assert.equal(response.model, 'service-code');
  assert.equal(response.status, 'completed');
  assert.equal(response.output_text, 'Let me look that up.');
  const call = response.output[1];
  assert.ok(call !== undefined && call.type === 'function_call');
  assert.deepEqual([call.call_id, call.name, call.arguments, call.status], ['call_1', 'get_weather', '{"city":"Oslo"}', 'completed']);
  assert.deepEqual(response.usage, {
    input_tokens: 1200,
    input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 },
    output_tokens: 31,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 1231,
  });
  // The SDK's final response is the checker's, field for field, apart from
  // what its structured-output parser adds (parsed, parsed_arguments, output_parsed).
  const unparsed = JSON.parse(JSON.stringify(response), (key, value: unknown) => (PARSER_KEYS.has(key) ? undefined : value));
  assert.deepEqual(unparsed, JSON.parse(JSON.stringify(checkResponseStream(wire).response)));
});

test('the output limit cutting a function call: finalResponse resolves incomplete, the cut call left out', async () => {
  serveStream([
    chunk({ content: 'Reading.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
    chunk({}, 'length'),
  ]);
  const response = await client.responses.stream({ model: 'service-code', input: 'x' }).finalResponse();
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.deepEqual(
    response.output.map((item) => item.type),
    ['message'],
  );
  assert.equal(response.output_text, 'Reading.');
});

test('a failure mid-stream: finalResponse rejects with the gateway error (code, message) from the error event', async () => {
  serveStream([chunk({ content: 'Half an ans' })], new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.'));
  const stream = client.responses.stream({ model: 'service-code', input: 'x' });
  let failed: string | undefined;
  stream.on('response.failed', (event) => {
    failed = event.response.error?.code;
  });
  await assert.rejects(stream.finalResponse(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.code, 'upstream_stream_truncated');
    assert.equal(error.message, 'The upstream stream ended before the completion finished.');
    return true;
  });
  assert.equal(failed, 'server_error', 'response.failed was dispatched first');
});

test('the whole answer through responses.create: output_text and the function call as the SDK types them', async () => {
  const completion: ChatCompletion = {
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Checking.', refusal: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
    usage: USAGE,
  };
  body = JSON.stringify(toResponseObject(completion, 'service-code', { id: 'resp_whole' }));
  contentType = 'application/json';
  const response = await client.responses.create({ model: 'service-code', input: 'Weather in Rome?' });
  assert.equal(response.id, 'resp_whole');
  assert.equal(response.output_text, 'Checking.');
  const call = response.output[1];
  assert.ok(call !== undefined && call.type === 'function_call');
  assert.equal(call.call_id, 'call_9');
  assert.equal(response.usage?.total_tokens, 1231);
});
