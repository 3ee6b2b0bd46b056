import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/config/config.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { LINGER_MS, sendJson } from '../../src/http/respond.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell } from '../../src/http/server.ts';
import { type RouteHandler } from '../../src/http/request-context.ts';
import { createLogger, type Logger, type LogFields } from '../../src/log/logger.ts';
import { request } from '../gateway/harness.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const logs: Record<string, unknown>[] = [];
const router = createRouter<RouteHandler>();
router.add('GET', '/ok', async (ctx) => sendJson(ctx.res, 200, { ok: true, id: ctx.requestId }));
router.add('GET', '/boom', async () => {
  throw new Error('secret internals: /etc/passwd sk-live-123');
});
router.add('GET', '/boom-string', async () => {
  throw 'a thrown string';
});
router.add('GET', '/known', async () => {
  throw new InvalidRequestError('Bad thing.', 'messages[0].content', 'invalid_type');
});
router.add('POST', '/known', async () => {
  throw new InvalidRequestError('Bad thing.', null, 'invalid_value');
});
const { server } = createHttpShell({
  router,
  limits: { ...DEFAULT_LIMITS, maxHeaderBytes: 2048, headersTimeoutMs: 1000, requestTimeoutMs: 2000 },
  logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
});
let base = '';
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

test('unknown path: 404 in the envelope', async () => {
  const res = await request(base, 'GET', '/nope?x=1');
  assert.equal(res.status, 404);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), { error: { message: 'Unknown request URL: GET /nope.', type: 'invalid_request_error', param: null, code: 'unknown_url' } });
});

test('wrong method: 405 with Allow, in the envelope', async () => {
  const res = await request(base, 'DELETE', '/ok');
  assert.equal(res.status, 405);
  assert.equal(res.headers['allow'], 'GET, HEAD');
  assert.deepEqual(res.json(), {
    error: { message: 'Method DELETE is not allowed on /ok; allowed: GET, HEAD.', type: 'invalid_request_error', param: null, code: 'method_not_allowed' },
  });
});

test('an unexpected error is a generic 500 with no internals; the log names the error class only', async () => {
  for (const p of ['/boom', '/boom-string']) {
    const res = await request(base, 'GET', p, { headers: { 'x-request-id': 'trace-500' } });
    assert.equal(res.status, 500);
    assert.equal(res.headers['x-request-id'], 'trace-500');
    assert.deepEqual(res.json(), {
      error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'internal_error' },
    });
  }
  const entry = logs.find((l) => l['msg'] === 'unexpected error' && l['requestId'] === 'trace-500');
  assert.equal(entry?.['error'], 'Error');
  assert.equal(JSON.stringify(logs).includes('sk-live-123'), false);
});

test('the unexpected error line for a thrown non-Error has no stack field (a logger is never given undefined)', async () => {
  const fields: LogFields[] = [];
  const recording: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: (_msg, f) => void fields.push({ ...f }) };
  const shell = createHttpShell({ router, limits: DEFAULT_LIMITS, logger: recording });
  await new Promise<void>((r) => shell.server.listen(0, '127.0.0.1', r));
  try {
    const port = (shell.server.address() as AddressInfo).port;
    assert.equal((await request(`http://127.0.0.1:${port}`, 'GET', '/boom-string', { headers: { 'x-request-id': 'no-stack' } })).status, 500);
    assert.deepEqual(fields, [{ requestId: 'no-stack', error: 'string' }]);
  } finally {
    await new Promise<void>((r) => shell.server.close(() => r()));
  }
});

test('a known error renders itself with status, param and code', async () => {
  const res = await request(base, 'GET', '/known');
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), { error: { message: 'Bad thing.', type: 'invalid_request_error', param: 'messages[0].content', code: 'invalid_type' } });
});

