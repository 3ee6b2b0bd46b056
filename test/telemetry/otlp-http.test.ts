// One OTLP/HTTP POST (src/telemetry/otlp-http.ts) against real servers on
// loopback: what is sent, how the answer is read (status, Retry-After,
// partial success), and the failures that have no answer (timeout, refused).
import assert from 'node:assert/strict';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { createOtlpPost } from '../../src/telemetry/otlp-http.ts';
import { refusedPort } from '../upstream/refused-port.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
let answer: (res: http.ServerResponse) => void = (res) => res.end('{}');
const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
    answer(res);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('POSTs the JSON with the configured headers; a 2xx answer with partial success names the rejected spans', async () => {
  answer = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ partialSuccess: { rejectedSpans: '3', errorMessage: 'too old' } }));
  };
  const post = createOtlpPost(endpoint, { authorization: 'Bearer t', 'x-tenant': 'eu' });
  assert.deepEqual(await post('{"resourceSpans":[]}', 5000), { status: 200, retryAfterMs: undefined, rejectedSpans: 3, failure: undefined });
  const request = seen.at(-1);
  assert.equal(request?.method, 'POST');
  assert.equal(request?.url, '/v1/traces');
  assert.equal(request?.body, '{"resourceSpans":[]}');
  assert.equal(request?.headers['content-type'], 'application/json');
  assert.equal(request?.headers['content-length'], '20');
  assert.equal(request?.headers['authorization'], 'Bearer t');
  assert.equal(request?.headers['x-tenant'], 'eu');
});

test("a 503's Retry-After in seconds is read; a date or junk is not", async () => {
  const post = createOtlpPost(endpoint, {});
  for (const [header, expected] of [['7', 7000], ['Wed, 21 Oct 2015 07:28:00 GMT', undefined], ['-1', undefined]] as const) {
    answer = (res) => {
      res.writeHead(503, { 'retry-after': header });
      res.end('busy');
    };
    assert.deepEqual(await post('{}', 5000), { status: 503, retryAfterMs: expected, rejectedSpans: 0, failure: undefined });
  }
});

test('an answer that is not JSON, or not a partial success, rejects nothing', async () => {
  const post = createOtlpPost(endpoint, {});
  for (const body of ['', 'not json', 'null', '{"partialSuccess":{"rejectedSpans":-2}}', '{"partialSuccess":{}}']) {
    answer = (res) => res.end(body);
    assert.equal((await post('{}', 5000)).rejectedSpans, 0, body);
  }
});

test('no answer within the timeout: status 0, "timeout"', async () => {
  answer = () => {};
  const post = createOtlpPost(endpoint, {});
  assert.deepEqual(await post('{}', 100), { status: 0, retryAfterMs: undefined, rejectedSpans: 0, failure: 'timeout' });
});

test('nothing listening: status 0 with the errno code', async () => {
  const post = createOtlpPost(`http://127.0.0.1:${await refusedPort()}/v1/traces`, {});
  assert.deepEqual(await post('{}', 5000), { status: 0, retryAfterMs: undefined, rejectedSpans: 0, failure: 'ECONNREFUSED' });
});
