// The streaming JSON parser on values: agreement with JSON.parse, the first
// bad byte of what it rejects, numbers, duplicate keys, __proto__. Nesting,
// limits, the observer and feed/end: parser-options.test.ts.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { createJsonParser, JsonParseError, parseJson, renderJsonPath, type JsonParserOptions } from '../../src/json/parser.ts';
import { bytesOf, errorEveryWay, fingerprint, parseEveryWay, recordingObserver, valueOf } from './feed-modes.ts';


/** Parses `text` every way and checks the value against JSON.parse's. */
function assertAgreesWithJsonParse(text: string, options: JsonParserOptions = {}): unknown {
  const value = valueOf(parseEveryWay(bytesOf(text), () => options));
  assert.deepStrictEqual(value, JSON.parse(text), text);
  assert.deepStrictEqual(parseJson(text, options), JSON.parse(text), text);
  return value;
}


describe('parseJson agrees with JSON.parse', () => {
  it('on numbers, converted exactly, -0 included', () => {
    const numbers = [
      '0', '-0', '1', '-1', '10', '-0.0', '0.5', '1.5e3', '1E+2', '1e-2', '2e0', '-0e-0',
      '123456789012345678901234567890', '9007199254740993', '0.30000000000000004',
      '2.2250738585072011e-308', '4.9e-324', '5e-325', '1.7976931348623157e308', '1.7976931348623158e308',
      '-1.7976931348623158e308', '1e-400', '-1e-400', '123.456e-789', '0.000000000000000000001', '100000000000000000000000',
    ];
    for (const text of numbers) {
      const value = assertAgreesWithJsonParse(text);
      assert.ok(Object.is(value, JSON.parse(text)), text);
      assertAgreesWithJsonParse(`[${text}]`);
      assertAgreesWithJsonParse(`{"n":${text}}`);
    }
    assert.ok(Object.is(parseJson('-0'), -0));
  });

  it('on literals, whitespace and structures', () => {
    for (const text of [
      'true', 'false', 'null', '[true,false,null]', ' \t\r\n 1 \t\r\n ', '[]', '{}', '[[]]', '[{}]', '{"a":[]}',
      '{"a":1,"b":[1,2,{"c":"d"}],"e":{"f":{"g":null}}}', ' [ 1 , { "a" : [ ] } , "x" ] ', '{"":""}', '{"0":1,"a":2,"1":3}',
    ]) {
      assertAgreesWithJsonParse(text);
    }
  });

  it('on escapes, surrogates and multi-byte UTF-8', () => {
    for (const text of [
      '""', '"abc"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u0000"', '"\\u00e9\\u00E9\\u4E2D"', '"\\ud83d\\ude00"',
      '"\\ud800"', '"\\udc00"', '"\\udc00\\ud800"', '"\\ud800x"', '"\\ud800\\n"', '"a\\\\"', '"\\\\\\""',
      '"é中😀"', '"\u007f"', '"\uFFFD"', '"\uFEFF"', '"\u2028\u2029"', '"x\\ny\\u0041é\\t😀z"',
      '{"é":"ü","😀":["\\ud83d\\ude00"]}',
    ]) {
      assertAgreesWithJsonParse(text);
    }
  });

  it('on strings mixing long runs, short runs, escapes and multi-byte text', () => {
    const long = 'Grüße, 世界! '.repeat(8);
    for (const text of [
      `"${long}"`, `"\\n${long}\\t${long}\\u00e9"`, `"a\\nb${long}\\"c"`, `["${long}", "${long}\\n", {"${long}":"\\u4e2d\\u6587"}]`,
      '"\\ud83d\\ude00\\ud83d\\ude00"', '"\\ud800\\ud800\\udc00"', '"\\ud83dé"', '"\\ud83d\\u0041"', '"é\\udc00"',
      `"${'x'.repeat(70)}\\ud83d${'é'.repeat(40)}\\ude00"`, '"\\u00e9\\u00E9\\u20ac\\uFFFF\\u0000\\u001f"',
    ]) {
      assertAgreesWithJsonParse(text);
    }
  });

  it('on a chat body with long strings, fed in random chunks', () => {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const alphabet = ['a', 'b', ' ', 'é', '中', '😀', '\n', '"', '\\', '\t', '\u0001', '\ud800', '\uFFFD'];
    const messages = [];
    for (let m = 0; m < 40; m++) {
      let content = '';
      const length = Math.floor(random() * 3000);
      for (let c = 0; c < length; c++) content += alphabet[Math.floor(random() * alphabet.length)];
      messages.push({ role: m % 2 === 0 ? 'user' : 'assistant', content });
    }
    const text = JSON.stringify({ model: 'm', messages, temperature: 0.25 });
    const bytes = Buffer.from(text, 'utf8');
    const expected = JSON.parse(text) as unknown;
    const expectedPrint = fingerprint(expected);
    for (let round = 0; round < 20; round++) {
      const parser = createJsonParser();
      let start = 0;
      while (start < bytes.length) {
        const size = 1 + Math.floor(random() * (round < 10 ? 16 : 70000));
        parser.feed(bytes.subarray(start, start + size));
        start += size;
      }
      const value = parser.end();
      if (fingerprint(value) !== expectedPrint) assert.deepStrictEqual(value, expected, `round ${round}`);
    }
  });
});

