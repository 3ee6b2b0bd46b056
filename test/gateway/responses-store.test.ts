// The gateway's response store through the Responses door: store: true keeps
// the answer for the key that made it; previous_response_id continues it (the
// upstream receives the whole conversation, so any target can); another key
// never sees it (404, as for an id never stored); GET and DELETE for the owner.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SCRIPTED_UPSTREAM_KEY, startScriptedOpenAI, PLAIN_ANSWER, type ScriptedUpstream } from '../support/scripted-upstreams.ts';
import { request, startGateway, type TestGateway } from './harness.ts';

const ALIAS = 'service-code';
let upstream: ScriptedUpstream;
let gw: TestGateway;
let otherKey: string;

before(async () => {
  upstream = await startScriptedOpenAI();
  gw = await startGateway({
    configValue: {
      providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'SCRIPTED_KEY', retry: { maxAttempts: 1 } } },
      aliases: { [ALIAS]: { provider: 'up', model: 'up-1' } },
      responses: { store: { enabled: true } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
  otherKey = (await gw.state.keys.create('other')).key;
});
after(async () => {
  await gw.close();
  await upstream.close();
});

function call(method: string, path: string, key: string, body?: unknown): ReturnType<typeof request> {
  return request(gw.baseUrl, method, path, { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

test('store: true, then previous_response_id: the upstream receives the whole conversation; another key gets 404', async () => {
  const first = await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'Remember: the drawbridge is up.', store: true });
  assert.equal(first.status, 200, first.text);
  const answer = first.json() as { id: string; store: boolean; previous_response_id: string | null };
  assert.equal(answer.store, true);
  assert.equal(answer.previous_response_id, null);

  const second = await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'What did I say?', previous_response_id: answer.id, store: true });
  assert.equal(second.status, 200, second.text);
  assert.equal((second.json() as { previous_response_id: string }).previous_response_id, answer.id);
  const sent = JSON.parse(upstream.received.at(-1)!.text) as { messages: Array<{ role: string; content: unknown }> };
  assert.deepEqual(sent.messages.map((m) => [m.role, m.content]), [
    ['user', 'Remember: the drawbridge is up.'],
    ['assistant', PLAIN_ANSWER],
    ['user', 'What did I say?'],
  ]);

  const stranger = await call('POST', '/v1/responses', otherKey, { model: ALIAS, input: 'And me?', previous_response_id: answer.id });
  assert.equal(stranger.status, 404);
  assert.deepEqual(stranger.json(), {
    error: { message: `No stored response '${answer.id}' for this API key (it may have expired).`, type: 'invalid_request_error', param: 'previous_response_id', code: 'response_not_found' },
  });
});

test('GET and DELETE /v1/responses/{id}: the owner only; another key is told nothing exists', async () => {
  const made = (await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'keep me', store: true })).json() as { id: string };
  const path = `/v1/responses/${made.id}`;
  const got = await call('GET', path, gw.key);
  assert.equal(got.status, 200);
  assert.equal((got.json() as { id: string; store: boolean }).id, made.id);
  assert.equal((await call('GET', path, otherKey)).status, 404);
  assert.equal((await call('DELETE', path, otherKey)).status, 404);
  const deleted = await call('DELETE', path, gw.key);
  assert.deepEqual(deleted.json(), { id: made.id, object: 'response', deleted: true });
  assert.equal((await call('GET', path, gw.key)).status, 404);
});

test('without store: true nothing is kept: a later previous_response_id is 404', async () => {
  const made = (await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'forget me' })).json() as { id: string; store: boolean };
  assert.equal(made.store, false);
  assert.equal((await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'x', previous_response_id: made.id })).status, 404);
});

test('a response the store cannot keep (past maxRecordBytes): the answer goes out, said not stored, and the log says why', async () => {
  const small = await startGateway({
    configValue: {
      providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'SCRIPTED_KEY', retry: { maxAttempts: 1 } } },
      aliases: { [ALIAS]: { provider: 'up', model: 'up-1' } },
      responses: { store: { enabled: true, maxRecordBytes: 65536, maxTotalBytes: 65536 } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
  try {
    const res = await request(small.baseUrl, 'POST', '/v1/responses', {
      headers: { authorization: `Bearer ${small.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: ALIAS, input: 'x'.repeat(70_000), store: true }),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json() as { store: boolean }).store, false);
    assert.ok(small.logs.some((l) => l['msg'] === 'a response was not stored'));
  } finally {
    await small.close();
  }
});

test('a streamed answer with store: true is kept before its terminal event goes out, which says so; the next turn continues it', async () => {
  const streamed = await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'Remember: the gate is shut.', store: true, stream: true });
  assert.equal(streamed.status, 200, streamed.text);
  const completed = streamed.text.split('\n\n').find((event) => event.startsWith('event: response.completed\n'));
  assert.ok(completed !== undefined, 'a response.completed event');
  const response = (JSON.parse(completed.split('\n')[1]!.slice('data: '.length)) as { response: { id: string; store: boolean; previous_response_id: string | null } }).response;
  assert.equal(response.store, true);
  assert.equal(response.previous_response_id, null);
  const next = await call('POST', '/v1/responses', gw.key, { model: ALIAS, input: 'What is shut?', previous_response_id: response.id });
  assert.equal(next.status, 200, next.text);
  const sent = JSON.parse(upstream.received.at(-1)!.text) as { messages: Array<{ role: string; content: unknown }> };
  assert.deepEqual(sent.messages.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.equal(sent.messages[0]?.content, 'Remember: the gate is shut.');
});

test('a stored conversation continues on a fallback target: the gateway, not an upstream, holds it', async () => {
  const first = await startScriptedOpenAI();
  const second = await startScriptedOpenAI();
  const provider = (baseUrl: string) => ({ type: 'openai', baseUrl, apiKeyEnv: 'SCRIPTED_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } });
  const fallback = await startGateway({
    configValue: {
      providers: { one: provider(first.baseUrl), two: provider(second.baseUrl) },
      aliases: { [ALIAS]: { targets: [{ provider: 'one', model: 'm-1', priority: 0 }, { provider: 'two', model: 'm-2', priority: 1 }] } },
      responses: { store: { enabled: true } },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
  try {
    const post = (body: unknown) =>
      request(fallback.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${fallback.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const made = (await post({ model: ALIAS, input: 'The drawbridge is up.', store: true })).json() as { id: string };
    assert.equal(first.received.length, 1);
    first.failures.push({ status: 500, type: 'server_error', message: 'down' });
    const next = await post({ model: ALIAS, input: 'What is up?', previous_response_id: made.id });
    assert.equal(next.status, 200, next.text);
    const sent = JSON.parse(second.received.at(-1)!.text) as { model: string; messages: Array<{ role: string; content: unknown }> };
    assert.equal(sent.model, 'm-2');
    assert.deepEqual(sent.messages.map((m) => [m.role, m.content]), [
      ['user', 'The drawbridge is up.'],
      ['assistant', PLAIN_ANSWER],
      ['user', 'What is up?'],
    ]);
  } finally {
    await fallback.close();
    await first.close();
    await second.close();
  }
});
