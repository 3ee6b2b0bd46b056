// The egress guard through the gateway: a key's request carrying an AWS key,
// a card number and a git SHA under "mask secrets, block cards" is refused for
// the card; without the card it reaches the upstream with the key masked and
// the SHA untouched; e-mail addresses are only logged. On every door (chat,
// Messages, Responses, count_tokens, embeddings), with a key's own stricter
// policy, and no sink (access line, logs, metrics, error bodies) ever holds a
// planted value.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import { eventually } from '../support/eventually.ts';
import { githubTokenFor } from '../guard/guard-fixtures.ts';
import { postChat, request, startFakeUpstream, startGateway, type FakeUpstream, type RawResponse, type TestGateway } from './harness.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const CARD = '4111111111111111';
const SHA = '9fceb02d0ae598e95dc970b74767f19372d61af8';
const EMAIL = 'alice.jones@example.org';
const GITHUB = githubTokenFor('ghp_', 'Zx81kQ2mV7nR4tW9yB3cD6fH0jL5pS');
const PLANTED = [AWS_KEY, CARD, EMAIL, GITHUB];

let upstream: FakeUpstream;
let gw: TestGateway;
const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
const bodies: string[] = [];

before(async () => {
  upstream = await startFakeUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url.endsWith('/embeddings')) {
      res.end(JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], { width: 2 })));
      return;
    }
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
  gw = await startGateway({
    metrics,
    configValue: {
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 } } },
      aliases: {
        'service-fake': { provider: 'fake', model: 'upstream-model-1' },
        'lenient': { provider: 'fake', model: 'upstream-model-1', guard: { detectors: { card_number: 'log' } } },
        'text-embed': { kind: 'embeddings', provider: 'fake', model: 'upstream-embed' },
      },
      guard: { detectors: { secrets: 'mask', card_number: 'block', email: 'log' } },
    },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

async function chat(content: string, headers: Record<string, string> = {}, model = 'service-fake'): Promise<RawResponse> {
  const res = await postChat(gw, { model, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content }] }, headers);
  bodies.push(res.text);
  return res;
}

