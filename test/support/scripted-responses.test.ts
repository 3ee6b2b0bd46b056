// The scripted Responses upstream and its constraints, without a gateway:
// what the pinned clients sent (the captured fixtures) keeps them, what
// OpenAI would refuse is refused in its words, the script does the tool
// round trip for the `openai` SDK (create and stream), encrypted reasoning
// must come back unaltered, and a cut stream ends after the events asked.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { responsesRequestViolation } from './openai-responses-constraints.ts';
import { repositoryRoot } from './repository-root.ts';
import { responsesEvents } from './responses-answers.ts';
import { encryptedReasoning, startScriptedResponses } from './scripted-responses.ts';
import { execCommandCall, PLAIN_ANSWER, quoteAnswer, SCRIPTED_UPSTREAM_KEY, scriptedTokenCount } from './scripted-upstreams.ts';

const FIXTURES = path.join(repositoryRoot(), 'test', 'fixtures', 'responses');

interface Captured {
  method: string;
  path: string;
  body: Record<string, any>;
}

function fixture(name: string): Captured {
  return JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Captured;
}

test('every request body the pinned clients POSTed keeps the strict Responses constraints', () => {
  const posts = readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.json'))
    .filter((name) => fixture(name).method === 'POST');
  assert.equal(posts.length, 11);
  for (const name of posts) assert.equal(responsesRequestViolation(fixture(name).body), undefined, name);
});

test('the Responses constraints, in OpenAI words: unknown fields, unanswered or unknown calls, names, bounds, what cannot be resolved', () => {
  const codex = fixture('codex-exec-tool-output.json').body;
  const input = codex['input'] as Array<Record<string, unknown>>;
  const call = input.at(-2)!;
  const output = input.at(-1)!;
  assert.equal(responsesRequestViolation({ ...codex, verbosity: 'low' }), "Unknown parameter: 'verbosity'.");
  assert.equal(responsesRequestViolation({ ...codex, input: [...input.slice(0, -1), { role: 'user', content: 'again' }] }), `No tool output found for function call ${String(call['call_id'])}.`);
  assert.equal(responsesRequestViolation({ ...codex, input: [...input.slice(0, -2), output] }), `No tool call found for function call output with call_id ${String(output['call_id'])}.`);
  assert.equal(responsesRequestViolation({ ...codex, input: [...input.slice(0, -1), { ...output, name: 'exec_command' }] }), "Unknown parameter: 'input[5].name'.");
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'read file' }] }), "Invalid 'tools[0].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.");
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'a' }], tool_choice: { type: 'function', name: 'b' } }), "Tool choice 'b' not found in 'tools' parameter.");
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', tools: [{ type: 'browser' }] })?.startsWith("Invalid value: 'browser'. Supported values are: 'function', 'namespace', 'web_search'"), true);
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', max_output_tokens: 8 }), "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.");
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', temperature: 2.5 }), "Invalid 'temperature': expected a number from 0 to 2.");
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', stream_options: { include_obfuscation: false } }), "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', include: ['reasoning.summary'] })?.startsWith("Invalid value: 'reasoning.summary'."), true);
  assert.equal(responsesRequestViolation({ model: 'm', input: 'hi', previous_response_id: 'resp_1' }), "Previous response with id 'resp_1' not found.");
  assert.equal(responsesRequestViolation({ model: 'm' }), "Missing required parameter: 'input'.");
  assert.equal(responsesRequestViolation({ input: 'hi' }), "Missing required parameter: 'model'.");
  assert.equal(responsesRequestViolation({ model: 'm', input: [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }] }), "Invalid value: 'input_text'. Supported values are: 'output_text', 'refusal'. (input[0].content[0].type)");
  assert.equal(responsesRequestViolation({ ...codex, input: [...input.slice(0, -1), { ...output, output: { text: 'x' } }] }), "Invalid type for 'input[5].output': expected a string or an array of content parts.");
  assert.equal(responsesRequestViolation({ ...codex, input: [...input.slice(0, -1), { ...output, output: [{ type: 'input_text', text: 'x' }, { type: 'input_image' }] }] }), "Missing required parameter: 'input[5].output[1].image_url'.");
  const reasoning = { model: 'm', input: [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' }, { role: 'user', content: 'go on' }] };
  assert.equal(responsesRequestViolation(reasoning, { reasoningValid: (id, encrypted) => id === 'rs_1' && encrypted === 'enc' }), undefined);
  assert.equal(responsesRequestViolation(reasoning, { reasoningValid: () => false }), 'The encrypted content for item rs_1 could not be verified.');
});

