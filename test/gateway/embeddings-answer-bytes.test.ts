// An embeddings answer is read as bytes (Latin-1): a UTF-8 byte order mark
// before it is dropped as a UTF-8 reader drops it; and an answer past one
// call's bound is refused with a message that says what to change.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { fakeEmbeddingsAnswer } from '../support/fake-embeddings.ts';
import { postEmbeddings, startEmbeddingsRig, type EmbeddingsRig } from './embeddings-fixtures.ts';

let rig: EmbeddingsRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

test('an answer that starts with a UTF-8 BOM is read as the chat path reads one', async () => {
  rig = await startEmbeddingsRig();
  rig.answer = (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end('\uFEFF' + JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], {})));
  };
  const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: 'x' });
  assert.equal(res.status, 200);
});

test('past the per-call bound: the message says what bound (per call, per input) was crossed', async () => {
  rig = await startEmbeddingsRig({ alias: { maxInputsPerCall: 200 } });
  // 200 inputs: the bound is max(16 MiB, 200 x 128 KiB) = 26,214,400 bytes; the answer declares more.
  rig.answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(30_000_000) });
    res.write('{');
  };
  const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: Array.from({ length: 200 }, (_, i) => `t${i}`) });
  const message = (res.json() as { error: { message: string } }).error.message;
  assert.equal(res.status, 502);
  assert.equal(
    message,
    "The upstream's answer to one call of 200 inputs exceeds the gateway's limit of 26214400 bytes for it (128 KiB an input, or the provider's 16 MiB bound when more); lower the target's maxInputsPerCall, or ask the upstream for base64 (embeddingsEncoding).",
  );
});
