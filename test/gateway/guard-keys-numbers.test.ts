// What the guard looks at beyond string values: object keys (a tool's input)
// and long integers (a card sent as a JSON number); and a path that would name
// a secret key names it `{key}` instead.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { githubTokenFor } from '../guard/guard-fixtures.ts';
import { request, type FakeUpstream, type TestGateway } from './harness.ts';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const CARD = '4111111111111111';
const GITHUB = githubTokenFor('ghp_', 'Zx81kQ2mV7nR4tW9yB3cD6fH0jL5pS');

let upstream: FakeUpstream;
let gw: TestGateway;
let rig: GuardRig;

before(async () => {
  rig = await startGuardRig({ guard: { detectors: { secrets: 'mask', card_number: 'block' } } });
  ({ upstream, gw } = rig);
});
after(() => rig.close());

const messagesHeaders = (): Record<string, string> => ({ 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' });

function messagesWithToolInput(input: unknown): string {
  return JSON.stringify({
    model: 'service-fake',
    max_tokens: 10,
    tools: [{ name: 'pay', description: 'pay', input_schema: { type: 'object' } }],
    messages: [
      { role: 'user', content: 'pay it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'pay', input }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] },
    ],
  });
}

describe('values the guard never looks at reach the upstream', () => {
  test('a secret as an object key (tool_use input) is sent unmasked', async () => {
    upstream.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', '/v1/messages', { headers: messagesHeaders(), body: messagesWithToolInput({ [GITHUB]: 'x', [AWS_KEY]: 'y' }) });
    // expected: masked (or refused); seen: 200 and both tokens in the upstream body
    const sent = JSON.stringify(upstream.requests.map((r) => r.body));
    assert.equal(sent.includes(GITHUB) || sent.includes(AWS_KEY), false, `status ${res.status}; upstream got: ${sent}`);
  });

  test('a card number as a JSON number (tool_use input) is sent although cards are blocked', async () => {
    upstream.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', '/v1/messages', { headers: messagesHeaders(), body: messagesWithToolInput({ card: Number(CARD) }) });
    // expected: 400 guard_blocked, nothing sent; seen: 200 and the card in the upstream body
    assert.equal(res.status, 400, res.text);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('a secret in a JSON path leaks into the error and the access line', () => {
  test('a blocked card under a key that is itself a secret: the error names the path, with the secret in it', async () => {
    upstream.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', '/v1/messages', { headers: { ...messagesHeaders(), 'x-request-id': 'r3-path' }, body: messagesWithToolInput({ [AWS_KEY]: `bill ${CARD}` }) });
    assert.equal(res.status, 400, res.text);
    // expected: the AWS key (a detector's finding) never in the error body or logs; seen: in message and param
    assert.equal(JSON.stringify(gw.logs).includes(AWS_KEY), false, 'the logs hold the AWS key');
    assert.equal(res.text.includes(AWS_KEY), false, res.text);
  });
});

describe('a value refused before the guard runs', () => {
  test('a secret pasted as the model: not in the logs (the 404 echoes it to its own sender only)', async () => {
    upstream.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', '/v1/chat/completions', {
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-request-id': 'r3-model' },
      body: JSON.stringify({ model: GITHUB, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(upstream.requests.length, 0);
    assert.equal(JSON.stringify(gw.logs).includes(GITHUB), false, 'the logs hold the token');
    assert.equal(res.status, 404);
  });
});
