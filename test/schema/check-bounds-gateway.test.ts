// The check's bounds as a client meets them, through the real gateway: a
// schema a client sent and an answer an upstream wrote that used to stall the
// gateway's thread or overflow its stack now get exact answers (the request
// accepted and forwarded, then 502 upstream_schema_mismatch naming the place).
// The work itself is pinned by step counts in check-bounds.test.ts.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';

let up: FakeUpstream;
let gw: TestGateway;
let content = '';

before(async () => {
  up = await startFakeUpstream(() => {});
  gw = await startGateway({
    configValue: {
      providers: { up: { type: 'openai', baseUrl: up.baseUrl } },
      aliases: { 'service-s': { requestFields: ['json_schema'], targets: [{ provider: 'up', model: 'm' }] } },
    },
  });
});
after(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
  up.handle = (_r, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
  };
});

function object(properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...extra };
}

function ask(schema: unknown): Promise<{ status: number; json(): unknown }> {
  return postChat(gw, { model: 'service-s', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'n', strict: true, schema } } });
}

function mismatch(message: string): unknown {
  return { error: { message: `The upstream's answer does not match the response_format json_schema: ${message}`, type: 'upstream_error', param: null, code: 'upstream_schema_mismatch' } };
}

test('a chain of 2,000 definitions through properties is accepted and its answer checked (no 500)', async () => {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < 2000; i++) defs[`d${i}`] = i === 1999 ? { type: 'string' } : object({ x: { $ref: `#/$defs/d${i + 1}` } });
  content = '{"x":1}';
  const res = await ask(object({ x: { $ref: '#/$defs/d0' } }, { $defs: defs }));
  assert.equal(res.status, 502);
  assert.deepStrictEqual(res.json(), mismatch('$.x: expected object, got integer 1'));
  assert.equal(up.requests.length, 1);
});

test('an answer against "^a*a*a*a*a*a*a*a*a*a*a*a*$" (241 s with backtracking) is matched in linear time', async () => {
  content = JSON.stringify({ s: `${'a'.repeat(60)}!` });
  const res = await ask(object({ s: { type: 'string', pattern: '^a*a*a*a*a*a*a*a*a*a*a*a*$' } }));
  assert.equal(res.status, 502);
  assert.deepStrictEqual(res.json(), mismatch(`$.s: string "${'a'.repeat(60)}!" does not match the pattern "^a*a*a*a*a*a*a*a*a*a*a*a*$"`));
});

test('an answer off 25 definitions each anyOf [next, next] (3.1 s when every path was tried) is reported at once', async () => {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < 25; i++) defs[`a${i}`] = i === 24 ? { type: 'string' } : { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  content = '{"x":1}';
  const res = await ask(object({ x: { $ref: '#/$defs/a0' } }, { $defs: defs }));
  assert.equal(res.status, 502);
  assert.deepStrictEqual(res.json(), mismatch('$.x: integer 1 matches none of the 2 "anyOf" schemas'));
});

test('a pattern the linear-time matcher does not run is refused at request time, naming it and where', async () => {
  const res = await ask(object({ s: { type: 'string', pattern: '^(\\w+)-\\1$' } }));
  assert.equal(res.status, 400);
  assert.deepStrictEqual(res.json(), {
    error: {
      message: 'Invalid schema for response_format \'n\': $.properties.s.pattern: "pattern" uses a backreference at character 7, which the gateway\'s linear-time matcher does not support.',
      type: 'invalid_request_error',
      param: 'response_format.json_schema.schema',
      code: 'unsupported_schema',
    },
  });
  assert.equal(up.requests.length, 0);
});
