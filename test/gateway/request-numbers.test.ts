// A JSON number that overflows a double (1e999) anywhere in
// a request is a 400 naming its path, and nothing goes upstream; it used to be
// forwarded as null from inside a tool's schema. And what a lone surrogate
// escape ("\ud800") becomes on its way upstream, byte for byte.
import assert from 'node:assert/strict';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { request, startGateway, type TestGateway } from './harness.ts';

/** What the fake upstream received, as bytes: the point is what is on the wire. */
const received: Buffer[] = [];
let upstream: http.Server;
let gw: TestGateway;

const COMPLETION = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
});

before(async () => {
  upstream = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(parts));
      res.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  gw = await startGateway({ upstreamBaseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` });
});

after(async () => {
  await gw.close();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

function post(body: string) {
  return request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
    body,
  });
}

const HEAD = '{"model":"service-fake","messages":[{"role":"user","content":"Hi"}]';
const TOO_LARGE = 'the number is out of range. A JSON number must be at most 1.7976931348623157e308 in magnitude.';

function outOfRange(param: string): unknown {
  return { error: { message: `Invalid value for '${param}': ${TOO_LARGE}`, type: 'invalid_request_error', param, code: 'invalid_value' } };
}

test('a number beyond a double is a 400 naming its path, wherever it is, and the upstream receives nothing', async () => {
  const cases: Array<[string, string]> = [
    [`${HEAD},"temperature":1e999}`, 'temperature'],
    [`${HEAD},"top_p":-1e999}`, 'top_p'],
    [`${HEAD},"max_tokens":1e400}`, 'max_tokens'],
    [
      `${HEAD},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"number","maximum":1e999}}}}}]}`,
      'tools[0].function.parameters.properties.x.maximum',
    ],
    [
      `${HEAD},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"enum":[1,2,-1.5e309]}}}}}]}`,
      'tools[0].function.parameters.properties.x.enum[2]',
    ],
    [`${HEAD},"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"number","minimum":-1e999}}}}`, 'response_format.json_schema.schema.minimum'],
    ['{"model":"service-fake","messages":[{"role":"assistant","content":"x","parsed":{"n":1e999}}]}', 'messages[0].parsed.n'],
    [
      '{"model":"service-fake","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","parsed_arguments":{"n":[1e999]}}}]}]}',
      'messages[0].tool_calls[0].function.parsed_arguments.n[0]',
    ],
  ];
  for (const [body, param] of cases) {
    const res = await post(body);
    assert.equal(res.status, 400, body);
    assert.deepEqual(res.json(), outOfRange(param), body);
  }
  assert.equal(received.length, 0, 'nothing reached the upstream');
});

test('the first fault in the body wins: an unknown field before the number is refused as unknown (extra)', async () => {
  const res = await post(`${HEAD},"extra":{"n":1e999}}`);
  assert.deepEqual(res.json(), {
    error: { message: 'Unrecognized request argument supplied: extra', type: 'invalid_request_error', param: 'extra', code: 'unknown_parameter' },
  });
  const after = await post(`${HEAD},"tools":[{"type":"function","function":{"name":"f","parameters":{"maximum":1e999}}}],"extra":{}}`);
  assert.deepEqual(after.json(), outOfRange('tools[0].function.parameters.maximum'));
  assert.equal(received.length, 0);
});

test('the largest double and underflow are forwarded as numbers, never as null', async () => {
  const before = received.length;
  const res = await post(
    `${HEAD},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"maximum":1.7976931348623157e308,"minimum":-1e-999}}}}}]}`,
  );
  assert.equal(res.status, 200, res.text);
  assert.equal(received.length, before + 1);
  const sent = (received.at(-1) as Buffer).toString('latin1');
  assert.ok(sent.includes('"properties":{"x":{"maximum":1.7976931348623157e+308,"minimum":0}}'), sent);
});

test('a lone surrogate escape is forwarded as the same six-byte escape, not as U+FFFD', async () => {
  const before = received.length;
  const res = await post('{"model":"service-fake","messages":[{"role":"user","content":"a\\ud800b\\udc00c\\udbff"}]}');
  assert.equal(res.status, 200, res.text);
  assert.equal(received.length, before + 1);
  const sent = received.at(-1) as Buffer;
  const content = '"content":"a\\ud800b\\udc00c\\udbff"';
  assert.ok(sent.includes(Buffer.from(content, 'latin1')), sent.toString('latin1'));
  // Only ASCII there: no UTF-8 form of a surrogate (ED A0 80) and no replacement character (EF BF BD).
  assert.equal(sent.includes(Buffer.from([0xed, 0xa0, 0x80])), false);
  assert.equal(sent.includes(Buffer.from([0xef, 0xbf, 0xbd])), false);
  // A paired escape is one character and goes as its UTF-8 bytes.
  const paired = await post('{"model":"service-fake","messages":[{"role":"user","content":"\\ud83d\\ude00"}]}');
  assert.equal(paired.status, 200);
  assert.ok((received.at(-1) as Buffer).includes(Buffer.from('"content":"😀"', 'utf8')));
  // Raw surrogate bytes in the body are not UTF-8: refused, nothing forwarded.
  const count = received.length;
  const raw = await request(gw.baseUrl, 'POST', '/v1/chat/completions', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
    body: Buffer.concat([Buffer.from('{"model":"service-fake","messages":[{"role":"user","content":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}]}')]),
  });
  assert.equal(raw.status, 400);
  assert.equal((raw.json() as { error: { code: string } }).error.code, 'invalid_json');
  assert.equal(received.length, count);
});
