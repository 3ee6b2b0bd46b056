import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  API_KEY_LENGTH,
  crc32OfAscii,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  keyDisplayPrefix,
} from '../../src/keys/api-key.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Pinned vectors: checksums cross-checked with Python's zlib.crc32, hashes with sha256sum.
const ZERO_KEY = 'pcl_00000000000000000000000000000000000000000002CZclj';
const MIXED_KEY = 'pcl_AbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1FZajM';

test('CRC-32 matches the standard check value', () => {
  assert.equal(crc32OfAscii('123456789'), 0xcbf43926);
  assert.equal(crc32OfAscii(''), 0);
  assert.equal(crc32OfAscii('x123456789y', 1, 10), 0xcbf43926);
  assert.equal(crc32OfAscii('0'.repeat(43)), 2018072207);
});

test('pinned keys are well-formed', () => {
  assert.equal(isWellFormedApiKey(ZERO_KEY), true);
  assert.equal(isWellFormedApiKey(MIXED_KEY), true);
});

test('generated keys: marker, 53 base62 characters, valid checksum, all distinct', () => {
  assert.equal(API_KEY_LENGTH, 53);
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const key = generateApiKey();
    assert.match(key, /^pcl_[0-9A-Za-z]{49}$/);
    assert.equal(isWellFormedApiKey(key), true, key);
    seen.add(key);
  }
  assert.equal(seen.size, 500);
});

test('generated random parts use the whole alphabet', () => {
  const used = new Set<string>();
  for (let i = 0; i < 200; i++) for (const c of generateApiKey().slice(5, 47)) used.add(c);
  assert.equal(used.size, 62);
});

function withCharAt(key: string, index: number, char: string): string {
  return key.slice(0, index) + char + key.slice(index + 1);
}

test('every single-character substitution after the marker is detected', () => {
  for (const key of [ZERO_KEY, MIXED_KEY, generateApiKey(), generateApiKey()]) {
    for (let i = 4; i < key.length; i++) {
      for (const c of BASE62) {
        if (c === key[i]) continue;
        const typo = withCharAt(key, i, c);
        assert.equal(isWellFormedApiKey(typo), false, `${i} -> ${c}`);
      }
    }
  }
});

test('every swap of two different adjacent characters is detected', () => {
  for (const key of [MIXED_KEY, generateApiKey(), generateApiKey()]) {
    for (let i = 4; i < key.length - 1; i++) {
      if (key[i] === key[i + 1]) continue;
      const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
      assert.equal(isWellFormedApiKey(swapped), false, `swap at ${i}`);
    }
  }
});

test('wrong marker, length or alphabet is refused', () => {
  const body = MIXED_KEY.slice(4);
  for (const bad of [
    'PCL_' + body,
    'pcl-' + body,
    'pcx_' + body,
    'sk-' + body + 'x',
    body + 'pcl_',
    MIXED_KEY.slice(0, -1),
    MIXED_KEY + '0',
    MIXED_KEY + ' ',
    ' ' + MIXED_KEY.slice(0, -1),
    withCharAt(MIXED_KEY, 10, '-'),
    withCharAt(MIXED_KEY, 10, '_'),
    withCharAt(MIXED_KEY, 10, 'é'),
    withCharAt(MIXED_KEY, 52, '\n'),
    'pcl_',
    '',
  ]) {
    assert.equal(isWellFormedApiKey(bad), false, JSON.stringify(bad));
  }
  assert.equal(isWellFormedApiKey(undefined as unknown as string), false);
  assert.equal(isWellFormedApiKey(42 as unknown as string), false);
});

test('hashApiKey is SHA-256 hex of the whole key, stable across calls', () => {
  assert.equal(hashApiKey(ZERO_KEY), '11eaba1259bd07279c92c319397d7cd35f0c18f2ce8666b6ac7243c5e9d46917');
  assert.equal(hashApiKey(MIXED_KEY), '4fd102b1f314cd5bb6e316b98297a395045baf22ab99df0ba7e41c2868a8d9f0');
  const key = generateApiKey();
  assert.equal(hashApiKey(key), hashApiKey(key));
  assert.match(hashApiKey(key), /^[0-9a-f]{64}$/);
  assert.notEqual(hashApiKey(key), hashApiKey(generateApiKey()));
});

test('keyDisplayPrefix is the marker and 8 characters', () => {
  assert.equal(keyDisplayPrefix(MIXED_KEY), 'pcl_AbC1x9Qz');
  assert.equal(keyDisplayPrefix(ZERO_KEY), 'pcl_00000000');
  const key = generateApiKey();
  assert.equal(keyDisplayPrefix(key), key.slice(0, 12));
});