describe('parseJson rejects what JSON.parse rejects, at the first bad byte', () => {
  it('on structure', () => {
    errorEveryWay('', 'unexpected_end', 0);
    errorEveryWay(' \n', 'unexpected_end', 2);
    errorEveryWay('[', 'unexpected_end', 1);
    errorEveryWay('{"a":', 'unexpected_end', 5);
    errorEveryWay('{"a":1', 'unexpected_end', 6);
    errorEveryWay('[1,', 'unexpected_end', 3);
    errorEveryWay('"abc', 'unexpected_end', 4);
    errorEveryWay('[1,]', 'unexpected_byte', 3);
    errorEveryWay('[,1]', 'unexpected_byte', 1);
    errorEveryWay('{"a":1,}', 'unexpected_byte', 7);
    errorEveryWay('{,}', 'unexpected_byte', 1);
    errorEveryWay('{"a" 1}', 'unexpected_byte', 5);
    errorEveryWay('{1:2}', 'unexpected_byte', 1);
    errorEveryWay('["a":1]', 'unexpected_byte', 4);
    errorEveryWay('[1 2]', 'unexpected_byte', 3);
    errorEveryWay('[1}', 'unexpected_byte', 2);
    errorEveryWay('{"a":1]', 'unexpected_byte', 6);
    errorEveryWay('[]]', 'unexpected_byte', 2);
    errorEveryWay('{} {}', 'unexpected_byte', 3);
    errorEveryWay('1 2', 'unexpected_byte', 2);
    errorEveryWay("{'a':1}", 'unexpected_byte', 1);
    errorEveryWay('[\u00a0]', 'unexpected_byte', 1);
    errorEveryWay([0x5b, 0xc3, 0xa9, 0x5d], 'unexpected_byte', 1);
    errorEveryWay([0x5b, 0xff, 0x5d], 'unexpected_byte', 1);
    errorEveryWay('[1]\u0000', 'unexpected_byte', 3);
  });

  it('on literals and numbers', () => {
    errorEveryWay('tru', 'unexpected_end', 3);
    errorEveryWay('trux', 'unexpected_byte', 3);
    errorEveryWay('True', 'unexpected_byte', 0);
    errorEveryWay('nul', 'unexpected_end', 3);
    errorEveryWay('[nulll]', 'unexpected_byte', 5);
    errorEveryWay('NaN', 'unexpected_byte', 0);
    errorEveryWay('Infinity', 'unexpected_byte', 0);
    errorEveryWay('+1', 'unexpected_byte', 0);
    errorEveryWay('.5', 'unexpected_byte', 0);
    errorEveryWay('01', 'invalid_number', 1);
    errorEveryWay('-01', 'invalid_number', 2);
    errorEveryWay('-', 'unexpected_end', 1);
    errorEveryWay('-a', 'invalid_number', 1);
    errorEveryWay('[-]', 'invalid_number', 2);
    errorEveryWay('1.', 'unexpected_end', 2);
    errorEveryWay('1.e1', 'invalid_number', 2);
    errorEveryWay('[1.]', 'invalid_number', 3);
    errorEveryWay('1e', 'unexpected_end', 2);
    errorEveryWay('1e+', 'unexpected_end', 3);
    errorEveryWay('[1e]', 'invalid_number', 3);
    errorEveryWay('[1e+]', 'invalid_number', 4);
    errorEveryWay('1.5.2', 'unexpected_byte', 3);
    errorEveryWay('1e5e5', 'unexpected_byte', 3);
    errorEveryWay('0x10', 'unexpected_byte', 1);
    errorEveryWay('[1]1', 'unexpected_byte', 3);
    errorEveryWay('[01]', 'invalid_number', 2);
  });

  it('on escapes and raw control characters', () => {
    errorEveryWay('"\\x"', 'invalid_escape', 2);
    errorEveryWay('"\\U0041"', 'invalid_escape', 2);
    errorEveryWay('"\\u12"', 'invalid_escape', 5);
    errorEveryWay('"\\u12g4"', 'invalid_escape', 5);
    errorEveryWay('"ab\\\u00e9"', 'invalid_escape', 4);
    errorEveryWay('"\\', 'unexpected_end', 2);
    errorEveryWay('"\\u00', 'unexpected_end', 5);
    errorEveryWay('"\u0001"', 'unexpected_byte', 1);
    errorEveryWay('"a\nb"', 'unexpected_byte', 2);
    errorEveryWay('"ab\tc"', 'unexpected_byte', 3);
    errorEveryWay('"\\n\u001f"', 'unexpected_byte', 3);
    errorEveryWay('{"a\u0000":1}', 'unexpected_byte', 3);
  });

  it('on invalid UTF-8 inside strings, with the offset of the bad sequence', () => {
    const quoted = (...inner: number[]): number[] => [0x22, 0x61, ...inner, 0x22];
    errorEveryWay(quoted(0xff), 'invalid_utf8', 2);
    errorEveryWay(quoted(0x80), 'invalid_utf8', 2); // stray continuation byte
    errorEveryWay(quoted(0xc3), 'invalid_utf8', 2); // truncated before the quote
    errorEveryWay(quoted(0xe4, 0xb8), 'invalid_utf8', 2);
    errorEveryWay(quoted(0xc0, 0xaf), 'invalid_utf8', 2); // overlong '/'
    errorEveryWay(quoted(0xe0, 0x80, 0xaf), 'invalid_utf8', 2); // overlong
    errorEveryWay(quoted(0xf0, 0x80, 0x80, 0xaf), 'invalid_utf8', 2); // overlong
    errorEveryWay(quoted(0xed, 0xa0, 0x80), 'invalid_utf8', 2); // encoded surrogate U+D800
    errorEveryWay(quoted(0xf4, 0x90, 0x80, 0x80), 'invalid_utf8', 2); // above U+10FFFF
    errorEveryWay(quoted(0xf5, 0x80, 0x80, 0x80), 'invalid_utf8', 2);
    errorEveryWay(quoted(0xc3, 0xa9, 0xc3, 0x28), 'invalid_utf8', 4);
    errorEveryWay(quoted(0x5c, 0x6e, 0xff), 'invalid_utf8', 4); // after an escape
    errorEveryWay(quoted(0xc3, 0x5c, 0x6e), 'invalid_utf8', 2); // cut by an escape
    errorEveryWay(quoted(0xff, 0x01), 'invalid_utf8', 2); // the first fault wins
    errorEveryWay(quoted(0x01, 0xff), 'unexpected_byte', 2);
    errorEveryWay([0x7b, 0x22, 0xfe, 0x22, 0x3a, 0x31, 0x7d], 'invalid_utf8', 2); // in a key
    // In a long run (decoded natively) and in a short one after an escape.
    const long = Array.from(bytesOf('Grüße '.repeat(20)));
    errorEveryWay(quoted(...long, 0xe2, 0x82), 'invalid_utf8', 2 + long.length);
    errorEveryWay(quoted(0x5c, 0x6e, ...long, 0x0a), 'unexpected_byte', 4 + long.length);
    errorEveryWay(quoted(0x5c, 0x6e, 0x61, 0xf0, 0x9f, 0x98, 0x5c, 0x6e), 'invalid_utf8', 5);
    errorEveryWay(quoted(0x5c, 0x75, 0x30, 0x30, 0x65, 0x39, 0xc3, 0xa9, 0xe0, 0x80, 0x80), 'invalid_utf8', 10);
  });

  it('on a byte order mark: rejected like JSON.parse rejects U+FEFF', () => {
    assert.throws(() => JSON.parse('\uFEFF{}'), SyntaxError);
    errorEveryWay([0xef, 0xbb, 0xbf, 0x7b, 0x7d], 'unexpected_byte', 0);
    errorEveryWay('\uFEFF{}', 'unexpected_byte', 0);
  });

  it('on a string holding a lone surrogate, which has no UTF-8 form', () => {
    assert.throws(() => parseJson('"ab\ud800"'), { name: 'JsonParseError', code: 'invalid_utf8', offset: 3 });
    assert.throws(() => parseJson('"é\udc00\ud800"'), { code: 'invalid_utf8', offset: 3 });
    // An earlier fault in the well-formed prefix is reported first.
    assert.throws(() => parseJson('[x"\ud800"]'), { code: 'unexpected_byte', offset: 1 });
    assert.equal(parseJson('"\ud83d\ude00"'), '\ud83d\ude00');
  });

  it('with messages that name the problem and the offset and echo at most one byte', () => {
    const secret = 'sk-live-0123456789abcdef';
    try {
      parseJson(`{"key":"${secret}" ${secret}}`);
      assert.fail('accepted');
    } catch (error) {
      assert.ok(error instanceof JsonParseError);
      assert.equal(error.message, "Unexpected byte 's' (0x73), expected ',' or '}', at byte offset 34 (parser state CommaOrObjectEnd)");
      assert.ok(!error.message.includes('sk-live'));
    }
    assert.throws(() => parseJson('[\u0001]'), { message: "Unexpected byte 0x01, expected a value or ']', at byte offset 1 (parser state FirstValueOrArrayEnd)" });
  });
});

