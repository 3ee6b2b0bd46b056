// The Messages door and count_tokens passed through to an Anthropic upstream,
// planted values in many places: none arrives unmasked.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { githubTokenFor } from '../guard/guard-fixtures.ts';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const GITHUB = githubTokenFor('ghp_', 'Zx81kQ2mV7nR4tW9yB3cD6fH0jL5pS');
let up: FakeUpstream;
let gw: TestGateway;

before(async () => {
  up = await startFakeUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url.includes('count_tokens')) return void res.end(JSON.stringify({ input_tokens: 7 }));
    res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } }));
  });
  gw = await startGateway({
    configValue: {
      providers: { claude: { type: 'anthropic', baseUrl: `${up.baseUrl}/v1`, apiKeyEnv: 'K', retry: { maxAttempts: 1 } } },
      aliases: { 'a-claude': { provider: 'claude', model: 'claude-up' } },
      guard: { detectors: { secrets: 'mask' } },
    },
    env: { K: 'sk-up' },
  });
});
after(async () => {
  await gw.close();
  await up.close();
});

const body = {
  model: 'a-claude',
  max_tokens: 16,
  system: [{ type: 'text', text: `sys ${AWS_KEY}` }],
  metadata: { user_id: `u ${GITHUB}` },
  messages: [
    { role: 'user', content: [{ type: 'text', text: `hi ${GITHUB}` }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { q: `x ${AWS_KEY}` } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: `r ${GITHUB}` }] }] },
  ],
  tools: [{ name: 'f', description: `tool ${AWS_KEY}`, input_schema: { type: 'object' } }],
};

for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
  test(`${path} to an Anthropic upstream: nothing planted arrives`, async () => {
    up.requests.length = 0;
    const res = await request(gw.baseUrl, 'POST', path, { headers: { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, body: JSON.stringify(path.endsWith('count_tokens') ? { ...body, max_tokens: undefined, metadata: undefined } : body) });
    assert.equal(res.status, 200, res.text);
    const sent = JSON.stringify(up.requests.map((r) => r.body));
    assert.equal(up.requests.length, 1);
    assert.equal(sent.includes(AWS_KEY) || sent.includes(GITHUB), false, sent);
    assert.match(sent, /\[GITHUB_TOKEN_1\]/);
  });
}
