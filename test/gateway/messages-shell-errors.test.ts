// The HTTP shell's own refusals on the Messages paths answer in Anthropic's
// envelope with the request-id header, as the handlers' errors do; other
// paths keep OpenAI's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, startGateway, type TestGateway } from './harness.ts';

let gw: TestGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

test('a malformed x-request-id on /v1/messages: 400 invalid_request_error in Anthropic envelope, with a fresh request-id', async () => {
  const res = await request(gw.baseUrl, 'POST', '/v1/messages', { headers: { 'x-request-id': 'bad id!', 'x-api-key': gw.key, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 400);
  const id = res.headers['x-request-id'];
  assert.match(String(id), /^req_[0-9a-f]{32}$/);
  assert.equal(res.headers['request-id'], id);
  const body = res.json() as { type: string; error: { type: string; message: string }; request_id: string };
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'invalid_request_error');
  assert.equal(body.request_id, id);
});

test('a wrong method and an unknown path under /v1/messages: Anthropic envelope; /v1/chat/completions keeps OpenAI', async () => {
  for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
    const res = await request(gw.baseUrl, 'GET', path, { headers: { 'x-request-id': 'm-405' } });
    assert.equal(res.status, 405, path);
    assert.equal(res.headers['allow'], 'POST');
    assert.equal(res.headers['request-id'], 'm-405');
    const body = res.json() as { type: string; error: { type: string }; request_id: string };
    assert.deepEqual([body.type, body.error.type, body.request_id], ['error', 'invalid_request_error', 'm-405'], path);
  }
  const unknown = await request(gw.baseUrl, 'POST', '/v1/messages/batches', { headers: { 'x-request-id': 'm-404' } });
  assert.equal(unknown.status, 404);
  assert.equal((unknown.json() as { error: { type: string } }).error.type, 'not_found_error');
  const chat = await request(gw.baseUrl, 'GET', '/v1/chat/completions', { headers: { 'x-request-id': 'c-405' } });
  assert.equal(chat.status, 405);
  assert.equal(chat.headers['request-id'], undefined);
  assert.equal((chat.json() as { error: { code: string } }).error.code, 'method_not_allowed');
});
