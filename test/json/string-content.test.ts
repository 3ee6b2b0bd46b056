import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { it } from 'node:test';
import { findStringContentFault } from '../../src/json/string-content.ts';

/** The reference: Node's validator (simdutf) for UTF-8, plus the RFC 8259 control-character rule. */
function isCleanByReference(bytes: Uint8Array): boolean {
  if (!isUtf8(bytes)) return false;
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] as number) < 0x20) return false;
  return true;
}

/**
 * Fails, naming the bytes, unless findStringContentFault and the reference
 * agree on `bytes`. Millions of sequences go through here: the message is
 * made only for a disagreement.
 */
function assertAgrees(bytes: Uint8Array): void {
  const clean = findStringContentFault(bytes, 0, bytes.length) === undefined;
  if (clean !== isCleanByReference(bytes)) assert.fail(`[${bytes.join(' ')}]: findStringContentFault says ${clean ? 'clean' : 'faulty'}, the reference does not`);
}

const EDGES = [0x00, 0x1f, 0x20, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];

it('agrees with isUtf8 on every one- and two-byte sequence', () => {
  const one = new Uint8Array(1);
  const two = new Uint8Array(2);
  for (let a = 0; a < 256; a++) {
    one[0] = a;
    assertAgrees(one);
    two[0] = a;
    for (let b = 0; b < 256; b++) {
      two[1] = b;
      assertAgrees(two);
    }
  }
});

it('agrees with isUtf8 on three- and four-byte sequences around every boundary', () => {
  // One buffer of each length, rewritten in place: a fresh array per sequence was most of the cost.
  const three = new Uint8Array(3);
  const four = new Uint8Array(4);
  for (let lead = 0xc0; lead < 256; lead++) {
    three[0] = four[0] = lead;
    for (let second = 0; second < 256; second++) {
      three[1] = four[1] = second;
      for (const third of EDGES) {
        three[2] = four[2] = third;
        assertAgrees(three);
        for (const fourth of EDGES) {
          four[3] = fourth;
          assertAgrees(four);
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
