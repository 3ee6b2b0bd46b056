import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { createJsonParser, DEFAULT_JSON_LIMITS, JsonParseError, parseJson, renderJsonPath, type JsonParserOptions } from '../../src/json/parser.ts';
import { bytesOf, expectError, fingerprint, parseEveryWay, recordingObserver, type Outcome } from './feed-modes.ts';

function valueOf(outcome: Outcome): unknown {
  if (!outcome.ok) assert.fail(`unexpected error: ${outcome.error.message}`);
  return outcome.value;
}

/** Parses `text` every way and checks the value against JSON.parse's. */
function assertAgreesWithJsonParse(text: string, options: JsonParserOptions = {}): unknown {
  const value = valueOf(parseEveryWay(bytesOf(text), () => options));
  assert.deepStrictEqual(value, JSON.parse(text), text);
  assert.deepStrictEqual(parseJson(text, options), JSON.parse(text), text);
  return value;
}

function errorEveryWay(input: string | readonly number[], code: string, offset: number, options: JsonParserOptions = {}, limit?: string): void {
  const bytes = typeof input === 'string' ? bytesOf(input) : Uint8Array.from(input);
  expectError(parseEveryWay(bytes, () => options), code, offset, limit);
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

describe('numbers beyond the largest double (issue 14: 1e999 was forwarded as null)', () => {
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

describe('nesting', () => {
  it('allows maxDepth (10 000 by default) and rejects one more', () => {
    const depth = DEFAULT_JSON_LIMITS.maxDepth;
    const deep = '['.repeat(depth) + ']'.repeat(depth);
    let value = parseJson(deep);
    for (let level = 1; level < depth; level++) value = (value as unknown[])[0];
    assert.deepStrictEqual(value, []);
    const tooDeep = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expectError(parseEveryWay(bytesOf(tooDeep), () => ({}), { byteByByteUpTo: 0 }), 'limit_exceeded', 5 + depth - 1, 'maxDepth');
  });

  it('never recurses on the JS stack, whatever the depth', () => {
    const depth = 300_000;
    const parser = createJsonParser({ limits: { maxDepth: depth } });
    parser.feed(bytesOf('{"a":'.repeat(depth)));
    parser.feed(bytesOf('null'));
    parser.feed(bytesOf('}'.repeat(depth)));
    let value = parser.end();
    for (let level = 0; level < depth; level++) value = (value as Record<string, unknown>)['a'];
    assert.equal(value, null);
  });
});

describe('limits', () => {
  it('maxBytes: the whole input, counted across chunks; an earlier error wins', () => {
    assert.deepStrictEqual(parseJson('[1,2]', { limits: { maxBytes: 5 } }), [1, 2]);
    errorEveryWay('[1,2]', 'limit_exceeded', 4, { limits: { maxBytes: 4 } }, 'maxBytes');
    errorEveryWay('[1,2] ', 'limit_exceeded', 5, { limits: { maxBytes: 5 } }, 'maxBytes');
    errorEveryWay('[x,2]', 'unexpected_byte', 1, { limits: { maxBytes: 3 } });
    errorEveryWay('"abcdef"', 'limit_exceeded', 0, { limits: { maxBytes: 0 } }, 'maxBytes');
  });

  it('maxDepth', () => {
    assert.deepStrictEqual(parseJson('[[1]]', { limits: { maxDepth: 2 } }), [[1]]);
    errorEveryWay('[[1]]', 'limit_exceeded', 1, { limits: { maxDepth: 1 } }, 'maxDepth');
    errorEveryWay('{"a":{}}', 'limit_exceeded', 5, { limits: { maxDepth: 1 } }, 'maxDepth');
    assert.equal(parseJson('"x"', { limits: { maxDepth: 0 } }), 'x');
    errorEveryWay('[]', 'limit_exceeded', 0, { limits: { maxDepth: 0 } }, 'maxDepth');
  });

  it('maxStringBytes: raw bytes between the quotes, for values and keys', () => {
    const limit = (maxStringBytes: number): JsonParserOptions => ({ limits: { maxStringBytes } });
    assert.equal(parseJson('"abcd"', limit(4)), 'abcd');
    assert.equal(parseJson('"é"', limit(2)), 'é');
    assert.equal(parseJson('"\\n"', limit(2)), '\n');
    assert.equal(parseJson('""', limit(0)), '');
    errorEveryWay('"abcd"', 'limit_exceeded', 4, limit(3), 'maxStringBytes');
    errorEveryWay('"abcd', 'limit_exceeded', 4, limit(3), 'maxStringBytes');
    errorEveryWay('"é"', 'limit_exceeded', 2, limit(1), 'maxStringBytes');
    errorEveryWay('"\\n"', 'limit_exceeded', 2, limit(1), 'maxStringBytes');
    errorEveryWay('"a\\n"', 'limit_exceeded', 2, limit(1), 'maxStringBytes');
    errorEveryWay('"ab\\u0041"', 'limit_exceeded', 6, limit(5), 'maxStringBytes');
    errorEveryWay('{"abcd":1}', 'limit_exceeded', 5, limit(3), 'maxStringBytes');
    errorEveryWay('["ab","abcd"]', 'limit_exceeded', 10, limit(3), 'maxStringBytes');
    // Faults inside an over-long run: the length is checked first.
    errorEveryWay('"\u0001abcd"', 'limit_exceeded', 3, limit(2), 'maxStringBytes');
    errorEveryWay('"\u0001\\n"', 'limit_exceeded', 2, limit(1), 'maxStringBytes');
    // An escape before the limit is checked first.
    errorEveryWay('"\\xabcd"', 'invalid_escape', 2, limit(2));
  });

  it('maxMembers: entries of one array or members of one object', () => {
    const limit = (maxMembers: number): JsonParserOptions => ({ limits: { maxMembers } });
    assert.deepStrictEqual(parseJson('[[1,2],[3,4]]', limit(2)), [[1, 2], [3, 4]]);
    assert.deepStrictEqual(parseJson('[]', limit(0)), []);
    errorEveryWay('[1,2,3]', 'limit_exceeded', 5, limit(2), 'maxMembers');
    errorEveryWay('[1]', 'limit_exceeded', 1, limit(0), 'maxMembers');
    errorEveryWay('{"a":1,"b":2}', 'limit_exceeded', 7, limit(1), 'maxMembers');
    errorEveryWay('{"a":1,"a":2}', 'limit_exceeded', 7, limit(1), 'maxMembers');
    errorEveryWay('[{"a":1,"b":[1,2,3]}]', 'limit_exceeded', 17, limit(2), 'maxMembers');
  });

  it('refuses limits that are not non-negative numbers', () => {
    assert.throws(() => createJsonParser({ limits: { maxDepth: -1 } }), RangeError);
    assert.throws(() => createJsonParser({ limits: { maxBytes: Number.NaN } }), RangeError);
  });
});

describe('observer', () => {
  const record = (events: string[]): JsonParserOptions => ({ observer: recordingObserver(events) });

  it('reports keys and value starts in document order with full paths', () => {
    const text = '{"model":"x","messages":[{"role":"user","content":"hi"},[1,null]],"n":true,"o":{}}';
    const outcome = parseEveryWay(bytesOf(text), record);
    assert.deepStrictEqual(valueOf(outcome), JSON.parse(text));
    assert.deepStrictEqual(outcome.events, [
      'value [] object',
      'key [] "model"',
      'value ["model"] string',
      'key [] "messages"',
      'value ["messages"] array',
      'value ["messages",0] object',
      'key ["messages",0] "role"',
      'value ["messages",0,"role"] string',
      'key ["messages",0] "content"',
      'value ["messages",0,"content"] string',
      'value ["messages",1] array',
      'value ["messages",1,0] number',
      'value ["messages",1,1] null',
      'key [] "n"',
      'value ["n"] boolean',
      'key [] "o"',
      'value ["o"] object',
    ]);
    assert.deepStrictEqual(parseEveryWay(bytesOf(' 12 '), record).events, ['value [] number']);
  });

  it('fires valueStart on the first byte, before the value is read', () => {
    const events: string[] = [];
    const parser = createJsonParser(record(events));
    parser.feed(bytesOf('["abc'));
    assert.deepStrictEqual(events, ['value [] array', 'value [0] string']);
    parser.feed(bytesOf('",{"k'));
    assert.deepStrictEqual(events.slice(2), ['value [1] object']);
    parser.feed(bytesOf('"'));
    assert.deepStrictEqual(events.slice(3), ['key [1] "k"']);
  });

  it('aborts parsing with the error the observer throws, before the rest is read', () => {
    class UnknownFieldError extends Error {}
    const validator = (): JsonParserOptions => ({
      observer: {
        key(path, key) {
          if (path.length === 0 && key !== 'model' && key !== 'messages') throw new UnknownFieldError(`unknown field ${key}`);
        },
        valueStart(path) {
          if (path.length === 2 && path[0] === 'messages' && path[1] === 2) throw new RangeError('too many messages');
        },
      },
    });
    // The bytes after the abort point are not JSON at all: they are never read.
    const unknownField = parseEveryWay(bytesOf('{"model":"m","bogus": !!! not json'), validator);
    assert.deepStrictEqual(unknownField, { ok: false, error: { name: 'Error', message: 'unknown field bogus' }, events: [] });
    const tooMany = parseEveryWay(bytesOf('{"messages":[{},{},{} !!!'), validator);
    assert.deepStrictEqual(tooMany, { ok: false, error: { name: 'RangeError', message: 'too many messages' }, events: [] });

    const parser = createJsonParser(validator());
    let thrown: unknown;
    try {
      parser.feed(bytesOf('{"extra":1}'));
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown instanceof UnknownFieldError);
    assert.throws(() => parser.feed(bytesOf('{}')), (again: unknown) => again === thrown);
    assert.throws(() => parser.end(), (again: unknown) => again === thrown);
  });

  it('is checked after the limits at the same byte', () => {
    const outcome = parseEveryWay(bytesOf('[1,[2]]'), (events) => ({ observer: recordingObserver(events), limits: { maxDepth: 1 } }));
    expectError(outcome, 'limit_exceeded', 3, 'maxDepth');
    assert.deepStrictEqual(outcome.events, ['value [] array', 'value [0] number']);
  });
});

describe('parser lifecycle', () => {
  it('copies the bytes of a string cut by a chunk end, so the caller may reuse its buffer', () => {
    const parser = createJsonParser();
    const chunk = Buffer.from('["abc');
    parser.feed(chunk);
    chunk.fill(0x78);
    parser.feed(Buffer.from('d"]'));
    assert.deepStrictEqual(parser.end(), ['abcd']);
  });

  it('parses bytes and strings alike with parseJson', () => {
    assert.deepStrictEqual(parseJson(bytesOf('{"a":["é",1]}')), { a: ['é', 1] });
    assert.deepStrictEqual(parseJson(new Uint8Array(bytesOf(' null '))), null);
    assert.deepStrictEqual(parseJson('{"a":["é",1]}', { limits: { maxDepth: undefined, maxMembers: 2 } }), { a: ['é', 1] });
  });

  it('reads a plain Uint8Array view with an offset into a larger buffer', () => {
    const backing = bytesOf('xx{"a":"é"}yy');
    const parser = createJsonParser();
    parser.feed(new Uint8Array(backing.buffer, 2, backing.length - 4));
    assert.deepStrictEqual(parser.end(), { a: 'é' });
  });

  it('ends a top-level number only at end(), and end() is idempotent', () => {
    const parser = createJsonParser();
    parser.feed(bytesOf('12'));
    parser.feed(bytesOf('3.5'));
    parser.feed(new Uint8Array(0));
    assert.equal(parser.end(), 123.5);
    assert.equal(parser.end(), 123.5);
    assert.throws(() => parser.feed(bytesOf(' ')), /feed\(\) after end\(\)/);
  });

  it('stays terminated after an error', () => {
    const parser = createJsonParser();
    let thrown: unknown;
    try {
      parser.feed(bytesOf('[1,]'));
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown instanceof JsonParseError);
    assert.deepStrictEqual([thrown.code, thrown.offset], ['unexpected_byte', 3]);
    assert.throws(() => parser.feed(bytesOf('[]')), (again: unknown) => again === thrown);
    assert.throws(() => parser.end(), (again: unknown) => again === thrown);
  });
});