test('the Responses fake with the openai SDK: a plain create, then an exec_command call streamed and its output quoted back', async () => {
  const upstream = await startScriptedResponses();
  try {
    const client = new OpenAI({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL: upstream.baseUrl, maxRetries: 0 });
    const created = await client.responses.create({ model: 'up-1', input: 'say hi' });
    assert.equal(created.output_text, PLAIN_ANSWER);
    assert.deepEqual(created.usage, { input_tokens: scriptedTokenCount('{"model":"up-1","input":"say hi"}'), input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: created.usage!.input_tokens + 7 });
    upstream.script.toolCall = execCommandCall('cat notes.txt');
    const tools = [{ type: 'function' as const, name: 'exec_command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }];
    const stream = client.responses.stream({ model: 'up-1', input: 'what is in notes.txt?', tools });
    const deltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => deltas.push(event.delta));
    const first = await stream.finalResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    // The stream helper adds parsed_arguments, which is not an input field: the call goes back without it.
    assert.deepEqual(call, { id: 'fc_fake2', type: 'function_call', status: 'completed', arguments: '{"cmd":"cat notes.txt"}', call_id: 'call_fake2', name: 'exec_command', parsed_arguments: null });
    const echoed = { id: 'fc_fake2', type: 'function_call' as const, status: 'completed' as const, arguments: '{"cmd":"cat notes.txt"}', call_id: 'call_fake2', name: 'exec_command' };
    assert.equal(deltas.join(''), '{"cmd":"cat notes.txt"}');
    assert.ok(deltas.length > 1, 'the arguments arrive in pieces');
    const second = await client.responses.create({ model: 'up-1', tools, input: [{ role: 'user', content: 'what is in notes.txt?' }, echoed, { type: 'function_call_output', call_id: 'call_fake2', output: 'Output:\nThe drawbridge is up.\n' }] });
    assert.equal(second.output_text, quoteAnswer('Output:\nThe drawbridge is up.\n'));
    assert.deepEqual(upstream.answered, ['text', 'tool_use', 'text']);
    assert.deepEqual(upstream.toolResults, ['Output:\nThe drawbridge is up.\n']);
    assert.deepEqual(upstream.violations, []);
  } finally {
    await upstream.close();
  }
});

test('the Responses fake with reasoning: an encrypted item only when included, refused when it comes back altered', async () => {
  const upstream = await startScriptedResponses({ thinking: true });
  try {
    const client = new OpenAI({ apiKey: SCRIPTED_UPSTREAM_KEY, baseURL: upstream.baseUrl, maxRetries: 0 });
    const without = await client.responses.create({ model: 'up-1', input: 'hi' });
    assert.deepEqual(without.output.map((item) => item.type), ['message']);
    const withReasoning = await client.responses.create({ model: 'up-1', input: 'hi', include: ['reasoning.encrypted_content'] });
    const reasoning = withReasoning.output[0]!;
    assert.deepEqual(reasoning, { id: 'rs_fake2', type: 'reasoning', summary: [], encrypted_content: encryptedReasoning('rs_fake2') });
    if (reasoning.type !== 'reasoning') throw new Error('no reasoning item first');
    const next = await client.responses.create({ model: 'up-1', input: [reasoning, { role: 'user', content: 'go on' }] });
    assert.equal(next.output_text, PLAIN_ANSWER);
    await assert.rejects(client.responses.create({ model: 'up-1', input: [{ ...reasoning, encrypted_content: 'enc_forged' }, { role: 'user', content: 'go on' }] }), {
      status: 400,
      message: '400 The encrypted content for item rs_fake2 could not be verified.',
    });
    assert.deepEqual(upstream.violations, ['The encrypted content for item rs_fake2 could not be verified.']);
  } finally {
    await upstream.close();
  }
});

/** A streamed body read as far as it arrives: the text, and whether the connection was cut rather than ended. */
async function readUntilCut(res: Response): Promise<{ text: string; cut: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, cut: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, cut: true };
  }
}

