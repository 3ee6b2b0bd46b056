import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ENCODED_ID_PREFIX, fromAnthropicToolId, toAnthropicToolId } from '../../src/providers/anthropic-tool-ids.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { seededRandom } from '../upstream/seeded-random.ts';

const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;


describe('tool-call ids for Anthropic', () => {
  test('ids Anthropic takes are sent as they are', () => {
    for (const id of ['call_abc123', 'toolu_01D7FLrfh4GYq7yT1ULFeyMV', 'a', '-', '_', 'A-b_9']) {
      assert.equal(toAnthropicToolId(id), id);
      assert.equal(fromAnthropicToolId(id), id);
    }
  });

  test('other ids are encoded into the pattern and decode back', () => {
    const cases: [string, string][] = [
      ['functions.get_weather:0', 'pcl_id-functions_002eget_005fweather_003a0'],
      ['call 1', 'pcl_id-call_00201'],
      ['é', 'pcl_id-_00e9'],
      ['😀', 'pcl_id-_d83d_de00'],
      ['\ud800', 'pcl_id-_d800'],
      ['call_1\nfc_2', 'pcl_id-call_005f1_000afc_005f2'],
      // The validator refuses an empty id; the encoding still has an image for it.
      ['', 'pcl_id-'],
    ];
    for (const [id, encoded] of cases) {
      assert.equal(toAnthropicToolId(id), encoded, id);
      assert.match(encoded, ANTHROPIC_TOOL_ID);
      assert.equal(fromAnthropicToolId(encoded), id, encoded);
    }
  });

  test('a valid id that begins with the marker is encoded too, so no two ids meet', () => {
    const id = `${ENCODED_ID_PREFIX}abc`;
    assert.equal(toAnthropicToolId(id), 'pcl_id-pcl_005fid-abc');
    assert.equal(fromAnthropicToolId('pcl_id-pcl_005fid-abc'), id);
    assert.notEqual(toAnthropicToolId('abc'), toAnthropicToolId(id));
  });

  test('what was never encoded here decodes to itself', () => {
    for (const id of ['pcl_id-abc', 'pcl_id-_00', 'pcl_id-_002E', 'pcl_id-_zzzz', 'pcl_id-_0061', 'toolu_pcl_id-_002e']) {
      assert.equal(fromAnthropicToolId(id), id, id);
    }
  });

  test('seeded random ids: always the pattern, always round trip, never two on one', () => {
    const seed = Number(process.env['TOOL_ID_SEED'] ?? 20261125);
    const random = seededRandom(seed);
    const alphabet = ['a', 'Z', '0', '_', '-', '.', ':', ' ', '/', '|', 'é', '\u0000', '\ud83d', '\ude00', 'p', 'c', 'l', 'i', 'd'];
    const seen = new Map<string, string>();
    for (let n = 0; n < 3000; n++) {
      let id = random() < 0.2 ? ENCODED_ID_PREFIX : '';
      const length = 1 + Math.floor(random() * 12);
      for (let k = 0; k < length; k++) id += alphabet[Math.floor(random() * alphabet.length)];
      const encoded = toAnthropicToolId(id);
      const context = `seed ${seed}, id ${JSON.stringify(id)}`;
      assert.match(encoded, ANTHROPIC_TOOL_ID, context);
      assert.equal(fromAnthropicToolId(encoded), id, context);
      const earlier = seen.get(encoded);
      assert.ok(earlier === undefined || earlier === id, `${context} collides with ${JSON.stringify(earlier)}`);
      seen.set(encoded, id);
    }
  });

  test("docs/config.md's example is the encoding, word for word", () => {
    const doc = readFileSync(path.join(repositoryRoot(), 'docs/config.md'), 'utf8');
    const id = 'functions.get_weather:0';
    assert.ok(doc.includes(`\`${id}\``), 'the docs quote the id');
    assert.ok(doc.includes(`(\`${toAnthropicToolId(id)}\`)`), 'the docs quote its encoding');
    assert.ok(doc.includes(`\`${ENCODED_ID_PREFIX}\``), 'the docs name the marker');
  });
});