test('an unread request body closes the connection after the answer', async () => {
  const res = await request(base, 'POST', '/known', { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  assert.equal(res.status, 400);
  assert.equal(res.headers['connection'], 'close');
});

test('a client that goes on sending the body it was refused, and never closes, gets the answer and is closed exactly LINGER_MS after it', async () => {
  const scheduler = new ManualScheduler();
  const shell = createHttpShell({ router, limits: DEFAULT_LIMITS, logger: createLogger({ write: () => {} }), scheduler });
  const accepted = new Promise<net.Socket>((resolve) => shell.server.once('connection', resolve));
  await new Promise<void>((r) => shell.server.listen(0, '127.0.0.1', r));
  // allowHalfOpen: the client's side stays open after the server's answer and FIN.
  const client = net.connect({ port: (shell.server.address() as AddressInfo).port, host: '127.0.0.1', allowHalfOpen: true });
  client.on('error', () => {});
  let text = '';
  client.setEncoding('latin1');
  client.on('data', (c: string) => (text += c));
  client.write('POST /known HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{"a":');
  try {
    const served = await accepted;
    await eventually(() => text.endsWith('}'), 'the 400');
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(text, /\r\nconnection: close\r\n/);
    // The rest of the body keeps coming and is read and dropped, never parsed as a request.
    client.write('x'.repeat(64 * 1024));
    await scheduler.advance(LINGER_MS - 1);
    assert.equal(served.destroyed, false);
    await scheduler.advance(1);
    assert.equal(served.destroyed, true);
  } finally {
    client.destroy();
    shell.server.closeAllConnections();
    await new Promise<void>((r) => shell.server.close(() => r()));
  }
});

test('x-request-id: a valid one is echoed; a missing one is made; a bad one is a 400 that never echoes it', async () => {
  const ok = await request(base, 'GET', '/ok', { headers: { 'x-request-id': 'abc.DEF_1-2' } });
  assert.equal(ok.headers['x-request-id'], 'abc.DEF_1-2');
  assert.deepEqual(ok.json(), { ok: true, id: 'abc.DEF_1-2' });
  const made = await request(base, 'GET', '/ok');
  assert.match(String(made.headers['x-request-id']), /^req_[0-9a-f]{32}$/);
  const missing = await request(base, 'GET', '/nope', { headers: { 'x-request-id': 'nf-1' } });
  assert.equal(missing.headers['x-request-id'], 'nf-1');
  for (const bad of ['has space', 'a'.repeat(129), 'semi;colon']) {
    const res = await request(base, 'GET', '/ok', { headers: { 'x-request-id': bad } });
    assert.equal(res.status, 400);
    assert.notEqual(res.headers['x-request-id'], bad);
    assert.match(String(res.headers['x-request-id']), /^req_/);
    assert.deepEqual(res.json(), {
      error: {
        message: 'The x-request-id header is invalid: use 1 to 128 characters from letters, digits, ".", "_" and "-".',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_id',
      },
    });
    assert.equal(res.text.includes(bad), false);
  }
});

test('oversize headers: 431 in the envelope', async () => {
  const res = await request(base, 'GET', '/ok', { headers: { 'x-big': 'a'.repeat(4096) } });
  assert.equal(res.status, 431);
  assert.deepEqual(res.json(), {
    error: { message: 'Request headers exceed the limit of 2048 bytes.', type: 'invalid_request_error', param: null, code: null },
  });
});

test('the access log line has id, method, path, status and no query string', async () => {
  await request(base, 'GET', '/ok?token=secret', { headers: { 'x-request-id': 'log-1' } });
  await eventually(() => logs.some((l) => l['msg'] === 'request' && l['requestId'] === 'log-1'), 'the access line');
  const entry = logs.find((l) => l['msg'] === 'request' && l['requestId'] === 'log-1');
  assert.equal(entry?.['method'], 'GET');
  assert.equal(entry?.['path'], '/ok');
  assert.equal(entry?.['status'], 200);
  assert.equal(JSON.stringify(logs).includes('secret'), false);
});

function rawExchange(send: string): Promise<{ text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(send));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    socket.on('close', () => resolve({ text }));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

test('malformed HTTP: 400 in the envelope, connection closed', async () => {
  const { text } = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
  assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(text, /connection: close/);
  assert.ok(text.endsWith('{"error":{"message":"The request is not valid HTTP.","type":"invalid_request_error","param":null,"code":null}}'));
});
