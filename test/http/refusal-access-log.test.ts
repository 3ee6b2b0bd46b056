// Every answer has its access-log line with its real status, the ones node's
// HTTP parser or node's own checks cause before any route included: headers
// that never finish (408), a body slower than requestTimeoutMs while a handler
// waits for it (408, on that request's own line, the handler stopped), bytes
// that are not HTTP (400), headers over maxHeaderBytes (431), an HTTP/1.1
// request without Host (400) and an unsupported Expect (417). A client that
// resets before any answer has no line: nothing was answered.
// Regression: Node's own 408 once showed as status: null.
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/config/config.ts';
import { readRequestJson } from '../../src/http/json-body.ts';
import { sendJson } from '../../src/http/respond.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell } from '../../src/http/server.ts';
import { HttpParseAbort, type RouteHandler } from '../../src/http/request-context.ts';
import type { AccessLine } from '../../src/log/access-line.ts';
import { createLogger } from '../../src/log/logger.ts';
import { CLOSE_GRACE_MS } from '../../src/http/client-errors.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const logs: Record<string, unknown>[] = [];
const lines: AccessLine[] = [];
const handlerEnds: unknown[] = [];
const router = createRouter<RouteHandler>();
router.add('GET', '/ok', async (ctx) => sendJson(ctx.res, 200, { ok: true }));
router.add('POST', '/echo', async (ctx) => {
  try {
    const body = await readRequestJson(ctx, { maxBytes: 1024 * 1024, limits: { maxDepth: 8, maxStringBytes: 1024 * 1024, maxMembers: 100 } });
    sendJson(ctx.res, 200, body);
  } catch (err) {
    handlerEnds.push(err);
    throw err;
  }
});
const shell = createHttpShell({
  router,
  limits: { ...DEFAULT_LIMITS, maxHeaderBytes: 2048, headersTimeoutMs: 1000, requestTimeoutMs: 1500 },
  logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
  onRequestDone: (line) => lines.push(line),
});
const { server } = shell;
let port = 0;
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** Sends `send`, keeps the connection open (never ends its side), resolves with what came back once the server closed it. */
function rawExchange(send: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(send));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (text += c));
    socket.on('end', () => socket.end());
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer after 10 s; got ${JSON.stringify(text)}`)));
  });
}

function requestIdOf(answer: string): string {
  const id = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(answer)?.[1];
  assert.ok(id !== undefined, `no x-request-id in ${JSON.stringify(answer)}`);
  return id;
}

/** The access line (logged and reported) for `requestId`, once it is out. */
async function lineFor(requestId: string): Promise<Record<string, unknown>> {
  const logged = (): Record<string, unknown>[] => logs.filter((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => logged().length > 0, `the access line of ${requestId}`);
  assert.equal(logged().length, 1, `one line per answer for ${requestId}`);
  assert.deepEqual(
    lines.filter((l) => l.requestId === requestId),
    [Object.fromEntries(Object.entries(logged()[0] ?? {}).filter(([k]) => k !== 'time' && k !== 'level' && k !== 'msg'))],
  );
  return logged()[0] ?? {};
}

/** The fields a line for bytes that never became a request has, besides its id. */
function unparsedLine(requestId: string, status: number, error: string): Record<string, unknown> {
  return {
    level: 'info',
    msg: 'request',
    requestId,
    method: null,
    path: null,
    client: '127.0.0.1',
    status,
    keyId: null,
    alias: null,
    target: null,
    route: null,
    stream: null,
    promptTokens: null,
    completionTokens: null,
    charge: null,
    chargedTokens: null,
    costNanos: null,
    cost: null,
    ttfbMs: null,
    totalMs: null,
    completed: true,
    error,
  };
}

function withoutTime(line: Record<string, unknown>): Record<string, unknown> {
  const { time: _time, ...rest } = line;
  return rest;
}

const TIMEOUT_BODY = '{"error":{"message":"The request was not received in time.","type":"invalid_request_error","param":null,"code":null}}';

test('headers that never finish: 408 in the envelope, and an access line with status 408 and http_request_timeout', { timeout: 15_000 }, async () => {
  const answer = await rawExchange('GET /ok HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pcl_secret\r\nX-Slow: ');
  assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.ok(answer.endsWith(TIMEOUT_BODY), answer);
  const id = requestIdOf(answer);
  assert.deepEqual(withoutTime(await lineFor(id)), unparsedLine(id, 408, 'http_request_timeout'));
  assert.equal(JSON.stringify(logs).includes('pcl_secret'), false);
});

test('a body slower than requestTimeoutMs: the 408 is that request’s own line (its id, method, path), and the handler is stopped', { timeout: 15_000 }, async () => {
  const answer = await rawExchange('POST /echo HTTP/1.1\r\nHost: x\r\nx-request-id: slow-body-1\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n{"a":');
  assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.match(answer, /\r\nconnection: close\r\n/);
  assert.ok(answer.endsWith(TIMEOUT_BODY), answer);
  assert.equal(requestIdOf(answer), 'slow-body-1');
  const line = await lineFor('slow-body-1');
  assert.equal(line['method'], 'POST');
  assert.equal(line['path'], '/echo');
  assert.equal(line['status'], 408);
  assert.equal(line['error'], 'http_request_timeout');
  assert.equal(line['completed'], true);
  assert.equal(line['clientGone'], undefined);
  assert.equal(typeof line['ttfbMs'], 'number');
  assert.equal(handlerEnds.length, 1);
  assert.ok(handlerEnds[0] instanceof HttpParseAbort, String(handlerEnds[0]));
});

test('bytes that are not HTTP: 400 in the envelope and a 400 line', async () => {
  const answer = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
  assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.ok(answer.endsWith('{"error":{"message":"The request is not valid HTTP.","type":"invalid_request_error","param":null,"code":null}}'), answer);
  const id = requestIdOf(answer);
  assert.deepEqual(withoutTime(await lineFor(id)), unparsedLine(id, 400, 'http_malformed'));
});

test('headers over maxHeaderBytes: 431 in the envelope and a 431 line', async () => {
  const answer = await rawExchange(`GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`);
  assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  assert.ok(answer.endsWith('{"error":{"message":"Request headers exceed the limit of 2048 bytes.","type":"invalid_request_error","param":null,"code":null}}'), answer);
  const id = requestIdOf(answer);
  assert.deepEqual(withoutTime(await lineFor(id)), unparsedLine(id, 431, 'http_headers_too_large'));
});

test('an HTTP/1.1 request without Host: 400 in the envelope (not node’s bare 400), closed, with its line', async () => {
  const answer = await rawExchange('GET /ok HTTP/1.1\r\nx-request-id: no-host-1\r\n\r\n');
  assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(answer, /\r\nconnection: close\r\n/);
  assert.ok(answer.endsWith('{"error":{"message":"The request has no Host header, which HTTP/1.1 requires.","type":"invalid_request_error","param":null,"code":null}}'), answer);
  const line = await lineFor('no-host-1');
  assert.deepEqual([line['method'], line['path'], line['status'], line['error']], ['GET', '/ok', 400, 'http_malformed']);
  // HTTP/1.0 has no Host requirement.
  const old = await rawExchange('GET /ok HTTP/1.0\r\n\r\n');
  assert.match(old, /^HTTP\/1\.1 200 OK\r\n/);
});

test('an Expect other than 100-continue: 417 expectation_failed, closed, with its line', async () => {
  const answer = await rawExchange('POST /echo HTTP/1.1\r\nHost: x\r\nx-request-id: expect-1\r\nExpect: something-else\r\ncontent-length: 2\r\n\r\n{}');
  assert.match(answer, /^HTTP\/1\.1 417 Expectation Failed\r\n/);
  assert.match(answer, /\r\nconnection: close\r\n/);
  assert.ok(
    answer.endsWith('{"error":{"message":"The Expect header is not supported; only \\"Expect: 100-continue\\" is.","type":"invalid_request_error","param":null,"code":"expectation_failed"}}'),
    answer,
  );
  const line = await lineFor('expect-1');
  assert.deepEqual([line['method'], line['path'], line['status'], line['error']], ['POST', '/echo', 417, 'expectation_failed']);
});

test('a client that resets in the middle of its headers: no answer, no line', async () => {
  const before = logs.filter((l) => l['msg'] === 'request').length;
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('GET /ok HTTP/1.1\r\nHost: x\r\nX-Half: ');
      setTimeout(() => socket.resetAndDestroy(), 50);
    });
    socket.on('close', () => resolve());
    socket.on('error', () => {});
  });
  // A line would be written as the server's side of the connection closes, by a listener of the same close event.
  const served = await accepted;
  if (!served.closed) await new Promise((resolve) => served.once('close', resolve));
  assert.equal(logs.filter((l) => l['msg'] === 'request').length, before);
});

test('a client that sent bytes that are not HTTP and never closes its side is closed exactly 2 s after the answer, not held until the headers timeout', async () => {
  // Node's own sweep would close it once limits.headersTimeoutMs passed (10 s here); the grace is shorter.
  const scheduler = new ManualScheduler();
  const patient = createHttpShell({ router, limits: { ...DEFAULT_LIMITS, headersTimeoutMs: 10_000, requestTimeoutMs: 20_000 }, logger: createLogger({ write: () => {} }), scheduler });
  const accepted = new Promise<net.Socket>((resolve) => patient.server.once('connection', resolve));
  await new Promise<void>((r) => patient.server.listen(0, '127.0.0.1', r));
  // allowHalfOpen: the client's side stays open after the server's answer and FIN.
  const socket = net.connect({ port: (patient.server.address() as AddressInfo).port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write('GARBAGE\r\n\r\n'));
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (c: string) => (text += c));
  socket.on('error', () => {});
  try {
    const served = await accepted;
    await eventually(() => text.endsWith('}'), 'the 400');
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal(patient.openConnections, 1);
    await scheduler.advance(CLOSE_GRACE_MS - 1);
    assert.equal(served.destroyed, false);
    await scheduler.advance(1);
    assert.equal(served.destroyed, true);
    await eventually(() => patient.openConnections === 0, 'the connection to be counted closed');
  } finally {
    socket.destroy();
    await new Promise<void>((r) => patient.server.close(() => r()));
  }
});
