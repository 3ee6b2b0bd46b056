import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

// An Anthropic upstream reads a document given by URL on the request's behalf
// (here it reports 300,000 input tokens for it): the reservation covers the
// most it may read (100 pages of 3,000 tokens), so a key's budget holds.
let up: FakeUpstream;
let small: TestGateway;
let large: TestGateway;
let calls = 0;

const READ = 300_000;

before(async () => {
  up = await startFakeUpstream((_req, res) => {
    calls++;
    const body = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'summary' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: READ, output_tokens: 50 } });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  const options = (tokens: number) => ({
    configValue: {
      providers: { up: { type: 'anthropic', baseUrl: up.baseUrl, apiKeyEnv: 'K', retry: { maxAttempts: 1 } } },
      aliases: { claude: { provider: 'up', model: 'claude-x', maxOutputTokens: 100, price: { input: 3, output: 15 } } },
      auto: { default: 'claude' },
    },
    env: { K: 'sk-up' },
    keySettings: { limits: { tokenBudget: { tokens, period: 'day' as const } } },
  });
  small = await startGateway(options(100_000));
  large = await startGateway(options(400_000));
});
after(async () => {
  await small.close();
  await large.close();
  await up.close();
});

const BODY = JSON.stringify({
  model: 'claude',
  max_tokens: 100,
  messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/annual-report.pdf' } }, { type: 'text', text: 'Summarise.' }] }],
});

function post(gw: TestGateway) {
  return request(gw.baseUrl, 'POST', '/v1/messages', { headers: { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, body: BODY });
}

test('a 100,000-token budget: a document by URL is refused before it reaches the upstream, the bound named', async () => {
  const r = await post(small);
  assert.equal(r.status, 429);
  const body = JSON.parse(r.text) as { type: string; error: { type: string; message: string } };
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'rate_limit_error');
  // The prompt: 300,000 for the document, plus the bytes of the rest.
  const prompt = /a prompt of up to (\d+) tokens/.exec(body.error.message);
  assert.ok(prompt !== null, body.error.message);
  const tokens = Number(prompt[1]);
  assert.ok(tokens > READ && tokens < READ + 1000, String(tokens));
  assert.match(body.error.message, /more than the key's whole token budget of 100000 tokens per day, so it can never be admitted/);
  assert.equal(calls, 0);
});

test('a 400,000-token budget: the first such request is admitted, the second refused (the budget holds what was read)', async () => {
  const before = calls;
  const first = await post(large);
  assert.equal(first.status, 200, first.text);
  await large.flushUsage();
  const second = await post(large);
  assert.equal(second.status, 429, second.text);
  assert.equal(calls - before, 1);
});
