// GET /v1/models for Anthropic's clients: with `anthropic-version` the list is
// in Anthropic's shape, the key may come as x-api-key, and errors are in
// Anthropic's envelope with the `request-id` header; without it nothing changes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, startGateway, type TestGateway } from './harness.ts';

let gw: TestGateway;
let limited: TestGateway;
before(async () => {
  gw = await startGateway();
  limited = await startGateway({ keySettings: { allowedAliases: ['service-chat'] } });
});
after(async () => {
  await gw.close();
  await limited.close();
});

const ANTHROPIC = { 'anthropic-version': '2023-06-01' };

interface AnthropicListing {
  data: { type: string; id: string; display_name: string; created_at: string }[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

test('with anthropic-version and x-api-key: Anthropic list shape, every alias, one page', async () => {
  const openai = (await request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${gw.key}` } })).json() as { data: { id: string; created: number }[] };
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { ...ANTHROPIC, 'x-api-key': gw.key, 'x-request-id': 'models-1' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers['request-id'], 'models-1');
  const body = res.json() as AnthropicListing;
  const created = new Date((openai.data[0]?.created ?? 0) * 1000).toISOString().replace('.000Z', 'Z');
  assert.deepEqual(body, {
    data: openai.data.map((m) => ({ type: 'model', id: m.id, display_name: m.id, created_at: created })),
    has_more: false,
    first_id: openai.data[0]?.id,
    last_id: openai.data.at(-1)?.id,
  });
  assert.ok(body.data.length >= 2);
});

test('the same with the key as a Bearer token (the Anthropic SDK sends it so)', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { 'anthropic-version': '2026-10-21', authorization: `Bearer ${gw.key}` } });
  assert.equal(res.status, 200);
  assert.equal((res.json() as AnthropicListing).has_more, false);
});

test('a key limited to some aliases sees those and service-auto', async () => {
  const res = await request(limited.baseUrl, 'GET', '/v1/models', { headers: { ...ANTHROPIC, 'x-api-key': limited.key } });
  assert.deepEqual((res.json() as AnthropicListing).data.map((m) => m.id), ['service-chat', 'service-auto']);
});

test('a wrong key: 401 authentication_error in Anthropic envelope, the key never echoed', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { ...ANTHROPIC, 'x-api-key': 'sk-not-ours', 'x-request-id': 'models-2' } });
  assert.equal(res.status, 401);
  assert.equal(res.headers['request-id'], 'models-2');
  assert.deepEqual(res.json(), {
    type: 'error',
    error: { type: 'authentication_error', message: 'Incorrect API key provided, or the key has been revoked.' },
    request_id: 'models-2',
  });
  const none = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { ...ANTHROPIC, 'x-request-id': 'models-3' } });
  assert.equal(none.status, 401);
  assert.deepEqual(none.json(), {
    type: 'error',
    error: {
      type: 'authentication_error',
      message: "You didn't provide an API key. Send it in the x-api-key header (ANTHROPIC_API_KEY) or as 'Authorization: Bearer YOUR_KEY'; keys are created with `portcullis keys create`.",
    },
    request_id: 'models-3',
  });
  const twice = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { ...ANTHROPIC, 'x-api-key': [gw.key, gw.key] as unknown as string } });
  assert.equal(twice.status, 401);
  assert.equal((twice.json() as { error: { message: string } }).error.message, 'Send the x-api-key header once, with one key.');
});

test('without anthropic-version: OpenAI shape, and x-api-key is not a key there', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { 'x-api-key': gw.key } });
  assert.equal(res.status, 401);
  assert.equal(res.headers['request-id'], undefined);
  assert.deepEqual(res.json(), {
    error: {
      message:
        "You didn't provide an API key. This path reads the key from the Authorization header as 'Bearer YOUR_KEY'; x-api-key is read on Anthropic's paths (/v1/messages) and, for GET /v1/models, with an anthropic-version header.",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  });
});
