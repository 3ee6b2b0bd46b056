// Auth, media type, body limits and early rejection on the real server.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { postChat, request, startGateway, type TestGateway } from './harness.ts';
import { eventually } from '../support/eventually.ts';

let gw: TestGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

const hello = { model: 'service-chat', messages: [{ role: 'user', content: 'hi' }] };

test('missing key: 401 invalid_api_key with WWW-Authenticate: Bearer', async () => {
  const res = await request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', 'x-request-id': 'auth-1' },
    body: JSON.stringify(hello),
  });
  assert.equal(res.status, 401);
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="portcullis"');
  assert.equal(res.headers['x-request-id'], 'auth-1');
  assert.deepEqual(res.json(), {
    error: {
      message: "You didn't provide an API key. Send it in the Authorization header as 'Bearer YOUR_KEY'; keys are created with `portcullis keys create`.",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  });
});

test('wrong, malformed or non-Bearer key: 401, and the key is never echoed', async () => {
  const wrongChecksum = gw.key.slice(0, -1) + (gw.key.endsWith('A') ? 'B' : 'A');
  for (const auth of [`Bearer ${wrongChecksum}`, 'Bearer sk-not-ours', `Basic ${gw.key}`, 'Bearer']) {
    const res = await postChat(gw, hello, { authorization: auth });
    assert.equal(res.status, 401, auth);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="portcullis"');
    const body = res.json() as { error: { code: string } };
    assert.equal(body.error.code, 'invalid_api_key');
    assert.equal(res.text.includes('sk-not-ours'), false);
    assert.equal(res.text.includes(wrongChecksum), false);
  }
  const models = await request(gw.baseUrl, 'GET', '/v1/models');
  assert.equal(models.status, 401);
});

test('a non-JSON Content-Type is 415', async () => {
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
    const res = await postChat(gw, hello, { 'content-type': ct });
    assert.equal(res.status, 415, ct);
    assert.deepEqual(res.json(), {
      error: { message: `Unsupported Content-Type '${ct}'; expected application/json.`, type: 'invalid_request_error', param: null, code: 'unsupported_media_type' },
    });
  }
  const ok = await postChat(gw, hello, { 'content-type': 'Application/JSON; charset=UTF-8' });
  assert.equal(ok.status, 200);
  const none = await request(gw.baseUrl, 'POST', '/v1/chat/completions', { headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify(hello) });
  assert.equal(none.status, 415);
  assert.equal((none.json() as { error: { message: string } }).error.message, 'Missing Content-Type header; expected application/json.');
});

test('invalid JSON is 400 invalid_json with the byte offset', async () => {
  const res = await postChat(gw, '{"model": "service-chat", "messages": [}');
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), {
    error: {
      message:
        "We could not parse the JSON body of your request: Unexpected byte '}' (0x7d), expected a value or ']', at byte offset 39 (parser state FirstValueOrArrayEnd)",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_json',
    },
  });
  const empty = await postChat(gw, '');
  assert.equal(empty.status, 400);
  assert.equal((empty.json() as { error: { code: string } }).error.code, 'invalid_json');
});

test('a duplicated key is 400 duplicate_key', async () => {
  const res = await postChat(gw, '{"model":"service-chat","model":"service-chat","messages":[{"role":"user","content":"x"}]}');
  assert.equal(res.status, 400);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'duplicate_key');
});

test('nesting beyond the depth limit is 400 json_limit_exceeded', async () => {
  const deep = `{"model":"service-chat","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${'{"a":'.repeat(80)}1${'}'.repeat(80)}}}]}`;
  const res = await postChat(gw, deep);
  assert.equal(res.status, 400);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'json_limit_exceeded');
});

test('a declared Content-Length over the limit is 413 before any body byte is sent', async () => {
  const res = await new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'content-length': String(64 * 1024 * 1024) },
    });
    req.on('response', (r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c.toString()));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body, headers: r.headers }));
    });
    req.on('error', reject);
    req.flushHeaders(); // headers only: the body is never sent
  });
  assert.equal(res.status, 413);
  assert.equal(res.headers['connection'], 'close');
  assert.deepEqual(JSON.parse(res.body), {
    error: { message: 'Request body exceeds the limit of 4194304 bytes.', type: 'invalid_request_error', param: null, code: 'request_too_large' },
  });
});

