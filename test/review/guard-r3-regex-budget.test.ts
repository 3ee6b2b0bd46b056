// Reviewer R3 reproduction: an operator regex the config accepts (linear-time
// features only) runs past its step budget on a few KB of ordinary text, so an
// ordinary request is refused 500 guard_failed. Leftmost-longest search reads
// ahead to the end of the text for each match, then restarts after the match:
// quadratic in the number of matches.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';

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
