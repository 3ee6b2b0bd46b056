// JSON source text: escaping for a string's inside, and replacements that keep
// the text JSON wherever a span starts and ends (inside strings, in escapes,
// across quotes, over a whole number).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonAdvance, jsonEscape, jsonReplace, JsonState } from '../../src/guard/json-text.ts';

describe('jsonEscape', () => {
  it('quotes, backslashes, control characters and line separators escaped; the rest as it is', () => {
    assert.equal(jsonEscape('plain caf\u00e9'), 'plain caf\u00e9');
    assert.equal(jsonEscape('a"b\\c\nd\re\tf\u0001g\u2028h\u2029'), 'a\\"b\\\\c\\nd\\re\\tf\\u0001g\\u2028h\\u2029');
    const value = 'x"\\\n\u2028\u0000y';
    assert.equal(JSON.parse(`"${jsonEscape(value)}"`), value);
  });
});

describe('jsonReplace', () => {
  const source = '{"key":"a\\"b\\u00e9\\\\c","n":12345,"list":[true,"x y",-7.5e3],"e":""}';
  /** A character of a number or a literal (true, false, null): a span boundary between two of them splits a token. */
  const numberChar = (code: number): boolean => /[0-9a-zA-Z+.-]/.test(String.fromCharCode(code));

  it('every span that does not split a token outside strings: the result parses', () => {
    let spans = 0;
    for (let start = 0; start < source.length; start++) {
      const state = jsonAdvance(JsonState.Out, source, 0, start);
      if (state === JsonState.Out && start > 0 && numberChar(source.charCodeAt(start - 1)) && numberChar(source.charCodeAt(start))) continue;
      for (let end = start + 1; end <= source.length; end++) {
        const after = jsonAdvance(state, source, start, end);
        if (after === JsonState.Out && numberChar(source.charCodeAt(end - 1)) && numberChar(source.charCodeAt(end))) continue;
        const span = source.slice(start, end);
        // A span wholly outside strings becomes one string: it may only be a value (a number, a literal).
        if (state === JsonState.Out && !span.includes('"') && !/^(-?[0-9.eE+-]+|true|false|null)$/.test(span)) continue;
        const out = source.slice(0, start) + jsonReplace(state, source, start, end, '[P_1]') + source.slice(end);
        assert.doesNotThrow(() => JSON.parse(out), `${start}-${end}: ${out}`);
        spans++;
      }
    }
    assert.ok(spans > 1000, `${spans} spans`);
  });

  it('exact: inside a string, after a backslash, inside \\u, outside strings, across quotes', () => {
    const at = (text: string, start: number, end: number): string => {
      const state = jsonAdvance(JsonState.Out, text, 0, start);
      return text.slice(0, start) + jsonReplace(state, text, start, end, 'P') + text.slice(end);
    };
    assert.equal(at('{"a":"xyz"}', 7, 8), '{"a":"xPz"}');
    assert.equal(at('{"a":"\\"q"}', 7, 9), '{"a":"\\"P"}');
    assert.equal(at('{"a":"\\u00e9"}', 9, 11), '{"a":"\\u00e0P\\u0009"}');
    assert.equal(at('{"a":"x\\"y"}', 6, 8), '{"a":"P\\"y"}');
    assert.equal(at('{"a":12345}', 5, 10), '{"a":"P"}');
    // Across quotes: the quotes and what is outside strings stay, the first content is the placeholder.
    assert.equal(at('{"a":"xy","b":"zw"}', 7, 16), '{"a":"xP","":"w"}');
  });

  it('a span starting after an escape\'s backslash or inside its \\u digits: the escape is completed first, its character kept', () => {
    const parsed = (text: string, start: number, end: number): unknown => {
      const state = jsonAdvance(JsonState.Out, text, 0, start);
      return JSON.parse(text.slice(0, start) + jsonReplace(state, text, start, end, 'P') + text.slice(end));
    };
    // {"a":"x\nbob@example.com"}: a value found from the escape's n on.
    assert.deepEqual(parsed('{"a":"x\\nbob@example.com"}', 8, 24), { a: 'x\nP' });
    assert.deepEqual(parsed('{"a":"x\\tbob","b":"c"}', 8, 12), { a: 'x\tP', b: 'c' });
    assert.deepEqual(parsed('{"a":"x\\u00e9bob"}', 8, 16), { a: 'x\u00e9P' });
    assert.deepEqual(parsed('{"a":"x\\u00e9bob"}', 10, 16), { a: 'x\u00e9P' });
    // Across the string's end: the escape kept, the quote kept, what is outside kept.
    assert.deepEqual(parsed('{"a":"x\\nbob","b":1}', 8, 14), { a: 'x\nP', b: 1 });
  });
});
