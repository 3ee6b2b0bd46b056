import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { createShortStringCache, createStringAssembly, decodeStringBytes, SHORT_STRING_BYTES, unitsToString } from '../../src/json/string-assembly.ts';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('string assembly', () => {
  it('joins runs and code units into what JSON.parse builds', () => {
    const assembly = createStringAssembly();
    const long = 'é'.repeat(50) + 'abc'.repeat(20);
    const pieces: [string, string][] = [['run', 'ab'], ['unit', 'é'], ['run', 'ü中😀'], ['unit', '\n'], ['run', long], ['unit', '\ud83d'], ['unit', '\ude00'], ['run', 'x']];
    for (const [kind, text] of pieces) {
      if (kind === 'run') assert.equal(assembly.appendRun(bytes(`--${text}--`), 2, Buffer.byteLength(text) + 2), undefined);
      else assembly.appendCodeUnit(text.charCodeAt(0));
    }
    assert.equal(assembly.take(), `abéü中😀\n${long}😀x`);
    assert.equal(assembly.take(), '');
  });

  it('keeps lone surrogates as JSON.parse does', () => {
    const assembly = createStringAssembly();
    for (const unit of [0xdc00, 0xd800, 0x41, 0xd800]) assembly.appendCodeUnit(unit);
    assert.equal(assembly.take(), JSON.parse('"\\udc00\\ud800A\\ud800"'));
  });

  it('grows its scratch for long strings', () => {
    const assembly = createStringAssembly();
    let expected = '';
    for (let k = 0; k < 5000; k++) {
      assembly.appendRun(bytes('ab€'), 0, 5);
      assembly.appendCodeUnit(0x0a);
      expected += 'ab€\n';
    }
    assert.equal(assembly.take(), expected);
  });

  it('returns the first fault of a run, relative to the run start', () => {
    const assembly = createStringAssembly();
    assert.deepStrictEqual(assembly.appendRun(Buffer.from([0x61, 0x62, 0xc3, 0xa9, 0x01]), 0, 5), { code: 'control_character', index: 4 });
    assert.deepStrictEqual(createStringAssembly().appendRun(Buffer.from([0x20, 0x61, 0x62, 0xff, 0x01]), 1, 5), { code: 'invalid_utf8', index: 2 });
    const long = Buffer.concat([Buffer.alloc(100, 0x61), Buffer.from([0xc3])]);
    assert.deepStrictEqual(createStringAssembly().appendRun(long, 0, long.length), { code: 'invalid_utf8', index: 100 });
  });
});

describe('unitsToString', () => {
  it('reads code units in either byte order', () => {
    const text = 'aé中\ud83d\ude00\ud800';
    const little = Buffer.from(text, 'utf16le');
    assert.equal(unitsToString(little, text.length, true), text);
    assert.equal(unitsToString(Buffer.from(little).swap16(), text.length, false), text);
    assert.equal(unitsToString(Buffer.concat([little, Buffer.from([0x41, 0])]), 2, true), 'aé');
  });
});

describe('decodeStringBytes', () => {
  it('decodes clean bytes and keeps a real U+FFFD', () => {
    assert.equal(decodeStringBytes(bytes('xa\uFFFDb€x'), 1, 9), 'a\uFFFDb€');
    assert.equal(decodeStringBytes(bytes('x'), 1, 1), '');
  });

  it('returns the fault of bytes the decoder would have replaced', () => {
    assert.deepStrictEqual(decodeStringBytes(Buffer.from([0x61, 0xed, 0xa0, 0x80]), 0, 4), { code: 'invalid_utf8', index: 1 });
    assert.deepStrictEqual(decodeStringBytes(Buffer.from([0x61, 0x1f]), 0, 2), { code: 'control_character', index: 1 });
  });
});

describe('short-string cache', () => {
  it('hands back the same string for the same bytes, and the right one on a collision', () => {
    const cached = createShortStringCache();
    const source = bytes('"role":"user","content":"role"');
    const first = cached(source, 1, 5);
    assert.equal(first, 'role');
    assert.equal(cached(source, 25, 29), 'role');
    assert.equal(cached(source, 8, 12), 'user');
    // Many different keys share the 512 slots: every answer is still exact.
    for (let k = 0; k < 3000; k++) {
      const key = `key_${k}`;
      assert.equal(cached(bytes(key), 0, key.length), key);
    }
    const longest = 'k'.repeat(SHORT_STRING_BYTES);
    assert.equal(cached(bytes(longest), 0, SHORT_STRING_BYTES), longest);
  });

  it('declines bytes that need the checked path', () => {
    const cached = createShortStringCache();
    assert.equal(cached(bytes('café'), 0, 5), undefined);
    assert.equal(cached(Buffer.from([0x61, 0x0a]), 0, 2), undefined);
    assert.equal(cached(Buffer.from([0x7f]), 0, 1), '\u007f');
    assert.equal(cached(bytes(''), 0, 0), '');
  });
});
