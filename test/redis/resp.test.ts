import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RedisProtocolError, RedisReplyError } from '../../src/redis/errors.ts';
import {
  createRespDecoder,
  encodeCommand,
  encodeCommands,
  type RedisReply,
  type RespDecoderOptions,
} from '../../src/redis/resp.ts';

/** Replies with errors turned into comparable plain data. */
type Plain = string | number | bigint | null | { error: string; code: string } | Plain[];

function plain(reply: RedisReply): Plain {
  if (reply instanceof RedisReplyError) return { error: reply.message, code: reply.code };
  if (Array.isArray(reply)) return reply.map(plain);
  return reply;
}

function decodeChunks(chunks: Buffer[], options?: RespDecoderOptions): Plain[] {
  const replies: Plain[] = [];
  const decoder = createRespDecoder({ onReply: (reply) => replies.push(plain(reply)) }, options);
  for (const chunk of chunks) decoder.feed(chunk);
  assert.equal(decoder.midReply(), false);
  return replies;
}

interface Fixture {
  name: string;
  input: string | Buffer;
  replies: Plain[];
}

const fixtures: Fixture[] = [
  { name: 'OK', input: '+OK\r\n', replies: ['OK'] },
  { name: 'simple string with spaces', input: '+hello world\r\n', replies: ['hello world'] },
  { name: 'empty simple string', input: '+\r\n', replies: [''] },
  { name: 'error ERR', input: '-ERR unknown command\r\n', replies: [{ error: 'ERR unknown command', code: 'ERR' }] },
  {
    name: 'error NOSCRIPT',
    input: '-NOSCRIPT No matching script. Please use EVAL.\r\n',
    replies: [{ error: 'NOSCRIPT No matching script. Please use EVAL.', code: 'NOSCRIPT' }],
  },
  {
    name: 'error WRONGTYPE',
    input: '-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
    replies: [{ error: 'WRONGTYPE Operation against a key holding the wrong kind of value', code: 'WRONGTYPE' }],
  },
  { name: 'error of one word', input: '-LOADING\r\n', replies: [{ error: 'LOADING', code: 'LOADING' }] },
  { name: 'integer 0', input: ':0\r\n', replies: [0] },
  { name: 'negative integer', input: ':-42\r\n', replies: [-42] },
  { name: 'largest safe integer is a number', input: ':9007199254740991\r\n', replies: [9007199254740991] },
  { name: 'smallest safe integer is a number', input: ':-9007199254740991\r\n', replies: [-9007199254740991] },
  { name: 'past 2^53 is a bigint', input: ':9007199254740992\r\n', replies: [9007199254740992n] },
  { name: 'int64 minimum is a bigint', input: ':-9223372036854775808\r\n', replies: [-9223372036854775808n] },
  { name: 'leading zeros', input: ':0000000000000000012\r\n', replies: [12] },
  { name: 'bulk string', input: '$5\r\nhello\r\n', replies: ['hello'] },
  { name: 'empty bulk string', input: '$0\r\n\r\n', replies: [''] },
  { name: 'null bulk string', input: '$-1\r\n', replies: [null] },
  { name: 'bulk string holding CRLF', input: '$4\r\na\r\nb\r\n', replies: ['a\r\nb'] },
  { name: 'bulk string of UTF-8 (2, 3, 4 bytes)', input: '$9\r\né€😀\r\n', replies: ['é€😀'] },
  { name: 'null array', input: '*-1\r\n', replies: [null] },
  { name: 'empty array', input: '*0\r\n', replies: [[]] },
  { name: 'array of bulk and integer', input: '*2\r\n$1\r\na\r\n:1\r\n', replies: [['a', 1]] },
  {
    name: 'array holding an error and nulls',
    input: '*3\r\n-ERR x\r\n$-1\r\n*-1\r\n',
    replies: [[{ error: 'ERR x', code: 'ERR' }, null, null]],
  },
  { name: 'nested arrays', input: '*2\r\n*1\r\n+x\r\n*0\r\n', replies: [[['x'], []]] },
  { name: 'three levels', input: '*1\r\n*1\r\n*2\r\n:7\r\n$2\r\nok\r\n', replies: [[[[7, 'ok']]]] },
  {
    name: 'several replies back to back',
    input: '+OK\r\n:1\r\n$1\r\nx\r\n*1\r\n$-1\r\n-ERR y\r\n',
    replies: ['OK', 1, 'x', [null], { error: 'ERR y', code: 'ERR' }],
  },
];