test('a chunked body crossing the limit is 413 as soon as it crosses', async () => {
  const res = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
    let sent = 0;
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'transfer-encoding': 'chunked' },
    });
    let responded = false;
    req.on('response', (r) => {
      responded = true;
      r.resume();
      r.on('end', () => resolve({ status: r.statusCode ?? 0, sent }));
    });
    req.on('error', reject);
    // Many 512 KiB strings: under the string limit, so only the body limit can trip.
    const message = `{"role":"user","content":"${'a'.repeat(512 * 1024)}"},`;
    const head = '{"model":"service-chat","messages":[';
    req.write(head);
    sent += head.length;
    const more = (): void => {
      // Bounded: at most 16 MiB, stopping as soon as the answer arrived.
      if (responded || sent > 16 * 1024 * 1024 || req.destroyed || req.writableEnded) return;
      sent += message.length;
      if (req.write(message)) setImmediate(more);
      else req.once('drain', more);
    };
    more();
  });
  assert.equal(res.status, 413);
  assert.ok(res.sent < 16 * 1024 * 1024, `the client had to send ${res.sent} bytes`);
});

test('an unknown top-level field is rejected before the rest of the body arrives', async () => {
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'transfer-encoding': 'chunked' },
    });
    req.on('response', (r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c.toString()));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    // Never ended: the gateway must answer from these bytes alone.
    req.write('{"model":"service-chat","bogus_field":');
  });
  assert.equal(res.status, 400);
  const body = JSON.parse(res.body) as { error: { code: string; param: string } };
  assert.equal(body.error.code, 'unknown_parameter');
  assert.equal(body.error.param, 'bogus_field');
});

test('the models listing: OpenAI list shape with every alias and service-auto', async () => {
  const res = await request(gw.baseUrl, 'GET', '/v1/models', { headers: { authorization: `Bearer ${gw.key}` } });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), {
    object: 'list',
    data: [
      { id: 'service-chat', object: 'model', created: 1_700_000_000, owned_by: 'portcullis', kind: 'chat' },
      { id: 'service-auto', object: 'model', created: 1_700_000_000, owned_by: 'portcullis', kind: 'chat' },
    ],
  });
  const post = await request(gw.baseUrl, 'POST', '/v1/models', { headers: { authorization: `Bearer ${gw.key}` } });
  assert.equal(post.status, 405);
  assert.equal(post.headers['allow'], 'GET, HEAD');
});

test('an unknown alias is 404 model_not_found, naming the models the key may use', async () => {
  const res = await postChat(gw, { ...hello, model: 'gpt-4o' });
  assert.equal(res.status, 404);
  assert.deepEqual(res.json(), {
    error: {
      message: "The model 'gpt-4o' does not exist or you do not have access to it. Models this API key may use: service-chat, service-auto.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    },
  });
});

test('the access log records the key id and alias, never the key or the prompt', async () => {
  await postChat(gw, { model: 'service-auto', messages: [{ role: 'user', content: 'top secret prompt text' }] }, { 'x-request-id': 'log-check' });
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['requestId'] === 'log-check'), 'the access line');
  const line = gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === 'log-check');
  assert.equal(line?.['status'], 200);
  assert.equal(line?.['keyId'], gw.keyId);
  assert.equal(line?.['alias'], 'service-chat');
  const all = JSON.stringify(gw.logs);
  assert.equal(all.includes(gw.key), false);
  assert.equal(all.includes('top secret'), false);
});

test('a client that leaves mid-body is not an unexpected error: no error log, the request line says not completed', async () => {
  await new Promise<void>((resolve) => {
    const req = http.request(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'content-length': '1000', 'x-request-id': 'gone-1' },
    });
    req.on('error', () => resolve());
    // Leaves once the gateway is reading the body.
    req.write('{"model":"service-chat","messages":[', () => void eventually(() => gw.gateway.inFlight === 1, 'the request in flight').then(() => req.destroy()));
    req.on('close', () => resolve());
  });
  await eventually(() => gw.logs.some((l) => l['requestId'] === 'gone-1'), 'the access line');
  const lines = gw.logs.filter((l) => l['requestId'] === 'gone-1');
  assert.deepEqual(lines.map((l) => l['msg']), ['request']);
  assert.equal(lines[0]?.['completed'], false);
});
