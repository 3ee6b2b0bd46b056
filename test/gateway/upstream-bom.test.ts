// An upstream answer that starts with UTF-8's byte order mark is read as its
// JSON on the chat path (as on the embeddings path: embeddings-answer-bytes.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let upstream: FakeUpstream;
let gw: TestGateway;
before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end('\uFEFF' + JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'upstream-model-1', choices: [{ index: 0, message: { role: 'assistant', content: 'Fine.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

test('chat: a BOM-prefixed JSON answer is a 200', async () => {
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 200);
});