describe('RESP decoder', () => {
  for (const fixture of fixtures) {
    const bytes = Buffer.from(fixture.input);

    test(`${fixture.name}: whole`, () => {
      assert.deepEqual(decodeChunks([bytes]), fixture.replies);
    });

    test(`${fixture.name}: byte by byte`, () => {
      const chunks = [...bytes].map((byte) => Buffer.from([byte]));
      assert.deepEqual(decodeChunks(chunks), fixture.replies);
    });

    test(`${fixture.name}: split at every index, and at every pair of indexes`, () => {
      for (let i = 0; i <= bytes.length; i += 1) {
        assert.deepEqual(decodeChunks([bytes.subarray(0, i), bytes.subarray(i)]), fixture.replies, `split at ${i}`);
        for (let j = i; j <= bytes.length; j += 1) {
          const chunks = [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)];
          assert.deepEqual(decodeChunks(chunks), fixture.replies, `split at ${i} and ${j}`);
        }
      }
    });
  }

  test('a bulk string cut inside a UTF-8 character and its CRLF decodes whole', () => {
    const bytes = Buffer.from('$4\r\n😀\r\n');
    // 😀 is bytes 4..7; cut after its second byte and between CR and LF.
    assert.deepEqual(decodeChunks([bytes.subarray(0, 6), bytes.subarray(6, 9), bytes.subarray(9)]), ['😀']);
  });

  test('a large bulk string arriving in many chunks', () => {
    const payload = 'x'.repeat(100_000);
    const bytes = Buffer.from(`$${payload.length}\r\n${payload}\r\n`);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 1000) chunks.push(bytes.subarray(at, at + 1000));
    assert.deepEqual(decodeChunks(chunks), [payload]);
  });

  test('midReply is true between the parts of an array', () => {
    const decoder = createRespDecoder({ onReply: () => {} });
    decoder.feed(Buffer.from('*2\r\n:1\r\n'));
    assert.equal(decoder.midReply(), true);
    decoder.feed(Buffer.from(':2\r\n'));
    assert.equal(decoder.midReply(), false);
    decoder.feed(Buffer.from('$3\r\nab'));
    assert.equal(decoder.midReply(), true);
  });
});

