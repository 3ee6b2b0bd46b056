import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { it } from 'node:test';
import { findStringContentFault } from '../../src/json/string-content.ts';

/** The reference: Node's validator (simdutf) for UTF-8, plus the RFC 8259 control-character rule. */
function isCleanByReference(bytes: Uint8Array): boolean {
  return isUtf8(bytes) && !bytes.some((byte) => byte < 0x20);
}

const EDGES = [0x00, 0x1f, 0x20, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];

it('agrees with isUtf8 on every one- and two-byte sequence', () => {
  for (let a = 0; a < 256; a++) {
    assert.equal(findStringContentFault(Uint8Array.of(a), 0, 1) === undefined, isCleanByReference(Uint8Array.of(a)), `${a}`);
    for (let b = 0; b < 256; b++) {
      const bytes = Uint8Array.of(a, b);
      assert.equal(findStringContentFault(bytes, 0, 2) === undefined, isCleanByReference(bytes), `${a} ${b}`);
    }
  }
});

it('agrees with isUtf8 on three- and four-byte sequences around every boundary', () => {
  for (let lead = 0xc0; lead < 256; lead++) {
    for (let second = 0; second < 256; second++) {
      for (const third of EDGES) {
        const three = Uint8Array.of(lead, second, third);
        assert.equal(findStringContentFault(three, 0, 3) === undefined, isCleanByReference(three), `${three.join(' ')}`);
        for (const fourth of EDGES) {
          const four = Uint8Array.of(lead, second, third, fourth);
          assert.equal(findStringContentFault(four, 0, 4) === undefined, isCleanByReference(four), `${four.join(' ')}`);
        }
      }
    }
  }
});

it('reports the first fault, relative to the start of the scanned range', () => {
  const bytes = new TextEncoder().encode('xxé中😀\u0001\u00e9');
  assert.deepStrictEqual(findStringContentFault(bytes, 2, bytes.length), { code: 'control_character', index: 9 });
  assert.equal(findStringContentFault(bytes, 2, 11), undefined);
  // A sequence cut by the end of the range is a fault at its lead byte.
  assert.deepStrictEqual(findStringContentFault(bytes, 2, 10), { code: 'invalid_utf8', index: 5 });
  assert.deepStrictEqual(findStringContentFault(Uint8Array.of(0x61, 0xe4, 0xb8, 0x61), 0, 4), { code: 'invalid_utf8', index: 1 });
  assert.deepStrictEqual(findStringContentFault(Uint8Array.of(0x61, 0x80), 0, 2), { code: 'invalid_utf8', index: 1 });
});
