// The answer guard through the live gateway's Messages and Responses doors,
// with the real guard and the real SDKs reading the streams: answers an
// Anthropic upstream and a Responses upstream give (passed through) and an
// OpenAI-compatible chat upstream gives (translated), streamed and whole;
// values masked, blocked (cut as a content filter), logged, restored, split
// across events; tool input JSON; signed thinking untouched; and no sink
// holding a planted value.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { checkMessageStream } from '../support/anthropic-message-stream-checker.ts';
import { checkResponseStream } from '../support/responses-stream-checker.ts';
import { eventually } from '../support/eventually.ts';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type RawResponse, type TestGateway } from './harness.ts';

/** secrets: mask. */
const AWS = 'AKIAQ3EGRTWXZ7PLMN4K';
const AWS_MASK = '[AWS_ACCESS_KEY_1]';
/** card_number: block. */
const CARD = '4111111111111111';
/** email: log. */
const EMAIL = 'jane.doe@example.com';

let up: FakeUpstream;
let gw: TestGateway;
const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
/** Every body the client got, for the sinks test. */
const bodies: string[] = [];
/** What the fake upstream answers next: written as it is, by path. */
let answer: (res: ServerResponse) => void = (res) => res.end();

before(async () => {
  up = await startFakeUpstream((_req, res) => answer(res));
  const detectors = { secrets: 'mask', card_number: 'block', email: 'log' };
  gw = await startGateway({
    metrics,
    configValue: {
      providers: {
        claude: { type: 'anthropic', baseUrl: `${up.baseUrl}/v1`, apiKeyEnv: 'K', retry: { maxAttempts: 1 } },
        resp: { type: 'openai', baseUrl: up.baseUrl, apiKeyEnv: 'K', responses: 'passthrough', retry: { maxAttempts: 1 } },
        chat: { type: 'openai', baseUrl: up.baseUrl, apiKeyEnv: 'K', responses: 'translate', retry: { maxAttempts: 1 } },
      },
      aliases: {
        'a-claude': { provider: 'claude', model: 'claude-up' },
        'a-resp': { provider: 'resp', model: 'gpt-up' },
        'a-chat': { provider: 'chat', model: 'chat-up' },
        'a-restore-only': { provider: 'claude', model: 'claude-up', guard: { detectors, answers: { scan: false, restore: true } } },
      },
      responses: { store: { enabled: true } },
      guard: { detectors, answers: { scan: true, restore: true, holdBackChars: 64 } },
    },
    env: { K: 'sk-up' },
  });
});
after(async () => {
  await gw.close();
  await up.close();
});

function sse(events: readonly [string, Record<string, unknown>][]): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const [name, data] of events) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    res.end();
  };
}

function json(body: unknown): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

async function post(path: string, body: unknown, id: string): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': id };
  if (path === '/v1/messages') Object.assign(headers, { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' });
  else headers['authorization'] = `Bearer ${gw.key}`;
  const res = await request(gw.baseUrl, 'POST', path, { headers, body: JSON.stringify(body) });
  bodies.push(res.text);
  return res;
}

async function accessLine(id: string): Promise<Record<string, unknown>> {
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['requestId'] === id), `the access line of ${id}`);
  return gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === id) as Record<string, unknown>;
}

// --- Anthropic upstream, passed through ---

const messageStart = (model = 'claude-up'): [string, Record<string, unknown>] => [
  'message_start',
  { type: 'message_start', message: { id: 'msg_up', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } },
];
const textBlock = (index: number, pieces: readonly string[]): [string, Record<string, unknown>][] => [
  ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }],
  ...pieces.map((text): [string, Record<string, unknown>] => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }]),
  ['content_block_stop', { type: 'content_block_stop', index }],
];
const toolBlock = (index: number, pieces: readonly string[]): [string, Record<string, unknown>][] => [
  ['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${index}`, name: 'lookup', input: {} } }],
  ...pieces.map((partial_json): [string, Record<string, unknown>] => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }]),
  ['content_block_stop', { type: 'content_block_stop', index }],
];
const messageEnd = (reason: string): [string, Record<string, unknown>][] => [
  ['message_delta', { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 42 } }],
  ['message_stop', { type: 'message_stop' }],
];
const ask = (model: string, text = 'hello', extra: Record<string, unknown> = {}) => ({ model, max_tokens: 256, messages: [{ role: 'user' as const, content: text }], ...extra });