describe('numbers beyond the largest double (1e999 is not forwarded as null)', () => {
  it('fail as number_out_of_range at the number\'s first byte, where JSON.parse makes Infinity', () => {
    for (const [text, offset] of [
      ['1e999', 0], ['-1e999', 0], ['1e400', 0], ['-1E+400', 0], ['1.7976931348623159e308', 0], [`1${'0'.repeat(309)}`, 0],
      ['0.1e310', 0], ['[1, 2e308]', 4], ['{"a":[{"b":-1e999}]}', 11], ['  1e999  ', 2],
    ] as const) {
      assert.equal(Math.abs(JSON.parse(text) as number) === Infinity || JSON.stringify(JSON.parse(text)).includes('null'), true, text);
      errorEveryWay(text, 'number_out_of_range', offset);
    }
  });

  it('name the path of the number, with or without an observer, and the first one in the document', () => {
    const cases: Array<[string, readonly (string | number)[]]> = [
      ['1e999', []],
      ['[1e999]', [0]],
      ['[0, [1, 2, 3e999]]', [1, 2]],
      ['{"tools":[{"function":{"parameters":{"properties":{"x":{"maximum":1e999}}}}}]}', ['tools', 0, 'function', 'parameters', 'properties', 'x', 'maximum']],
      ['{"a":{"b":1},"c":[{},{"d":[null,-1e999,1e999]}]}', ['c', 1, 'd', 1]],
      ['{"__proto__":{"x":1e999}}', ['__proto__', 'x']],
      ['{"":[[{"":1e999}]]}', ['', 0, 0, '']],
    ];
    for (const [text, path] of cases) {
      for (const options of [() => ({}), (events: string[]) => ({ observer: recordingObserver(events) })]) {
        const outcome = parseEveryWay(bytesOf(text), options);
        assert.equal(outcome.ok, false, text);
        if (!outcome.ok) {
          assert.equal(outcome.error.code, 'number_out_of_range', text);
          assert.deepStrictEqual(outcome.error.path, path, text);
        }
      }
    }
    assert.throws(() => parseJson('{"x":[1e400]}'), (err: unknown) => {
      assert.ok(err instanceof JsonParseError);
      assert.equal(err.message, 'Number beyond the largest double (1.7976931348623157e308) at byte offset 6 (parser state NumberExponent)');
      return true;
    });
  });

  it('leave underflow and excess digits as JSON.parse makes them', () => {
    for (const text of ['1e-999', '-1e-999', '4.9e-325', '3.141592653589793238462643383279', `1${'0'.repeat(308)}`, '1.7976931348623158e308']) {
      assertAgreesWithJsonParse(text);
    }
    assert.ok(Object.is(parseJson('-1e-999'), -0));
  });

  it('renders the path as the validator does: dots, [index], keys cut to 64 characters', () => {
    assert.equal(renderJsonPath([]), '');
    assert.equal(renderJsonPath(['tools', 0, 'function', 'parameters']), 'tools[0].function.parameters');
    assert.equal(renderJsonPath([0, 'a', 1, 2]), '[0].a[1][2]');
    assert.equal(renderJsonPath(['k'.repeat(65), 'x'.repeat(64)]), `${'k'.repeat(64)}....${'x'.repeat(64)}`);
  });

  it('an earlier fault still wins over a later number out of range', () => {
    errorEveryWay('[01, 1e999]', 'invalid_number', 2);
    errorEveryWay('{"a":1,"a":1e999}', 'duplicate_key', 7, { rejectDuplicateKeys: true });
    errorEveryWay('[1, 2, 1e999]', 'limit_exceeded', 7, { limits: { maxMembers: 2 } }, 'maxMembers');
  });
});