test('the Responses fake refuses a wrong key and another path, answers a queued failure, and cuts a stream after N events, once', async () => {
  const upstream = await startScriptedResponses();
  try {
    const post = (url: string, key: string, body: unknown): Promise<Response> =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    const wrong = await post(`${upstream.baseUrl}/responses`, 'sk-wrong', { model: 'm', input: 'hi' });
    assert.deepEqual([wrong.status, await wrong.json()], [401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }]);
    const elsewhere = await post(`${upstream.baseUrl}/chat/completions`, SCRIPTED_UPSTREAM_KEY, { model: 'm', messages: [] });
    assert.equal(elsewhere.status, 404);
    upstream.failures.push({ status: 503, type: 'server_error', message: 'The server is overloaded.', headers: { 'retry-after': '1' } });
    const failed = await post(`${upstream.baseUrl}/responses`, SCRIPTED_UPSTREAM_KEY, { model: 'm', input: 'hi' });
    assert.deepEqual([failed.status, failed.headers.get('retry-after'), await failed.json()], [503, '1', { error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: null } }]);
    upstream.script.cutStreamAfter = 3;
    const cut = await post(`${upstream.baseUrl}/responses`, SCRIPTED_UPSTREAM_KEY, { model: 'm', input: 'hi', stream: true });
    const { text, cut: wasCut } = await readUntilCut(cut);
    assert.equal(wasCut, true);
    assert.equal(upstream.script.cutStreamAfter, undefined);
    const types = text.split('\n\n').filter((frame) => frame.startsWith('event: ')).map((frame) => frame.slice('event: '.length, frame.indexOf('\n')));
    assert.deepEqual(types, ['response.created', 'response.in_progress', 'response.output_item.added']);
    const whole = await post(`${upstream.baseUrl}/responses`, SCRIPTED_UPSTREAM_KEY, { model: 'm', input: 'hi', stream: true });
    assert.equal((await whole.text()).split('\n\n').filter((frame) => frame !== '').length, 10);
    assert.deepEqual(upstream.answered, ['failure', 'cut', 'text']);
    assert.deepEqual(upstream.violations, ['Incorrect API key provided.', 'Unknown request URL: POST /v1/chat/completions.']);
  } finally {
    await upstream.close();
  }
});

test('the event stream of an answer: the documented order, sequence numbers from 0, indexes consistent', () => {
  const events = responsesEvents({
    id: 'resp_1',
    model: 'm',
    created_at: 1,
    output: [
      { type: 'reasoning', id: 'rs_1', encrypted_content: 'enc' },
      { type: 'message', id: 'msg_1', text: 'Hi there' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
    ],
    usage: { input_tokens: 3, output_tokens: 4 },
  });
  assert.deepEqual(
    events.map((event) => [event['sequence_number'], event['type'], event['output_index'] ?? null]),
    [
      [0, 'response.created', null],
      [1, 'response.in_progress', null],
      [2, 'response.output_item.added', 0],
      [3, 'response.output_item.done', 0],
      [4, 'response.output_item.added', 1],
      [5, 'response.content_part.added', 1],
      [6, 'response.output_text.delta', 1],
      [7, 'response.output_text.delta', 1],
      [8, 'response.output_text.done', 1],
      [9, 'response.content_part.done', 1],
      [10, 'response.output_item.done', 1],
      [11, 'response.output_item.added', 2],
      [12, 'response.function_call_arguments.delta', 2],
      [13, 'response.function_call_arguments.delta', 2],
      [14, 'response.function_call_arguments.delta', 2],
      [15, 'response.function_call_arguments.done', 2],
      [16, 'response.output_item.done', 2],
      [17, 'response.completed', null],
    ],
  );
  const completed = events.at(-1)!['response'] as Record<string, any>;
  assert.deepEqual([completed['status'], completed['usage']['total_tokens'], completed['output'].length], ['completed', 7, 3]);
});

test('the Responses fake with websocketRefusal: an upgrade answered with that status and OpenAI error body, kept in upgrades', async () => {
  const upstream = await startScriptedResponses({ websocketRefusal: 426 });
  try {
    const req = http.request(`${upstream.baseUrl}/responses`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    req.end();
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    const parts: Buffer[] = [];
    for await (const part of res) parts.push(part as Buffer);
    assert.deepEqual([res.statusCode, res.headers['content-type'], JSON.parse(Buffer.concat(parts).toString('utf8'))], [
      426,
      'application/json',
      { error: { message: 'WebSocket is not served here; use HTTP.', type: 'invalid_request_error', param: null, code: null } },
    ]);
    assert.deepEqual(upstream.upgrades.map((r) => [r.method, r.url, r.headers['upgrade']]), [['GET', '/v1/responses', 'websocket']]);
    assert.deepEqual(upstream.answered, ['websocket 426']);
  } finally {
    await upstream.close();
  }
});