/** Splits `text` into pieces of `size` characters. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Whole passed-through answers pass the raw guard once the pipeline calls guardRawAnswer (its TODO(integration)); until then they are todo. */

describe('the Messages door, an Anthropic upstream (passed through)', () => {
  let client: Anthropic;
  before(() => {
    client = new Anthropic({ apiKey: gw.key, baseURL: gw.baseUrl, maxRetries: 0 });
  });

  test('a key split over many deltas is masked; text and tool input JSON; the SDK reads the stream', async () => {
    const text = `Your key is ${AWS} and the mail ${EMAIL}, done.`;
    answer = sse([messageStart(), ...textBlock(0, pieces(text, 3)), ...toolBlock(1, pieces(JSON.stringify({ key: AWS, n: 7 }), 4)), ...messageEnd('tool_use')]);
    const res = await post('/v1/messages', ask('a-claude', 'hi', { stream: true }), 'm-mask');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text.includes(AWS), false);
    const checked = checkMessageStream(res.text);
    assert.deepEqual(checked.message.content, [
      { type: 'text', text: `Your key is ${AWS_MASK} and the mail ${EMAIL}, done.` },
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { key: AWS_MASK, n: 7 } },
    ]);
    assert.equal(checked.message.stop_reason, 'tool_use');
    assert.equal(checked.message.model, 'a-claude');

    const streamed = await client.messages.stream(ask('a-claude')).finalMessage();
    assert.deepEqual(streamed.content, [
      { type: 'text', text: `Your key is ${AWS_MASK} and the mail ${EMAIL}, done.` },
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { key: AWS_MASK, n: 7 } },
    ]);
    const line = await accessLine('m-mask');
    assert.equal(line['guard'], 'aws_access_key:answer.content[0].text:mask,email:answer.content[0].text:log,aws_access_key:answer.content[1].input:mask');
  });

  test('a card is blocked: the answer cut before it, the tool call after it dropped, stop_reason refusal with the upstream usage', async () => {
    answer = sse([messageStart(), ...textBlock(0, ['Paying with ', CARD.slice(0, 7), CARD.slice(7), ' now, and more text']), ...toolBlock(1, ['{}']), ...messageEnd('tool_use')]);
    const res = await post('/v1/messages', ask('a-claude', 'hi', { stream: true }), 'm-block');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text.includes(CARD.slice(0, 7)), false);
    assert.equal(res.text.includes('more text'), false);
    const checked = checkMessageStream(res.text);
    assert.deepEqual(checked.message.content, [{ type: 'text', text: 'Paying with ' }]);
    assert.equal(checked.message.stop_reason, 'refusal');
    assert.equal(checked.message.usage.output_tokens, 42);
    const streamed = await client.messages.stream(ask('a-claude')).finalMessage();
    assert.equal(streamed.stop_reason, 'refusal');
    assert.deepEqual(streamed.content, [{ type: 'text', text: 'Paying with ' }]);
    assert.equal((await accessLine('m-block'))['guard'], 'card_number:answer.content[0].text:block');
  });

  test('signed thinking goes out unchanged, its signature kept; a key in it is only logged', async () => {
    const thinking = `The user's key ${AWS} must not be repeated.`;
    const signature = 'EqQBCgIYAhIMsig';
    answer = sse([
      messageStart(),
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
      ...pieces(thinking, 5).map((t): [string, Record<string, unknown>] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: t } }]),
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ...textBlock(1, ['I will not.']),
      ...messageEnd('end_turn'),
    ]);
    const res = await post('/v1/messages', ask('a-claude', 'hi', { stream: true }), 'm-think');
    const checked = checkMessageStream(res.text);
    assert.deepEqual(checked.message.content, [
      { type: 'thinking', thinking, signature },
      { type: 'text', text: 'I will not.' },
    ]);
    assert.equal((await accessLine('m-think'))['guard'], 'aws_access_key:answer.content[0].thinking:log');
    const streamed = await client.messages.stream(ask('a-claude')).finalMessage();
    assert.deepEqual(streamed.content[0], { type: 'thinking', thinking, signature });
  });

  test("restore: the request's masked key comes back where the answer names its placeholder, split over deltas", async () => {
    answer = sse([messageStart(), ...textBlock(0, ['You sent [AWS_ACC', 'ESS_KEY_1', '] and [AWS_ACCESS_KEY_9].']), ...messageEnd('end_turn')]);
    const res = await post('/v1/messages', ask('a-claude', `my key is ${AWS}`, { stream: true }), 'm-restore');
    assert.equal(JSON.stringify(up.requests.at(-1)?.body).includes(AWS), false);
    assert.deepEqual(checkMessageStream(res.text).message.content, [{ type: 'text', text: `You sent ${AWS} and [AWS_ACCESS_KEY_9].` }]);
    // Restored text is not scanned: the only findings are the request's.
    assert.equal((await accessLine('m-restore'))['guard'], 'aws_access_key:messages[0].content:mask');
  });

  test('restore without scanning: placeholders restored, a key in the answer goes as it came', async () => {
    answer = sse([messageStart(), ...textBlock(0, ['Back: [AWS_ACCESS_KEY_1]; new: ', 'AKIAQ3EGRTWXZ7PLMN4Q']), ...messageEnd('end_turn')]);
    const res = await post('/v1/messages', ask('a-restore-only', `my key is ${AWS}`, { stream: true }), 'm-restore-only');
    assert.deepEqual(checkMessageStream(res.text).message.content, [{ type: 'text', text: `Back: ${AWS}; new: AKIAQ3EGRTWXZ7PLMN4Q` }]);
  });

  test('a whole answer: masked text and tool input; a blocked one cut with stop_reason refusal', async () => {
    const whole = (content: unknown[], stop = 'end_turn') => json({ id: 'msg_w', type: 'message', role: 'assistant', model: 'claude-up', content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 9 } });
    answer = whole([{ type: 'text', text: `key ${AWS}` }, { type: 'tool_use', id: 'toolu_w', name: 'lookup', input: { key: AWS } }], 'tool_use');
    const masked = await client.messages.create(ask('a-claude'));
    assert.deepEqual(masked.content, [
      { type: 'text', text: `key ${AWS_MASK}` },
      { type: 'tool_use', id: 'toolu_w', name: 'lookup', input: { key: AWS_MASK } },
    ]);
    answer = whole([{ type: 'text', text: `card ${CARD} ok` }, { type: 'tool_use', id: 'toolu_w', name: 'lookup', input: {} }], 'tool_use');
    const blocked = await client.messages.create(ask('a-claude'));
    assert.deepEqual(blocked.content, [{ type: 'text', text: 'card ' }]);
    assert.equal(blocked.stop_reason, 'refusal');
  });
});

