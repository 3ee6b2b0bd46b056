// The demo's embedder: the pure vectors of ./demo-embeddings.test.ts made a
// slice at a time, so a large batch leaves the event loop to others, and
// stopped by an abort between slices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDemoEmbedder } from '../../src/providers/demo.ts';
import { DEMO_EMBEDDING_WIDTH, demoEmbedding, demoPromptTokens } from '../../src/providers/demo-embeddings.ts';

test('every input its vector, in order, at the asked width or the default; prompt tokens summed', async () => {
  const embedder = createDemoEmbedder();
  const inputs = ['alpha', [1, 2, 3], 'é'];
  const plain = await embedder.embed(inputs, null, new AbortController().signal);
  assert.deepEqual(plain.vectors, inputs.map((i) => demoEmbedding(i, DEMO_EMBEDDING_WIDTH)));
  assert.equal(plain.promptTokens, inputs.reduce((sum: number, i) => sum + demoPromptTokens(i), 0));
  const narrow = await embedder.embed(inputs, 8, new AbortController().signal);
  assert.deepEqual(narrow.vectors, inputs.map((i) => demoEmbedding(i, 8)));
});

test('a batch of 200 gives the event loop a turn between slices of 64', async () => {
  const embedder = createDemoEmbedder();
  let turns = 0;
  const inputs = Array.from({ length: 200 }, (_, i) => `t${i}`);
  const tick = (): void => {
    turns++;
    if (turns < 10) setImmediate(tick);
  };
  setImmediate(tick);
  const { vectors } = await embedder.embed(inputs, 4, new AbortController().signal);
  assert.equal(vectors.length, 200);
  assert.ok(turns >= 3, `${turns} turns of the event loop ran during the batch`);
});

test('an abort stops it at the next slice, with the abort reason', async () => {
  const embedder = createDemoEmbedder();
  const controller = new AbortController();
  const reason = new Error('client gone');
  const pending = embedder.embed(Array.from({ length: 200 }, (_, i) => `t${i}`), 4, controller.signal);
  controller.abort(reason);
  await assert.rejects(pending, (error) => error === reason);
  const already = embedder.embed(['x'], 4, controller.signal);
  await assert.rejects(already, (error) => error === reason);
});

test('its widest vector is 4096 values', () => {
  assert.equal(createDemoEmbedder().maxDimensions, 4096);
});
