// Every admin answer carries the security headers that
// docs/admin-api.md promises, the ones no route handler makes included:
// unknown paths, wrong methods, HEAD, a handler's 500, the dashboard's files,
// a foreign Host, and the answers node and the shell write before routing.
// Each answer is read off a raw socket and its whole header set compared.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createAdminServer, DASHBOARD_CSP, type AdminServer } from '../../src/admin/admin-server.ts';
import { DEFAULT_LIMITS } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { RouteHandler } from '../../src/http/request-context.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell } from '../../src/http/server.ts';
import { sendJson } from '../../src/http/respond.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend, type FileBackend } from '../../src/state/file-backend.ts';
import { recordingAuditTrail } from './recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';

/** The set docs/admin-api.md promises on every answer, written out rather than imported. */
const SECURITY = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};
const INDEX_HTML = '<!doctype html><title>Portcullis</title>';
const APP_JS = 'export {};\n';
const APP_CSS = 'body{}\n';

let dir: string;
let state: FileBackend;
let admin: AdminServer;
let port: number;
const logs: Record<string, unknown>[] = [];

before(async () => {
  dir = tempDir('admin-headers');
  const dashboardDir = path.join(dir, 'dashboard');
  mkdirSync(dashboardDir);
  writeFileSync(path.join(dashboardDir, 'index.html'), INDEX_HTML);
  writeFileSync(path.join(dashboardDir, 'app.js'), APP_JS);
  writeFileSync(path.join(dashboardDir, 'app.css'), APP_CSS);
  const config = parseConfig({ dataDir: path.join(dir, 'data'), providers: { demo: { type: 'demo' } }, aliases: { a: { provider: 'demo' } } }, null, dir);
  state = openFileBackend(config.dataDir, { watch: false });
  admin = createAdminServer({
    view: () => {
      throw new Error('unused');
    },
    state,
    audit: recordingAuditTrail(),
    clock: Date.now,
    dataDir: config.dataDir,
    limits: config.limits,
    logger: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    bootstrap: null,
    session: { ttlMs: 3_600_000, idleMs: 600_000, secureCookies: false },
    dashboardDir,
    extraRoutes: [
      ['GET', '/healthz', async (ctx) => sendJson(ctx.res, 200, { status: 'ok' })],
      ['GET', '/boom', async () => {
        throw new Error('a handler bug');
      }],
    ],
  });
  await new Promise<void>((resolve) => admin.server.listen(0, '127.0.0.1', resolve));
  port = (admin.server.address() as AddressInfo).port;
});

after(async () => {
  admin.server.closeAllConnections();
  await new Promise<void>((resolve) => admin.server.close(() => resolve()));
  await state.close();
});

interface RawAnswer {
  statusLine: string;
  /** Lower-cased names; `date` and the random request id replaced by placeholders. */
  headers: Record<string, string>;
  body: string;
}

/** Sends `text` on a fresh connection and reads the answer until the server closes it. */
function exchange(text: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    const parts: Buffer[] = [];
    socket.on('data', (c: Buffer) => parts.push(c));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('close', () => {
      const raw = Buffer.concat(parts).toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      assert.notEqual(end, -1, `an answer: ${JSON.stringify(raw)}`);
      const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).toLowerCase();
        assert.equal(headers[name], undefined, `${name} is sent once`);
        headers[name] = line.slice(colon + 1).trim();
      }
      if (headers['date'] !== undefined) headers['date'] = '<date>';
      if (headers['x-request-id'] !== undefined) headers['x-request-id'] = '<id>';
      resolve({ statusLine, headers, body: raw.slice(end + 4) });
    });
  });
}

function send(method: string, target: string, extra: string[] = [], host: string | null = '127.0.0.1'): Promise<RawAnswer> {
  const lines = [`${method} ${target} HTTP/1.1`, ...(host === null ? [] : [`Host: ${host}`]), 'Connection: close', ...extra];
  return exchange(`${lines.join('\r\n')}\r\n\r\n`);
}

/** The headers of an envelope error answered by the shell (Content-Length of `body`). */
function errorHeaders(body: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...SECURITY,
    'x-request-id': '<id>',
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    date: '<date>',
    connection: 'close',
    ...extra,
  };
}