// --- Responses upstream, passed through ---

const created = {
  id: 'resp_up',
  object: 'response',
  created_at: 1,
  status: 'in_progress',
  completed_at: null,
  error: null,
  incomplete_details: null,
  access_programs: null,
  instructions: null,
  metadata: {},
  model: 'gpt-up',
  output: [],
  parallel_tool_calls: true,
  temperature: 1,
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  store: false,
};

/** A Responses stream of one message whose text comes in `deltas`, then (optionally) a function call with `args`. */
function responsesEvents(deltas: readonly string[], args?: readonly string[]): [string, Record<string, unknown>][] {
  let n = 0;
  const e = (type: string, fields: Record<string, unknown>): [string, Record<string, unknown>] => [type, { type, sequence_number: n++, ...fields }];
  const text = deltas.join('');
  const at = { item_id: 'msg_a', output_index: 0, content_index: 0 };
  const part = (t: string) => ({ type: 'output_text', annotations: [], logprobs: [], text: t });
  const message = (status: string, content: unknown[]) => ({ id: 'msg_a', type: 'message', status, role: 'assistant', content });
  const events = [
    e('response.created', { response: created }),
    e('response.in_progress', { response: created }),
    e('response.output_item.added', { output_index: 0, item: message('in_progress', []) }),
    e('response.content_part.added', { ...at, part: part('') }),
    ...deltas.map((delta) => e('response.output_text.delta', { ...at, delta, logprobs: [] })),
    e('response.output_text.done', { ...at, text, logprobs: [] }),
    e('response.content_part.done', { ...at, part: part(text) }),
    e('response.output_item.done', { output_index: 0, item: message('completed', [part(text)]) }),
  ];
  const output: unknown[] = [message('completed', [part(text)])];
  if (args !== undefined) {
    const call = (status: string, a: string) => ({ id: 'fc_b', type: 'function_call', status, arguments: a, call_id: 'call_b', name: 'lookup' });
    const whole = args.join('');
    events.push(e('response.output_item.added', { output_index: 1, item: call('in_progress', '') }));
    for (const delta of args) events.push(e('response.function_call_arguments.delta', { item_id: 'fc_b', output_index: 1, delta }));
    events.push(e('response.function_call_arguments.done', { item_id: 'fc_b', output_index: 1, arguments: whole }));
    events.push(e('response.output_item.done', { output_index: 1, item: call('completed', whole) }));
    output.push(call('completed', whole));
  }
  events.push(e('response.completed', { response: { ...created, status: 'completed', completed_at: 2, output, usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: 21, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 30 } } }));
  return events;
}

