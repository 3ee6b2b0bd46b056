// A chat stream whose upstream gives its usage and then ends before any choice
// was relayed failed before answering (phase Sent): charged nothing, as
// docs/keys.md says, the usage it carried notwithstanding. Only the billed
// parts of an embeddings request are charged at that phase.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';
import { eventually } from '../support/eventually.ts';

let upstream: FakeUpstream;
let gw: TestGateway;
before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const usage = { prompt_tokens: 700, completion_tokens: 300, total_tokens: 1000 };
    res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'upstream-model-1', choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

test('a chat stream that failed before its first event is charged nothing (phase Sent)', async () => {
  const res = await postChat(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': 'chat-sent-usage' });
  assert.equal(res.status, 502);
  const find = (): Record<string, unknown> | undefined => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === 'chat-sent-usage');
  await eventually(() => find() !== undefined, 'the access line');
  const line = find() as Record<string, unknown>;
  assert.equal(line['charge'], 'none');
  assert.equal(line['chargedTokens'], 0);
});