describe('duplicate keys', () => {
  it('last one wins by default, as in JSON.parse', () => {
    assert.deepStrictEqual(assertAgreesWithJsonParse('{"a":1,"b":2,"a":3}'), { a: 3, b: 2 });
    assertAgreesWithJsonParse('{"a":{"x":1},"a":[2]}');
  });

  it('fail with rejectDuplicateKeys at the second key', () => {
    errorEveryWay('{"a":1,"b":2,"a":3}', 'duplicate_key', 13, { rejectDuplicateKeys: true });
    errorEveryWay('{"a":{"a":1,"b":{},"b":2}}', 'duplicate_key', 19, { rejectDuplicateKeys: true });
    errorEveryWay('{"__proto__":1,"__proto__":2}', 'duplicate_key', 15, { rejectDuplicateKeys: true });
    errorEveryWay('{"\\u0061":1,"a":2}', 'duplicate_key', 12, { rejectDuplicateKeys: true });
    assert.deepStrictEqual(parseJson('[{"a":1},{"a":2}]', { rejectDuplicateKeys: true }), [{ a: 1 }, { a: 2 }]);
    assert.deepStrictEqual(parseJson('{"constructor":1,"toString":2}', { rejectDuplicateKeys: true }), { constructor: 1, toString: 2 });
  });
});

describe('__proto__ and constructor are ordinary data', () => {
  it('makes an own property named __proto__ and never changes a prototype', () => {
    const text = '{"__proto__":{"polluted":true},"a":{"__proto__":[1]},"constructor":{"prototype":{"polluted":true}}}';
    const value = assertAgreesWithJsonParse(text) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.ok(Object.hasOwn(value, '__proto__'));
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(value, '__proto__'), {
      value: { polluted: true }, writable: true, enumerable: true, configurable: true,
    });
    assert.deepStrictEqual(Object.keys(value), ['__proto__', 'a', 'constructor']);
    const inner = value['a'] as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(inner), Object.prototype);
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value, [1]);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal((Object.prototype as Record<string, unknown>)['polluted'], undefined);
    assert.equal(typeof ({}).constructor, 'function');
  });

  it('keeps the last __proto__ when it repeats', () => {
    const value = assertAgreesWithJsonParse('{"__proto__":1,"__proto__":{"x":2}}') as Record<string, unknown>;
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, { x: 2 });
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
  });
});