async function lineOf(requestId: string): Promise<Record<string, unknown>> {
  const find = (): Record<string, unknown> | undefined => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

describe('mask secrets, block cards, log e-mail', () => {
  test('an AWS key, a card and a git SHA: refused for the card, naming the detector and the path, nothing sent', async () => {
    upstream.requests.length = 0;
    const res = await chat(`deploy with ${AWS_KEY} at ${SHA}, bill ${CARD}`, { 'x-request-id': 'guard-block' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json(), {
      error: {
        message: "The request was refused by the gateway's egress guard: card_number found in messages[1].content. Remove it from the request, or ask the gateway's operator about the guard's policy for this key and model.",
        type: 'invalid_request_error',
        param: 'messages[1].content',
        code: 'guard_blocked',
      },
    });
    assert.equal(upstream.requests.length, 0);
    const line = await lineOf('guard-block');
    assert.equal(line['guard'], 'aws_access_key:messages[1].content:mask,card_number:messages[1].content:block');
  });

  test('without the card: the AWS key masked (the same value, the same placeholder), the SHA untouched, the e-mail logged', async () => {
    upstream.requests.length = 0;
    const res = await chat(`deploy with ${AWS_KEY} at ${SHA}; again ${AWS_KEY}; tell ${EMAIL}; token ${GITHUB}`, { 'x-request-id': 'guard-mask' });
    assert.equal(res.status, 200);
    const sent = upstream.requests[0]?.body as { messages: Array<{ content: string }> };
    assert.equal(sent.messages[1]?.content, `deploy with [AWS_ACCESS_KEY_1] at ${SHA}; again [AWS_ACCESS_KEY_1]; tell ${EMAIL}; token [GITHUB_TOKEN_1]`);
    assert.equal(sent.messages[0]?.content, 'be brief');
    const line = await lineOf('guard-mask');
    assert.equal(line['guard'], 'aws_access_key:messages[1].content:mask,aws_access_key:messages[1].content:mask,email:messages[1].content:log,github_token:messages[1].content:mask');
  });

  test("an alias's own policy: a card only logged there", async () => {
    upstream.requests.length = 0;
    const res = await chat(`bill ${CARD}`, {}, 'lenient');
    assert.equal(res.status, 200);
    assert.equal((upstream.requests[0]?.body as { messages: Array<{ content: string }> }).messages[1]?.content, `bill ${CARD}`);
  });

  test("a key's policy is counted only where stricter: e-mail blocked for it; a weaker card action is not", async () => {
    const strict = await gw.state.keys.create('guard-strict', { guard: { detectors: { email: 'block', card_number: 'log' } } });
    const auth = { authorization: `Bearer ${strict.key}` };
    const mail = await chat(`tell ${EMAIL}`, auth);
    assert.equal(mail.status, 400);
    assert.equal((mail.json() as { error: { code: string } }).error.code, 'guard_blocked');
    const card = await chat(`bill ${CARD}`, auth);
    assert.equal(card.status, 400);
    // Its own policy makes the lenient alias strict again for it.
    const lenient = await chat(`bill ${CARD}`, auth, 'lenient');
    assert.equal(lenient.status, 200);
  });
});

describe('every door', () => {
  test('embeddings inputs are masked before they leave', async () => {
    upstream.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', '/v1/embeddings', {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
      body: JSON.stringify({ model: 'text-embed', input: [`key ${AWS_KEY}`, 'plain'] }),
    });
    bodies.push(res.text);
    assert.equal(res.status, 200);
    assert.deepEqual((upstream.requests[0]?.body as { input: string[] }).input, ['key [AWS_ACCESS_KEY_1]', 'plain']);
  });

  test('the Messages door refuses in its own envelope, and masks', async () => {
    upstream.requests.length = 0;
    const headers = { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' };
    const blocked = await request(gw.baseUrl, 'POST', '/v1/messages', { headers, body: JSON.stringify({ model: 'service-fake', max_tokens: 10, messages: [{ role: 'user', content: `bill ${CARD}` }] }) });
    bodies.push(blocked.text);
    assert.equal(blocked.status, 400);
    assert.equal((blocked.json() as { type: string; error: { type: string } }).error.type, 'invalid_request_error');
    assert.equal(upstream.requests.length, 0);
    const masked = await request(gw.baseUrl, 'POST', '/v1/messages', { headers, body: JSON.stringify({ model: 'service-fake', max_tokens: 10, system: `use ${AWS_KEY}`, messages: [{ role: 'user', content: 'go' }] }) });
    bodies.push(masked.text);
    assert.equal(masked.status, 200);
    assert.doesNotMatch(JSON.stringify(upstream.requests[0]?.body), new RegExp(AWS_KEY));
    assert.match(JSON.stringify(upstream.requests[0]?.body), /\[AWS_ACCESS_KEY_1\]/);
  });

  test('the Responses door: a tool result carrying a secret is masked', async () => {
    upstream.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', '/v1/responses', {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
      body: JSON.stringify({
        model: 'service-fake',
        store: false,
        input: [
          { type: 'function_call', call_id: 'c1', name: 'read_env', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: `AWS_ACCESS_KEY_ID=${AWS_KEY}` },
        ],
      }),
    });
    bodies.push(res.text);
    assert.equal(res.status, 200, res.text);
    const sent = JSON.stringify(upstream.requests[0]?.body);
    assert.doesNotMatch(sent, new RegExp(AWS_KEY));
    assert.match(sent, /\[AWS_ACCESS_KEY_1\]/);
  });
});

test('no sink holds a planted value: access lines, every log line, metrics, error bodies', async () => {
  const sinks = [JSON.stringify(gw.logs), metrics.expose(), bodies.join('\n')];
  for (const value of PLANTED) for (const sink of sinks) assert.equal(sink.includes(value), false, `a sink holds ${value.slice(0, 6)}...`);
  assert.match(metrics.expose(), /portcullis_guard_findings_total\{detector="card_number",action="block"\} \d+/);
});