/** The raw answers the shell writes itself have no Date. */
function withoutDate(headers: Record<string, string>): Record<string, string> {
  const { date: _date, ...rest } = headers;
  return rest;
}

function envelope(message: string, type: string, code: string | null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

test('an unknown path is 404 with the security headers', async () => {
  const res = await send('GET', '/nope');
  const body = envelope('Unknown request URL: GET /nope.', 'invalid_request_error', 'unknown_url');
  assert.equal(res.statusLine, 'HTTP/1.1 404 Not Found');
  assert.deepEqual(res.headers, errorHeaders(body));
  assert.equal(res.body, body);
  const long = await send('GET', `/${'x'.repeat(300)}`);
  assert.equal(long.body, envelope(`Unknown request URL: GET /${'x'.repeat(199)}....`, 'invalid_request_error', 'unknown_url'));
  assert.deepEqual(long.headers, errorHeaders(long.body));
});

test('a wrong method is 405 with Allow and the security headers', async () => {
  for (const [method, target, allow] of [['DELETE', '/api/session', 'GET, HEAD'], ['PUT', '/', 'GET, HEAD'], ['GET', '/api/login', 'POST'], ['POST', '/assets/app.js', 'GET, HEAD']] as const) {
    const res = await send(method, target, ['Content-Length: 0']);
    const body = envelope(`Method ${method} is not allowed on ${target}; allowed: ${allow}.`, 'invalid_request_error', 'method_not_allowed');
    assert.equal(res.statusLine, 'HTTP/1.1 405 Method Not Allowed', `${method} ${target}`);
    assert.deepEqual(res.headers, errorHeaders(body, { allow }), `${method} ${target}`);
    assert.equal(res.body, body);
  }
});

test('HEAD: the page, an unknown path and a refused API route all carry the security headers', async () => {
  const page = await send('HEAD', '/');
  assert.equal(page.statusLine, 'HTTP/1.1 200 OK');
  assert.deepEqual(page.headers, {
    ...SECURITY,
    'x-request-id': '<id>',
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(INDEX_HTML.length),
    'content-security-policy': DASHBOARD_CSP,
    date: '<date>',
    connection: 'close',
  });
  assert.equal(page.body, '');
  const missing = await send('HEAD', '/nope');
  assert.equal(missing.statusLine, 'HTTP/1.1 404 Not Found');
  assert.deepEqual(missing.headers, errorHeaders(envelope('Unknown request URL: HEAD /nope.', 'invalid_request_error', 'unknown_url')));
  assert.equal(missing.body, '');
  const keys = await send('HEAD', '/api/keys');
  assert.equal(keys.statusLine, 'HTTP/1.1 401 Unauthorized');
  assert.equal(keys.headers['x-frame-options'], 'DENY');
  assert.deepEqual(Object.entries(SECURITY).filter(([name, value]) => keys.headers[name] !== value), []);
});

test('an error thrown in a handler is the generic 500 with the security headers', async () => {
  const res = await send('GET', '/boom');
  const body = envelope('The server had an error while processing your request.', 'server_error', 'internal_error');
  assert.equal(res.statusLine, 'HTTP/1.1 500 Internal Server Error');
  assert.deepEqual(res.headers, errorHeaders(body));
  assert.equal(res.body, body);
  assert.equal(logs.some((l) => l['msg'] === 'unexpected error' && l['error'] === 'Error'), true);
});

test('the dashboard page and its files carry the security headers and the CSP (no-store, as promised)', async () => {
  for (const [target, type, content] of [
    ['/', 'text/html; charset=utf-8', INDEX_HTML],
    ['/assets/app.js', 'text/javascript; charset=utf-8', APP_JS],
    ['/assets/app.css', 'text/css; charset=utf-8', APP_CSS],
  ] as const) {
    const res = await send('GET', target);
    assert.equal(res.statusLine, 'HTTP/1.1 200 OK', target);
    assert.deepEqual(res.headers, {
      ...SECURITY,
      'x-request-id': '<id>',
      'content-type': type,
      'content-length': String(content.length),
      'content-security-policy': DASHBOARD_CSP,
      date: '<date>',
      connection: 'close',
    }, target);
    assert.equal(res.body, content);
  }
  const missing = await send('GET', '/assets/missing.js');
  const body = envelope('No dashboard asset missing.js.', 'not_found_error', 'unknown_url');
  assert.deepEqual(missing, { statusLine: 'HTTP/1.1 404 Not Found', headers: errorHeaders(body), body });
});

test('a foreign Host (DNS rebinding) is refused on every path, unknown ones included, with the security headers', async () => {
  const body = envelope('This admin listener does not answer for that host name; add it to admin.allowedHosts if it is yours.', 'permission_error', 'host_not_allowed');
  for (const [method, target] of [['GET', '/'], ['GET', '/healthz'], ['GET', '/nope'], ['DELETE', '/api/session'], ['GET', '/boom']] as const) {
    const res = await send(method, target, ['Content-Length: 0'], 'evil.example:8081');
    assert.equal(res.statusLine, 'HTTP/1.1 403 Forbidden', `${method} ${target}`);
    assert.deepEqual(res.headers, errorHeaders(body), `${method} ${target}`);
    assert.equal(res.body, body);
  }
});

test('answers made before routing carry the security headers: no Host, an unmet Expect, malformed HTTP, oversized headers', async () => {
  // The shell answers these two in the error envelope (node would answer them itself, bare).
  const noHost = await send('GET', '/', [], null);
  assert.equal(noHost.statusLine, 'HTTP/1.1 400 Bad Request');
  assert.deepEqual(Object.entries(SECURITY).filter(([name, value]) => noHost.headers[name] !== value), []);
  assert.equal(noHost.headers['content-type'], 'application/json');
  const expect = await send('GET', '/', ['Expect: something-else']);
  assert.equal(expect.statusLine, 'HTTP/1.1 417 Expectation Failed');
  assert.deepEqual(Object.entries(SECURITY).filter(([name, value]) => expect.headers[name] !== value), []);

  // The shell writes these raw (node's parser refused the request).
  const malformed = await exchange('NOT HTTP AT ALL\r\n\r\n');
  const malformedBody = envelope('The request is not valid HTTP.', 'invalid_request_error', null);
  assert.equal(malformed.statusLine, 'HTTP/1.1 400 Bad Request');
  assert.deepEqual(malformed.headers, withoutDate(errorHeaders(malformedBody)));
  assert.equal(malformed.body, malformedBody);

  const oversized = await send('GET', '/', [`X-Big: ${'a'.repeat(20 * 1024)}`]);
  const oversizedBody = envelope('Request headers exceed the limit of 16384 bytes.', 'invalid_request_error', null);
  assert.equal(oversized.statusLine, 'HTTP/1.1 431 Request Header Fields Too Large');
  assert.deepEqual(oversized.headers, withoutDate(errorHeaders(oversizedBody)));
  assert.equal(oversized.body, oversizedBody);
});

test('a listener\'s headers are checked when the shell is made: a CR/LF or a bad name is refused', () => {
  const shellWith = (headers: Record<string, string>) => () =>
    createHttpShell({ router: createRouter<RouteHandler>(), limits: DEFAULT_LIMITS, logger: createLogger({ write: () => {} }), responseHeaders: headers });
  assert.throws(shellWith({ 'x-a': 'one\r\nx-injected: two' }), { code: 'ERR_INVALID_CHAR' });
  assert.throws(shellWith({ 'bad name': 'v' }), { code: 'ERR_INVALID_HTTP_TOKEN' });
  assert.doesNotThrow(shellWith({ 'x-a': 'one' }));
});

test("a request a host's server passes to shell.handle gets the listener's headers on the host's plain response", async () => {
  const router = createRouter<RouteHandler>();
  router.add('GET', '/x', async (ctx) => sendJson(ctx.res, 200, { ok: true }));
  const shell = createHttpShell({ router, limits: DEFAULT_LIMITS, logger: createLogger({ write: () => {} }), responseHeaders: { 'x-a': 'one' } });
  const { createServer } = await import('node:http');
  const host = createServer((req, res) => shell.handle(req, res, req.url ?? '/'));
  host.listen(0, '127.0.0.1');
  await new Promise((resolve) => host.once('listening', resolve));
  try {
    const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const routed = await fetch(`${base}/x`);
    assert.equal(routed.status, 200);
    assert.equal(routed.headers.get('x-a'), 'one');
    const unknown = await fetch(`${base}/nope`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('x-a'), 'one');
  } finally {
    host.close();
  }
});
