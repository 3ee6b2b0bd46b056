// POST /v1/messages/count_tokens through the gateway: the upstream's count or
// the estimate, said in x-portcullis-token-count and on the access line; a
// failed upstream count falls back to the estimate with its reason; the key's
// request rate counts it, nothing is charged; errors in Anthropic's envelope.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { estimateMessageTokens } from '../../src/messages/token-estimate.ts';
import { accessLine, OPUS, postMessages, startMessagesGateway, type MessagesSetup } from './messages-fixtures.ts';

const COUNT = '/v1/messages/count_tokens';
const body = { model: OPUS, system: 'Be brief.', messages: [{ role: 'user', content: 'How many tokens is this?' }] };

let anthropic: MessagesSetup;
let openai: MessagesSetup;
before(async () => {
  anthropic = await startMessagesGateway('anthropic');
  openai = await startMessagesGateway('openai');
});
after(async () => {
  await anthropic.close();
  await openai.close();
});

test("an Anthropic upstream counts: its number, `upstream`, the access line's fields, no usage charged", async () => {
  const res = await postMessages(anthropic.gw, body, { 'x-request-id': 'count-1' }, COUNT);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-portcullis-token-count'], 'upstream');
  assert.equal(res.headers['request-id'], 'count-1');
  const received = anthropic.upstream.received.at(-1)!;
  assert.equal(received.url, '/v1/messages/count_tokens');
  const answer = res.json() as { input_tokens: number };
  assert.deepEqual(Object.keys(answer), ['input_tokens']);
  assert.ok(answer.input_tokens > 0);
  const line = await accessLine(anthropic.gw, 'count-1');
  assert.equal(line['alias'], OPUS);
  assert.equal(line['tokenCount'], 'upstream');
  assert.equal(line['tokenCountMethod'], 'anthropic');
  assert.equal(line['tokenCountProblem'], undefined);
  assert.equal(line['countedTokens'], answer.input_tokens);
  assert.equal(line['promptTokens'], null);
  assert.equal(line['costNanos'], null);
});

test('an upstream count that fails: the estimate, with the reason on the access line', async () => {
  anthropic.upstream.failures.push({ status: 503, type: 'overloaded_error', message: 'Overloaded' });
  const res = await postMessages(anthropic.gw, body, { 'x-request-id': 'count-2' }, COUNT);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-portcullis-token-count'], 'estimate');
  assert.deepEqual(res.json(), { input_tokens: estimateMessageTokens(body) });
  const line = await accessLine(anthropic.gw, 'count-2');
  assert.equal(line['tokenCount'], 'estimate');
  assert.equal(line['tokenCountProblem'], 'http:503');
});

test('an OpenAI-compatible upstream without a tokenizer setting: the estimate, nothing sent upstream', async () => {
  const before = openai.upstream.received.length;
  const res = await postMessages(openai.gw, body, { 'x-request-id': 'count-3' }, COUNT);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-portcullis-token-count'], 'estimate');
  assert.deepEqual(res.json(), { input_tokens: estimateMessageTokens(body) });
  assert.equal(openai.upstream.received.length, before);
  assert.equal((await accessLine(openai.gw, 'count-3'))['tokenCountMethod'], 'estimate');
});

test("the key's request rate counts a count; the refusal is Anthropic's 429 with retry-after", async () => {
  const created = await openai.gw.state.keys.create('one-a-minute', { limits: { requestsPerMinute: 1 } });
  const first = await postMessages(openai.gw, body, { 'x-api-key': created.key }, COUNT);
  assert.equal(first.status, 200, first.text);
  const second = await postMessages(openai.gw, body, { 'x-api-key': created.key, 'x-request-id': 'count-4' }, COUNT);
  assert.equal(second.status, 429);
  assert.ok(Number(second.headers['retry-after']) > 0);
  assert.equal((second.json() as { error: { type: string } }).error.type, 'rate_limit_error');
});

test('errors in Anthropic envelope: a bad key, an unknown alias, max_tokens (not a count_tokens field)', async () => {
  const bad = await postMessages(openai.gw, body, { 'x-api-key': 'sk-nope', 'x-request-id': 'count-5' }, COUNT);
  assert.equal(bad.status, 401);
  assert.deepEqual(bad.json(), { type: 'error', error: { type: 'authentication_error', message: 'Incorrect API key provided, or the key has been revoked.' }, request_id: 'count-5' });
  const unknown = await postMessages(openai.gw, { ...body, model: 'claude-nope' }, {}, COUNT);
  assert.equal(unknown.status, 404);
  assert.equal((unknown.json() as { error: { type: string } }).error.type, 'not_found_error');
  const extra = await postMessages(openai.gw, { ...body, max_tokens: 10 }, {}, COUNT);
  assert.equal(extra.status, 400);
  assert.match((extra.json() as { error: { message: string } }).error.message, /max_tokens/);
});
