// A WebSocket upgrade (newer Codex releases try one on /v1/responses first) is
// refused at once with 426, the answer Codex falls back to HTTP on; an h2c
// upgrade offer is ignored and answered in HTTP/1.1 as usual.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { request, startGateway, type TestGateway } from './harness.ts';

let gw: TestGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

const WEBSOCKET = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' };

test('a WebSocket upgrade on /v1/responses: 426 upgrade_not_supported, the connection closed after it', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/responses', { headers: { ...WEBSOCKET, authorization: `Bearer ${gw.key}`, 'x-request-id': 'ws-1' } });
  assert.equal(res.status, 426);
  assert.equal(res.headers['upgrade'], 'HTTP/1.1');
  assert.equal(res.headers['connection'], 'close');
  assert.deepEqual(res.json(), {
    error: {
      message: 'This gateway does not speak WebSocket: send the same request as a plain HTTP request (POST /v1/responses with "stream": true streams over server-sent events).',
      type: 'invalid_request_error',
      param: null,
      code: 'upgrade_not_supported',
    },
  });
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['requestId'] === 'ws-1' && l['error'] === 'upgrade_not_supported'), 'the access line names the refusal');
});

test('an h2c upgrade offer is not refused: the request is answered in HTTP/1.1', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA', authorization: `Bearer ${gw.key}` } });
  assert.equal(res.status, 200);
});
