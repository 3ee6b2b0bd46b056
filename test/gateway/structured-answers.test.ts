// Answers held to a strict json_schema, through the real gateway: an alias of
// two OpenAI-compatible fakes that takes json_schema (requestFields); the first
// answers off the schema, the second by it. The exact client answers (the 502
// body, the error frame that ends a committed stream, no [DONE]) and the
// access line's attempts.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { INVALID_LIST, LIST_MISMATCH, SHOPPING_LIST_SCHEMA, VALID_LIST } from '../support/shopping-list.ts';
import { openStream, postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let first: FakeUpstream;
let second: FakeUpstream;
let gw: TestGateway;

before(async () => {
  first = await startFakeUpstream(() => {});
  second = await startFakeUpstream(() => {});
  const upstream = { type: 'openai', retry: { maxAttempts: 2 }, circuitBreaker: { failureThreshold: 1 } };
  gw = await startGateway({
    configValue: {
      providers: { first: { ...upstream, baseUrl: first.baseUrl }, second: { ...upstream, baseUrl: second.baseUrl } },
      aliases: {
        'service-lists': {
          requestFields: ['json_schema'],
          targets: [
            { provider: 'first', model: 'first-model', priority: 0 },
            { provider: 'second', model: 'second-model', priority: 1 },
          ],
        },
      },
    },
  });
});
after(async () => {
  await gw.close();
  await first.close();
  await second.close();
});
beforeEach(() => {
  first.requests.length = 0;
  second.requests.length = 0;
  first.handle = (_r, res) => json(res, completion(INVALID_LIST));
  second.handle = (_r, res) => json(res, completion(VALID_LIST));
});

function json(res: http.ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const completion = (content: string) => ({
  id: 'chatcmpl-u',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 },
});

function chunk(content: string | null, finish: string | null = null): string {
  const delta = content === null ? {} : { content };
  return `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

const USAGE = `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [], usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 } })}\n\n`;

/** `pieces` as content deltas, the finish chunk, usage and [DONE], in one write. */
function streamWhole(res: http.ServerResponse, pieces: string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`${pieces.map((p) => chunk(p)).join('')}${chunk(null, 'stop')}${USAGE}data: [DONE]\n\n`);
}

function ask(extra: Record<string, unknown> = {}, strict = true): Record<string, unknown> {
  return {
    model: 'service-lists',
    messages: [{ role: 'user', content: 'Shopping list as JSON' }],
    response_format: { type: 'json_schema', json_schema: { name: 'shopping', strict, schema: SHOPPING_LIST_SCHEMA } },
    ...extra,
  };
}

async function accessLine(requestId: string): Promise<Record<string, unknown>> {
  const find = () => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

/** The content the client got, joined from the stream's chunks. */
function streamedContent(payloads: string[]): string {
  return payloads
    .filter((p) => p !== '[DONE]')
    .map((p) => (JSON.parse(p) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('');
}

test('an answer off the schema falls back to the next target, which answers by it', async () => {
  const res = await postChat(gw, ask(), { 'x-request-id': 'so-fallback' });
  assert.equal(res.status, 200);
  assert.equal((res.json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, VALID_LIST);
  // Not retried on the first target, though its policy allows two attempts.
  assert.equal(first.requests.length, 1);
  assert.equal(second.requests.length, 1);
  // Each target was asked for the schema it is then held to.
  const asked = { type: 'json_schema', json_schema: { name: 'shopping', strict: true, schema: SHOPPING_LIST_SCHEMA } };
  assert.deepEqual((first.requests[0]?.body as { response_format: unknown }).response_format, asked);
  assert.deepEqual((second.requests[0]?.body as { response_format: unknown }).response_format, asked);
  const line = await accessLine('so-fallback');
  assert.equal(line['requestFields'], 'json_schema');
  assert.equal(line['attempts'], 'first/first-model:fallback:502,second/second-model:ok');
  assert.equal(line['target'], 'second/second-model');
  assert.equal(line['status'], 200);
});

test('every target off the schema: the client gets the 502 naming the path, never the answer as valid', async () => {
  second.handle = (_r, res) => json(res, completion(INVALID_LIST));
  const res = await postChat(gw, ask(), { 'x-request-id': 'so-502' });
  assert.equal(res.status, 502);
  assert.deepEqual(res.json(), LIST_MISMATCH);
  const line = await accessLine('so-502');
  assert.equal(line['attempts'], 'first/first-model:fallback:502,second/second-model:fallback:502');
  assert.equal(line['error'], 'upstream_schema_mismatch');
  // The breakers (one failure opens them) did not count the mismatches: the first target is asked again.
  second.handle = (_r, res) => json(res, completion(VALID_LIST));
  const again = await postChat(gw, ask(), { 'x-request-id': 'so-again' });
  assert.equal(again.status, 200);
  assert.equal((await accessLine('so-again'))['attempts'], 'first/first-model:fallback:502,second/second-model:ok');
});

test('strict false: the answer is not checked and comes back as the upstream gave it', async () => {
  const res = await postChat(gw, ask({}, false), { 'x-request-id': 'so-loose' });
  assert.equal(res.status, 200);
  assert.equal((res.json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, INVALID_LIST);
  assert.equal(second.requests.length, 0);
});

test('a stream off the schema that arrives whole falls back; the client gets the next target\'s stream', async () => {
  first.handle = (_r, res) => streamWhole(res, ['{"items":[{"name":"milk","qty":1},', '{"name":"eggs","qty":12},{"name":"tea","qty":"two"}]}']);
  second.handle = (_r, res) => streamWhole(res, ['{"items":[{"name":"milk",', '"qty":1}]}']);
  const res = await postChat(gw, ask({ stream: true }), { 'x-request-id': 'so-stream-whole' });
  assert.equal(res.status, 200);
  const payloads = sseData(res.text);
  assert.equal(payloads.at(-1), '[DONE]');
  assert.equal(streamedContent(payloads), '{"items":[{"name":"milk","qty":1}]}');
  assert.equal((await accessLine('so-stream-whole'))['attempts'], 'first/first-model:fallback:502,second/second-model:ok');
});

test('a committed stream that ends off the schema: the error frame in place of the finish chunk, and no [DONE]', async () => {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  first.handle = (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk('{"items":[{"name":"milk","qty":1},'));
    void released.then(() => res.end(`${chunk('{"name":"eggs","qty":12},{"name":"tea","qty":"two"}]}')}${chunk(null, 'stop')}${USAGE}data: [DONE]\n\n`));
  };
  const stream = await openStream(gw, gw.key, ask({ stream: true }));
  // The status line went out with the first event: the answer is the first target's now.
  assert.equal(stream.status, 200);
  release();
  const text = await stream.body;
  const payloads = sseData(text);
  assert.equal(payloads.length, 2);
  assert.deepEqual((JSON.parse(payloads[0] as string) as { choices: unknown[] }).choices, [{ index: 0, delta: { role: 'assistant', content: '{"items":[{"name":"milk","qty":1},' }, finish_reason: null }]);
  assert.ok(text.endsWith(`data: ${JSON.stringify(LIST_MISMATCH)}\n\n`), text);
  assert.equal(second.requests.length, 0);
  const isCut = (l: Record<string, unknown>) => l['msg'] === 'request' && l['alias'] === 'service-lists' && l['stream'] === true && l['error'] === 'upstream_schema_mismatch';
  await eventually(() => gw.logs.some(isCut), 'the access line of the cut stream');
  const cut = gw.logs.find(isCut) as Record<string, unknown>;
  assert.equal(cut['status'], 200);
  assert.equal(cut['target'], 'first/first-model');
  assert.equal(cut['attempts'], undefined);
  // The response ended (with the error frame) rather than being cut off.
  assert.equal(cut['completed'], true);
});

const OTHER_CHOICE = {
  error: {
    message: "The upstream's answer does not match the response_format json_schema: $: the answer has a choice of index 1; the request asked for one choice, index 0",
    type: 'upstream_error',
    param: null,
    code: 'upstream_schema_mismatch',
  },
};

test('an answer through another choice is never passed as valid: a stream finished by choice 1, a whole answer of two choices', async () => {
  const other = (index: number, delta: Record<string, unknown>, finish: string | null = null): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index, delta, finish_reason: finish }] })}\n\n`;
  const offByChoice = (res: http.ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${other(0, { role: 'assistant', content: INVALID_LIST })}${other(1, {}, 'stop')}data: [DONE]\n\n`);
  };
  first.handle = (_r, res) => offByChoice(res);
  second.handle = (_r, res) => offByChoice(res);
  const streamed = await postChat(gw, ask({ stream: true }));
  assert.equal(streamed.status, 502);
  assert.deepEqual(streamed.json(), OTHER_CHOICE);
  const two = completion(VALID_LIST);
  const twoChoices = { ...two, choices: [...two.choices, { index: 1, message: { role: 'assistant', content: 'nope' }, finish_reason: 'stop' }] };
  first.handle = (_r, res) => json(res, twoChoices);
  second.handle = (_r, res) => json(res, twoChoices);
  const whole = await postChat(gw, ask());
  assert.equal(whole.status, 502);
  assert.deepEqual(whole.json(), OTHER_CHOICE);
});

test('content beside a refusal is held to the schema: only a refusal alone stands in for the answer', async () => {
  const refusing = (content: string | null) => {
    const answer = completion(content ?? '');
    return { ...answer, choices: [{ index: 0, message: { role: 'assistant', content, refusal: ' ' }, finish_reason: 'stop' }] };
  };
  first.handle = (_r, res) => json(res, refusing(INVALID_LIST));
  second.handle = (_r, res) => json(res, refusing(INVALID_LIST));
  const res = await postChat(gw, ask());
  assert.equal(res.status, 502);
  assert.deepEqual(res.json(), LIST_MISMATCH);
  first.handle = (_r, res) => json(res, refusing(null));
  const alone = await postChat(gw, ask());
  assert.equal(alone.status, 200);
  assert.equal((alone.json() as { choices: [{ message: { refusal: string } }] }).choices[0].message.refusal, ' ');
});
