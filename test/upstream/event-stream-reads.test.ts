// The production event-stream reads (src/upstream/upstream-stream.ts): the
// UTF-8 decode and the parser over a fetch body, fed whole, byte by byte and
// split at every index.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import { asUpstream, eventStreamResponse, readAllEvents, readEvents } from './event-stream-fixtures.ts';

const encoder = new TextEncoder();

async function dataOf(chunks: readonly Uint8Array[], maxEventBytes?: number): Promise<string[]> {
  return (await readAllEvents(eventStreamResponse(chunks), maxEventBytes)).map((e) => e.data);
}

describe('the stream read loop (the exchange\'s)', () => {
  const text = '\ufeffdata: héllo 日本 😀\r\n\r\ndata: second\n\n';
  const bytes = encoder.encode(text);

  test('whole body', async () => {
    assert.deepEqual(await dataOf([bytes]), ['héllo 日本 😀', 'second']);
  });

  test('byte by byte: multi-byte characters and CRLF cut between chunks', async () => {
    assert.deepEqual(await dataOf(Array.from(bytes, (byte) => Uint8Array.of(byte))), ['héllo 日本 😀', 'second']);
  });

  test('split at every byte index', async () => {
    for (let i = 0; i <= bytes.length; i++) {
      assert.deepEqual(await dataOf([bytes.subarray(0, i), bytes.subarray(i)]), ['héllo 日本 😀', 'second'], `split at ${i}`);
    }
  });

  test('invalid UTF-8 becomes U+FFFD, as the spec decode does', async () => {
    assert.deepEqual(await dataOf([encoder.encode('data: a'), Uint8Array.of(0xff), encoder.encode('b\n\n')]), ['a\ufffdb']);
  });

  test('a body ending inside a character and an event yields only the complete events', async () => {
    const euro = encoder.encode('€'); // 3 bytes
    assert.deepEqual(await dataOf([encoder.encode('data: x\n\ndata: '), euro.subarray(0, 2)]), ['x']);
  });

  test('a body ending with CR CR dispatches its last event exactly once', async () => {
    assert.deepEqual(await dataOf([encoder.encode('data: a\n\ndata: b\r\r')]), ['a', 'b']);
  });

  test('event type and id are passed through; comments are not events', async () => {
    assert.deepEqual(await readAllEvents(eventStreamResponse([encoder.encode(': ping\n\nevent: e\nid: 4\ndata: x\n\n')])), [{ data: 'x', event: 'e', id: '4' }]);
  });

  test('an event over maxEventBytes is the upstream\'s 502, naming the limit', async () => {
    await assert.rejects(
      dataOf([encoder.encode('data: '), encoder.encode('x'.repeat(100)), encoder.encode('\n\n')], 50),
      (error) =>
        error instanceof ApiError &&
        error.code === 'bad_upstream_response' &&
        error.message === 'The upstream provider sent a stream event larger than the gateway accepts.' &&
        (error.cause as { code?: unknown } | undefined)?.code === 'sse_event_too_large',
    );
  });

  test('closing before the end cancels the body', async () => {
    let cancelled: unknown = 'not cancelled';
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        if (pulls > 100) throw new Error('runaway');
        controller.enqueue(encoder.encode(`data: ${pulls}\n\n`));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const reads = readEvents(asUpstream(new Response(body, { headers: { 'content-type': 'text/event-stream' } })), 1024);
    const seen: string[] = [];
    while (!seen.includes('3')) for (const event of await reads.next()) seen.push(event.data);
    reads.close();
    assert.equal(cancelled, undefined);
    assert.ok(pulls < 10);
  });

  test('an error from the body is a truncated stream, the error its cause', async () => {
    const failure = new Error('socket reset');
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) throw failure;
        sent = true;
        controller.enqueue(encoder.encode('data: a\n\n'));
      },
    });
    const reads = readEvents(asUpstream(new Response(body, { headers: { 'content-type': 'text/event-stream' } })), 1024);
    const seen: string[] = [];
    await assert.rejects(async () => {
      while (!reads.ended) for (const event of await reads.next()) seen.push(event.data);
    }, (error) => error instanceof ApiError && error.code === 'upstream_stream_truncated' && error.cause === failure);
    assert.deepEqual(seen, ['a']);
  });
});