describe('RESP decoder protocol errors', () => {
  const cases: { name: string; input: string; code: string; offset: number; options?: RespDecoderOptions }[] = [
    { name: 'unknown type byte', input: '+OK\r\nhello\r\n', code: 'redis_protocol_error', offset: 5 },
    { name: 'RESP3 map type', input: '%1\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'line ended by bare LF', input: '+OK\n', code: 'redis_protocol_error', offset: 3 },
    { name: 'empty line', input: '\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'integer with a letter', input: ':12a\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'integer without digits', input: ':-\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'bulk length not a number', input: '$x\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'bulk length -2', input: '$-2\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'bulk header without length', input: '$\r\n', code: 'redis_protocol_error', offset: 0 },
    { name: 'bulk not followed by CRLF', input: '$3\r\nabcX\r\n', code: 'redis_protocol_error', offset: 7 },
    { name: 'bulk over the limit', input: '$5\r\n', code: 'redis_reply_too_large', offset: 0, options: { maxBulkBytes: 4 } },
    { name: 'array over the limit', input: '*3\r\n', code: 'redis_reply_too_large', offset: 0, options: { maxArrayLength: 2 } },
    { name: 'arrays too deep', input: '*1\r\n*1\r\n*1\r\n', code: 'redis_reply_too_deep', offset: 8, options: { maxDepth: 2 } },
    { name: 'line too long', input: '+123456789\r\n', code: 'redis_reply_too_large', offset: 0, options: { maxLineBytes: 9 } },
    { name: 'line too long before its end arrives', input: '+1234567890', code: 'redis_reply_too_large', offset: 0, options: { maxLineBytes: 9 } },
    {
      name: 'enormous length stops at the limit, not at overflow',
      input: '$99999999999999999999999\r\n',
      code: 'redis_reply_too_large',
      offset: 0,
    },
  ];

  for (const c of cases) {
    test(`${c.name}: fails whole, byte by byte and split anywhere, and stays failed`, () => {
      const bytes = Buffer.from(c.input);
      const chunkings = [[bytes], [...bytes].map((byte) => Buffer.from([byte]))];
      for (let i = 1; i < bytes.length; i += 1) chunkings.push([bytes.subarray(0, i), bytes.subarray(i)]);
      for (const chunks of chunkings) {
        const decoder = createRespDecoder({ onReply: () => {} }, c.options);
        let thrown: unknown;
        try {
          for (const chunk of chunks) decoder.feed(chunk);
        } catch (error) {
          thrown = error;
        }
        assert.ok(thrown instanceof RedisProtocolError, `expected a RedisProtocolError, got ${String(thrown)}`);
        assert.equal(thrown.code, c.code);
        assert.equal(thrown.offset, c.offset);
        assert.throws(() => decoder.feed(Buffer.from('+OK\r\n')), (error) => error === thrown);
      }
    });
  }

  test('values at the limits are accepted, also byte by byte', () => {
    const options = { maxBulkBytes: 4, maxArrayLength: 2, maxDepth: 2, maxLineBytes: 9 };
    const input = Buffer.from('$4\r\nabcd\r\n*2\r\n*1\r\n:1\r\n+12345678\r\n');
    const expected: Plain[] = ['abcd', [[1], '12345678']];
    assert.deepEqual(decodeChunks([input], options), expected);
    assert.deepEqual(decodeChunks([...input].map((byte) => Buffer.from([byte])), options), expected);
  });

  test('an onReply that throws fails the decoder with redis_decoder_failed', () => {
    const decoder = createRespDecoder({
      onReply: () => {
        throw new Error('boom');
      },
    });
    assert.throws(() => decoder.feed(Buffer.from('+OK\r\n')), (error: unknown) => {
      return error instanceof RedisProtocolError && error.code === 'redis_decoder_failed';
    });
  });

  test('limits must be positive integers', () => {
    assert.throws(() => createRespDecoder({ onReply: () => {} }, { maxDepth: 0 }), RangeError);
    assert.throws(() => createRespDecoder({ onReply: () => {} }, { maxBulkBytes: 1.5 }), RangeError);
  });
});

describe('RESP encoder', () => {
  test('a command is an array of bulk strings', () => {
    assert.equal(encodeCommand(['SET', 'k', 'v']).toString('latin1'), '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n');
  });

  test('numbers are sent as their decimal text', () => {
    assert.equal(
      encodeCommand(['INCRBY', 'k', -12, 1.5, 60000]).toString('latin1'),
      '*5\r\n$6\r\nINCRBY\r\n$1\r\nk\r\n$3\r\n-12\r\n$3\r\n1.5\r\n$5\r\n60000\r\n',
    );
  });

  test('string lengths are UTF-8 byte counts', () => {
    assert.deepEqual(
      encodeCommand(['SET', 'é', '😀']),
      Buffer.concat([Buffer.from('*3\r\n$3\r\nSET\r\n$2\r\n'), Buffer.from('é'), Buffer.from('\r\n$4\r\n'), Buffer.from('😀'), Buffer.from('\r\n')]),
    );
  });

  test('Buffers are copied byte for byte, CR, LF and NUL included', () => {
    const binary = Buffer.from([0x00, 0x0d, 0x0a, 0xff]);
    assert.deepEqual(
      encodeCommand(['SET', 'k', binary]),
      Buffer.concat([Buffer.from('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\n'), binary, Buffer.from('\r\n')]),
    );
  });

  test('an empty argument is an empty bulk string', () => {
    assert.equal(encodeCommand(['GET', '']).toString('latin1'), '*2\r\n$3\r\nGET\r\n$0\r\n\r\n');
  });

  test('a pipeline is the commands back to back in one buffer', () => {
    assert.deepEqual(
      encodeCommands([['PING'], ['INCR', 'n'], ['GET', Buffer.from('k')]]),
      Buffer.concat([encodeCommand(['PING']), encodeCommand(['INCR', 'n']), encodeCommand(['GET', 'k'])]),
    );
    assert.equal(encodeCommands([['PING'], ['PING']]).toString('latin1'), '*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n');
  });

  test('what the encoder writes the decoder reads back', () => {
    const args = ['EVALSHA', 'abc', '2', 'k1', 'k2', 'é😀', '', 'a\r\nb'];
    assert.deepEqual(decodeChunks([encodeCommand(args)]), [args]);
  });

  test('unencodable arguments are TypeErrors', () => {
    assert.throws(() => encodeCommand([]), TypeError);
    assert.throws(() => encodeCommand(['SET', 'k', Number.NaN]), TypeError);
    assert.throws(() => encodeCommand(['SET', 'k', Number.POSITIVE_INFINITY]), TypeError);
    assert.throws(() => encodeCommand(['SET', 'k', {} as unknown as string]), TypeError);
    assert.throws(() => encodeCommand(['SET', 'k', null as unknown as string]), TypeError);
  });
});
