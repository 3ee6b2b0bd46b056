// The streaming JSON parser's options and lifecycle: nesting, limits, the
// observer, and what feed() and end() do with the caller's buffers.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { createJsonParser, DEFAULT_JSON_LIMITS, JsonParseError, parseJson, type JsonParserOptions } from '../../src/json/parser.ts';
import { ownFunctionPaths } from '../support/own-functions.ts';
import { bytesOf, errorEveryWay, expectError, parseEveryWay, recordingObserver, valueOf } from './feed-modes.ts';

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
  it('makes no functions per parse: its steps are shared by every parser', () => {
    const observer = { key(): void {}, valueStart(): void {} };
    const first = createJsonParser({ observer, rejectDuplicateKeys: true });
    const second = createJsonParser();
    first.feed(bytesOf('{"a":["x\\n", 1, {"b": tr'));
    assert.equal(first.feed, second.feed);
    assert.equal(first.end, second.end);
    assert.deepStrictEqual(ownFunctionPaths(first, [observer]), []);
  });

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