describe('the Responses door, a Responses upstream (passed through)', () => {
  let client: OpenAI;
  before(() => {
    client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.baseUrl}/v1`, maxRetries: 0 });
  });

  test('masked across deltas, in the done events; the SDK reads it', async () => {
    const text = `The key is ${AWS}, mail ${EMAIL}.`;
    answer = sse(responsesEvents(pieces(text, 4), pieces(JSON.stringify({ key: AWS }), 5)));
    const res = await post('/v1/responses', { model: 'a-resp', input: 'hi', stream: true }, 'r-mask');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text.includes(AWS), false);
    const checked = checkResponseStream(res.text);
    const response = checked.response;
    assert.equal(response['status'], 'completed');
    assert.equal(response['output'][0].content[0].text, `The key is ${AWS_MASK}, mail ${EMAIL}.`);
    assert.deepEqual(JSON.parse(response['output'][1].arguments), { key: AWS_MASK });
    const final = await client.responses.stream({ model: 'a-resp', input: 'hi' }).finalResponse();
    assert.equal(final.output_text, `The key is ${AWS_MASK}, mail ${EMAIL}.`);
    assert.deepEqual(final.output[1], { id: 'fc_b', type: 'function_call', status: 'completed', arguments: '{"key":"[AWS_ACCESS_KEY_1]"}', call_id: 'call_b', name: 'lookup', parsed_arguments: null });
    assert.equal((await accessLine('r-mask'))['guard'], 'aws_access_key:answer.output[0].content[0].text:mask,email:answer.output[0].content[0].text:log,aws_access_key:answer.output[1].arguments:mask');
  });

  test("restore: the request's masked key comes back in the text and the function arguments, JSON-escaped where it must be", async () => {
    answer = sse(responsesEvents(['Yours: [AWS_ACCESS', '_KEY_1].'], ['{"key":"[AWS_', 'ACCESS_KEY_1]"}']));
    const res = await post('/v1/responses', { model: 'a-resp', input: `keep ${AWS} safe`, stream: true }, 'r-restore');
    assert.equal(JSON.stringify(up.requests.at(-1)?.body).includes(AWS), false);
    const response = checkResponseStream(res.text).response;
    assert.equal(response['output'][0].content[0].text, `Yours: ${AWS}.`);
    assert.deepEqual(JSON.parse(response['output'][1].arguments), { key: AWS });
    assert.equal((await accessLine('r-restore'))['guard'], 'aws_access_key:input:mask');
  });

  test('a stored response (store: true) is what the client got', async () => {
    answer = sse(responsesEvents(pieces(`stored ${AWS} here`, 6)));
    const res = await post('/v1/responses', { model: 'a-resp', input: 'hi', stream: true, store: true }, 'r-store');
    assert.equal(res.text.includes(AWS), false);
    const completed = res.text.split('\n\n').find((event) => event.startsWith('event: response.completed\n')) ?? '';
    const response = (JSON.parse(completed.slice(completed.indexOf('data: ') + 'data: '.length)) as { response: { id: string; store: boolean } }).response;
    assert.equal(response.store, true);
    const stored = await request(gw.baseUrl, 'GET', `/v1/responses/${response.id}`, { headers: { authorization: `Bearer ${gw.key}` } });
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.text.includes(AWS), false);
    assert.equal((stored.json() as { output: { content: { text: string }[] }[] }).output[0]?.content[0]?.text, `stored ${AWS_MASK} here`);
  });

  test('a card is blocked: the message cut and incomplete, the call after it dropped, the response incomplete by content_filter', async () => {
    answer = sse(responsesEvents(['Card: ', CARD.slice(0, 5), CARD.slice(5), ' thanks'], ['{}']));
    const res = await post('/v1/responses', { model: 'a-resp', input: 'hi', stream: true }, 'r-block');
    assert.equal(res.text.includes(CARD.slice(0, 5)), false);
    const checked = checkResponseStream(res.text);
    const response = checked.response;
    assert.equal(response['status'], 'incomplete');
    assert.deepEqual(response['incomplete_details'], { reason: 'content_filter' });
    assert.deepEqual(response['output'], [{ id: 'msg_a', type: 'message', status: 'incomplete', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Card: ' }] }]);
    assert.equal(response['usage'].output_tokens, 21);
    const final = await client.responses.stream({ model: 'a-resp', input: 'hi' }).finalResponse();
    assert.equal(final.status, 'incomplete');
    assert.equal(final.output_text, 'Card: ');
  });

  test('a whole answer: masked, and a blocked one incomplete by content_filter', async () => {
    const whole = (text: string) => json({ ...created, status: 'completed', completed_at: 2, output: [{ id: 'msg_w', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text }] }], usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } });
    answer = whole(`k ${AWS}`);
    const masked = await client.responses.create({ model: 'a-resp', input: 'hi' });
    assert.equal(masked.output_text, `k ${AWS_MASK}`);
    answer = whole(`c ${CARD} more`);
    const blocked = await client.responses.create({ model: 'a-resp', input: 'hi' });
    assert.equal(blocked.status, 'incomplete');
    assert.deepEqual(blocked.incomplete_details, { reason: 'content_filter' });
    assert.equal(blocked.output_text, 'c ');
  });
});

// --- a chat upstream, translated ---

function chatSse(contents: readonly string[]): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'chat-up' };
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
    for (const content of contents) res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  };
}

describe('translated streams (a chat upstream) on both doors', () => {
  test('Messages: masked across chunks; blocked as stop_reason refusal', async () => {
    answer = chatSse(pieces(`key ${AWS} end`, 3));
    const masked = checkMessageStream((await post('/v1/messages', ask('a-chat', 'hi', { stream: true }), 't-m-mask')).text);
    assert.deepEqual(masked.message.content, [{ type: 'text', text: `key ${AWS_MASK} end` }]);
    answer = chatSse(['pay ', CARD.slice(0, 8), CARD.slice(8), ' later']);
    const res = await post('/v1/messages', ask('a-chat', 'hi', { stream: true }), 't-m-block');
    assert.equal(res.text.includes(CARD.slice(0, 8)), false);
    const blocked = checkMessageStream(res.text);
    assert.deepEqual(blocked.message.content, [{ type: 'text', text: 'pay ' }]);
    assert.equal(blocked.message.stop_reason, 'refusal');
  });

  test('Responses: masked across chunks; blocked as incomplete by content_filter', async () => {
    answer = chatSse(pieces(`key ${AWS} end`, 3));
    const masked = checkResponseStream((await post('/v1/responses', { model: 'a-chat', input: 'hi', stream: true }, 't-r-mask')).text).response;
    assert.equal(masked.output[0]?.content[0]?.text, `key ${AWS_MASK} end`);
    answer = chatSse(['pay ', CARD.slice(0, 8), CARD.slice(8), ' later']);
    const res = await post('/v1/responses', { model: 'a-chat', input: 'hi', stream: true }, 't-r-block');
    assert.equal(res.text.includes(CARD.slice(0, 8)), false);
    const blocked = checkResponseStream(res.text).response;
    assert.equal(blocked.status, 'incomplete');
    assert.deepEqual(blocked.incomplete_details, { reason: 'content_filter' });
    assert.equal(blocked.output[0]?.content[0]?.text, 'pay ');
  });
});

test('no sink holds a planted value: every log line, the metrics, what the clients got of the blocked and masked values', async () => {
  const logs = JSON.stringify(gw.logs);
  for (const value of [AWS, CARD, EMAIL]) assert.equal(logs.includes(value) || metrics.expose().includes(value), false, value);
  for (const body of bodies) assert.equal(body.includes(CARD.slice(0, 5)), false);
  assert.match(metrics.expose(), /portcullis_guard_findings_total\{detector="card_number",action="block"\} [1-9]/);
  assert.match(metrics.expose(), /portcullis_guard_findings_total\{detector="aws_access_key",action="mask"\} [1-9]/);
});
