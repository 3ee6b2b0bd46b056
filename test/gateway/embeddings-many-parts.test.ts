// Many parts in flight at once: every part's exchange listens on the
// attempt's one abort signal, and Node warns of a leak past 10 listeners
// unless told how many to expect (embeddings.maxConcurrentCalls takes up to 64).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answering, postEmbeddings, startEmbeddingsRig, TRANSPORTS, type EmbeddingsRig } from './embeddings-fixtures.ts';

for (const transport of TRANSPORTS) {
  describe(`16 parts in flight on one signal (${transport})`, () => {
    let rig: EmbeddingsRig;
    before(async () => {
      rig = await startEmbeddingsRig({ transport, alias: { maxInputsPerCall: 1 }, embeddings: { maxConcurrentCalls: 16 } });
    });
    after(() => rig.close());

    test('no MaxListenersExceededWarning, and every part answered', async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
      process.on('warning', onWarning);
      const held: Array<() => void> = [];
      const answer = answering();
      rig.answer = (req, res) => {
        held.push(() => void answer(req, res));
        if (held.length === 16) for (const h of held) h();
      };
      const res = await postEmbeddings(rig.gw, { model: 'text-embed', input: Array.from({ length: 16 }, (_, i) => `t${i}`) });
      await new Promise((resolve) => setImmediate(resolve));
      process.off('warning', onWarning);
      assert.equal(res.status, 200);
      assert.deepEqual(warnings, []);
    });
  });
}
