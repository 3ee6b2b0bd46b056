// R2: the mixed-models warning reaches the log at start (the change tests only the pure function). Arguable part: a demo target named
// like the real model makes vectors of its own space (hash-seeded), yet the alias is not warned of: only model names are compared.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startEmbeddingsRig } from '../gateway/embeddings-fixtures.ts';

test('an embeddings alias of two models: one warning at start naming it', async () => {
  const rig = await startEmbeddingsRig({
    aliases: {
      mixed: { kind: 'embeddings', targets: [{ provider: 'fake', model: 'e3-small' }, { provider: 'fake', model: 'bge-small', priority: 1 }] },
      sameNameOtherProvider: { kind: 'embeddings', targets: [{ provider: 'fake', model: 'e3-small' }, { provider: 'demo', model: 'e3-small', priority: 1 }] },
    },
  });
  try {
    const warned = rig.gw.logs.filter((l) => typeof l['msg'] === 'string' && (l['msg'] as string).includes('different models')).map((l) => `${String(l['alias'])}:${String(l['models'])}`);
    console.log(JSON.stringify(warned));
    assert.deepEqual(warned, ['mixed:e3-small,bge-small', 'sameNameOtherProvider:e3-small(fake),e3-small(demo)']);
  } finally {
    await rig.close();
  }
});
