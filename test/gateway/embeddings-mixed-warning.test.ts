// An embeddings alias whose targets are different models (a demo target is a
// model of its own, whatever it is called) is warned of at start, by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startEmbeddingsRig } from './embeddings-fixtures.ts';

test('an embeddings alias of two models: one warning at start naming it', async () => {
  const rig = await startEmbeddingsRig({
    aliases: {
      mixed: { kind: 'embeddings', targets: [{ provider: 'fake', model: 'e3-small' }, { provider: 'fake', model: 'bge-small', priority: 1 }] },
      sameNameOtherProvider: { kind: 'embeddings', targets: [{ provider: 'fake', model: 'e3-small' }, { provider: 'demo', model: 'e3-small', priority: 1 }] },
    },
  });
  try {
    const warned = rig.gw.logs.filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).includes('different models')).map((l) => `${String(l['alias'])}:${String(l['models'])}`);
    assert.deepEqual(warned, ['mixed:e3-small,bge-small', 'sameNameOtherProvider:e3-small,e3-small (demo)']);
  } finally {
    await rig.close();
  }
});
