// The proxy's answer to CONNECT, read as the tunnel reads it: the bytes so
// far, re-read as each chunk comes. Every fixture is fed whole, byte by byte
// and split at every index; a prefix is 'partial' until the block ends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_PROXY_HEADER_BYTES, readProxyAnswer, type ProxyAnswer } from '../../src/upstream/proxy-tunnel.ts';

const fixtures: { name: string; bytes: string; expect: ProxyAnswer }[] = [
  { name: '200 with CRLF', bytes: 'HTTP/1.1 200 Connection established\r\n\r\n', expect: { kind: 'done', status: 200, reason: 'Connection established', rest: Buffer.alloc(0) } },
  { name: 'HTTP/1.0 with headers', bytes: 'HTTP/1.0 200 OK\r\nProxy-agent: x\r\nVia: y\r\n\r\n', expect: { kind: 'done', status: 200, reason: 'OK', rest: Buffer.alloc(0) } },
  { name: 'bare LF line ends', bytes: 'HTTP/1.1 200 OK\nVia: y\n\n', expect: { kind: 'done', status: 200, reason: 'OK', rest: Buffer.alloc(0) } },
  { name: 'no reason phrase', bytes: 'HTTP/1.1 204\r\n\r\n', expect: { kind: 'done', status: 204, reason: '', rest: Buffer.alloc(0) } },
  { name: 'bytes after the block are the rest', bytes: 'HTTP/1.1 200 OK\r\n\r\n\x16\x03\x01é', expect: { kind: 'done', status: 200, reason: 'OK', rest: Buffer.from('\x16\x03\x01é', 'utf8') } },
  { name: 'LF block whose rest holds a CRLFCRLF', bytes: 'HTTP/1.1 200 OK\n\nA\r\n\r\nB', expect: { kind: 'done', status: 200, reason: 'OK', rest: Buffer.from('A\r\n\r\nB') } },
  { name: '407 with a body after the block', bytes: 'HTTP/1.0 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="x"\r\n\r\n<html>', expect: { kind: 'done', status: 407, reason: 'Proxy Authentication Required', rest: Buffer.from('<html>') } },
  { name: 'control characters dropped from the reason', bytes: 'HTTP/1.1 403 No\x1b[31m way\r\n\r\n', expect: { kind: 'done', status: 403, reason: 'No[31m way', rest: Buffer.alloc(0) } },
];

function feed(bytes: Buffer, splits: readonly number[]): ProxyAnswer {
  // The tunnel re-reads everything received so far after each chunk; the
  // first answer that is not 'partial' is the one it acts on.
  let end = 0;
  for (const split of [...splits, bytes.length]) {
    end = split;
    const answer = readProxyAnswer(bytes.subarray(0, end));
    if (answer.kind !== 'partial') return answer;
  }
  return { kind: 'partial' };
}

describe('readProxyAnswer', () => {
  for (const fixture of fixtures) {
    const bytes = Buffer.from(fixture.bytes, 'utf8');
    test(`${fixture.name}: whole, byte by byte, split at every index`, () => {
      assert.deepEqual(readProxyAnswer(bytes), fixture.expect);
      const blockEnd = bytes.length - (fixture.expect.kind === 'done' ? fixture.expect.rest.length : 0);
      for (let i = 1; i < blockEnd; i += 1) {
        assert.deepEqual(readProxyAnswer(bytes.subarray(0, i)), { kind: 'partial' }, `prefix of ${i} bytes`);
      }
      const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
      // Read byte by byte, the answer is found once the block ends: the rest is what came with that byte.
      const stepwise = feed(bytes, everyByte);
      assert.equal(stepwise.kind, 'done');
      if (stepwise.kind === 'done' && fixture.expect.kind === 'done') {
        assert.equal(stepwise.status, fixture.expect.status);
        assert.equal(stepwise.rest.length, 0);
      }
      for (let i = 1; i < bytes.length; i += 1) {
        const split = feed(bytes, [i]);
        assert.equal(split.kind, 'done', `split at ${i}`);
        if (split.kind === 'done' && fixture.expect.kind === 'done') assert.equal(split.status, fixture.expect.status, `split at ${i}`);
      }
    });
  }

  test('not HTTP: known from the first byte that differs', () => {
    assert.deepEqual(readProxyAnswer(Buffer.from('S')), { kind: 'bad', why: 'it does not start with "HTTP/"' });
    assert.deepEqual(readProxyAnswer(Buffer.from('HTTX')), { kind: 'bad', why: 'it does not start with "HTTP/"' });
    assert.deepEqual(readProxyAnswer(Buffer.from('HTT')), { kind: 'partial' });
  });

  test('a malformed status line', () => {
    for (const line of ['HTTP/2 200 OK', 'HTTP/1.1 20 OK', 'HTTP/1.1 2000 OK', 'HTTP/1.1  200 OK', 'HTTP/1.1 abc']) {
      assert.deepEqual(readProxyAnswer(Buffer.from(`${line}\r\n\r\n`)), { kind: 'bad', why: 'its status line is malformed' }, line);
    }
  });

  test('the header block is bounded', () => {
    const open = Buffer.from(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(MAX_PROXY_HEADER_BYTES)}`);
    assert.deepEqual(readProxyAnswer(open), { kind: 'bad', why: 'its header block exceeds 16384 bytes' });
    const justUnder = Buffer.from(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(MAX_PROXY_HEADER_BYTES - 40)}\r\n\r\n`);
    assert.equal(readProxyAnswer(justUnder).kind, 'done');
  });
});
