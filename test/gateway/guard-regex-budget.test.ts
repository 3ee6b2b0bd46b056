// An operator regex the config accepts runs within its step budget on
// ordinary text with many matches: a match is made longest within a bounded
// window, so the search stays linear however many matches the text holds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let upstream: FakeUpstream;
let gw: TestGateway;

before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
  gw = await startGateway({
    configValue: {
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 } } },
      aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
      guard: { patterns: [{ name: 'ticket', regex: 'INC-[0-9]{6}|INC-[0-9]{6}.*URGENT', action: 'mask' }] },
    },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

test('one line listing 300 tickets (about 3 KB) is masked, not refused', async () => {
  const lines = `Closed this week: ${Array.from({ length: 300 }, (_, i) => `INC-${String(100000 + i)}`).join(', ')}`;
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: lines }] });
  // expected: 200 with [TICKET_n] placeholders; seen: 500 guard_failed
  assert.equal(res.status, 200, res.text);
});
