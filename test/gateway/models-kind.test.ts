// Aliases of two kinds through the gateway: GET /v1/models says each record's
// kind and Anthropic's listing holds the chat models only; every chat-shaped
// door refuses an embeddings alias with 400 model_kind_mismatch in its own
// envelope, naming the chat models the key may use, before any upstream call.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, startGateway, type RawResponse, type TestGateway } from './harness.ts';

const CONFIG = {
  providers: { demo: { type: 'demo' } },
  requestFields: ['user'],
  aliases: {
    'service-chat': { provider: 'demo', model: 'portcullis-demo', requestFields: ['seed'] },
    'text-embed': { kind: 'embeddings', provider: 'demo', model: 'portcullis-demo-embed' },
    'service-mini': { provider: 'demo', model: 'portcullis-demo' },
  },
};

let gw: TestGateway;
let limited: TestGateway;
before(async () => {
  gw = await startGateway({ configValue: CONFIG });
  limited = await startGateway({ configValue: CONFIG, keySettings: { allowedAliases: ['service-mini', 'text-embed'] } });
});
after(async () => {
  await gw.close();
  await limited.close();
});

const bearer = (g: TestGateway): Record<string, string> => ({ authorization: `Bearer ${g.key}` });
const post = (g: TestGateway, path: string, body: unknown, headers: Record<string, string> = bearer(g)): Promise<RawResponse> =>
  request(g.baseUrl, 'POST', path, { headers: { 'content-type': 'application/json', 'x-request-id': 'kind-1', ...headers }, body: JSON.stringify(body) });
const anthropicHeaders = (g: TestGateway): Record<string, string> => ({ 'x-api-key': g.key, 'anthropic-version': '2023-06-01' });

const TO_CHAT = "'text-embed' is an embeddings model; send it to POST /v1/embeddings, or use one of the chat models: service-chat, service-mini, service-auto.";
const OPENAI_MISMATCH = { error: { message: TO_CHAT, type: 'invalid_request_error', param: 'model', code: 'model_kind_mismatch' } };

test('GET /v1/models: every alias with its kind, service-auto a chat model', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: bearer(gw) });
  assert.equal(res.status, 200);
  const body = res.json() as { object: string; data: Array<{ id: string; kind: string; object: string; owned_by: string; created: number }> };
  const created = body.data[0]?.created ?? 0;
  assert.deepEqual(body, {
    object: 'list',
    data: [
      { id: 'service-chat', object: 'model', created, owned_by: 'portcullis', kind: 'chat', request_fields: ['seed'] },
      // No chat fields on an embeddings model, whatever the top-level requestFields.
      { id: 'text-embed', object: 'model', created, owned_by: 'portcullis', kind: 'embeddings' },
      { id: 'service-mini', object: 'model', created, owned_by: 'portcullis', kind: 'chat', request_fields: ['user'] },
      { id: 'service-auto', object: 'model', created, owned_by: 'portcullis', kind: 'chat', request_fields: ['seed', 'user'] },
    ],
  });
});

test("GET /v1/models in Anthropic's shape: the chat models only", async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: anthropicHeaders(gw) });
  assert.equal(res.status, 200);
  const body = res.json() as { data: Array<{ id: string }>; first_id: string; last_id: string };
  assert.deepEqual(body.data.map((m) => m.id), ['service-chat', 'service-mini', 'service-auto']);
  assert.equal(body.first_id, 'service-chat');
  assert.equal(body.last_id, 'service-auto');
  const mine = (await request(limited.baseUrl, 'GET', '/v1/models', { headers: anthropicHeaders(limited) })).json() as { data: Array<{ id: string }> };
  assert.deepEqual(mine.data.map((m) => m.id), ['service-mini', 'service-auto']);
  const openai = (await request(limited.baseUrl, 'GET', '/v1/models', { headers: bearer(limited) })).json() as { data: Array<{ id: string; kind: string }> };
  assert.deepEqual(openai.data.map((m) => `${m.id}:${m.kind}`), ['text-embed:embeddings', 'service-mini:chat', 'service-auto:chat']);
});

test('chat completions naming an embeddings alias: 400 model_kind_mismatch naming the chat models', async () => {
  const res = await post(gw, '/v1/chat/completions', { model: 'text-embed', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), OPENAI_MISMATCH);
  assert.equal(gw.logs.find((l) => l['requestId'] === 'kind-1' && l['status'] === 400)?.['error'], 'model_kind_mismatch');
});

test('a field some chat alias takes does not hide the kind: still model_kind_mismatch', async () => {
  const res = await post(gw, '/v1/chat/completions', { model: 'text-embed', seed: 7, user: 'u', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), OPENAI_MISMATCH);
});

test('a streamed chat request is refused the same, before any event', async () => {
  const res = await post(gw, '/v1/chat/completions', { model: 'text-embed', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), OPENAI_MISMATCH);
});

test('the Responses door: the same 400 in its envelope', async () => {
  const res = await post(gw, '/v1/responses', { model: 'text-embed', input: 'hi' });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), OPENAI_MISMATCH);
});

test("the Messages door and count_tokens: the same 400 in Anthropic's envelope", async () => {
  const body = { model: 'text-embed', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
    const res = await post(gw, path, path.endsWith('count_tokens') ? { model: body.model, messages: body.messages } : body, { ...anthropicHeaders(gw), 'x-request-id': 'kind-m' });
    assert.equal(res.status, 400, path);
    assert.deepEqual(res.json(), { type: 'error', error: { type: 'invalid_request_error', message: TO_CHAT }, request_id: 'kind-m' }, path);
  }
});

test('the chat models named are those the key may use', async () => {
  const res = await post(limited, '/v1/chat/completions', { model: 'text-embed', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), {
    error: {
      message: "'text-embed' is an embeddings model; send it to POST /v1/embeddings, or use one of the chat models: service-mini, service-auto.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_kind_mismatch',
    },
  });
});
