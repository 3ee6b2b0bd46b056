import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventStreamError, type EventStreamEvent } from '../../src/sse/event-stream-parser.ts';
import { readEventStream } from '../../src/sse/event-stream-reader.ts';

const encoder = new TextEncoder();

async function* chunksOf(...chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

async function collect(events: AsyncIterable<EventStreamEvent>): Promise<string[]> {
  const data: string[] = [];
  for await (const event of events) data.push(event.data);
  return data;
}

describe('readEventStream', () => {
  const text = '\ufeffdata: héllo 日本 😀\r\n\r\ndata: second\n\n';
  const bytes = encoder.encode(text);

  test('whole body', async () => {
    assert.deepEqual(await collect(readEventStream(chunksOf(bytes))), ['héllo 日本 😀', 'second']);
  });

  test('byte by byte: multi-byte characters and CRLF cut between chunks', async () => {
    const chunks = Array.from(bytes, (byte) => Uint8Array.of(byte));
    assert.deepEqual(await collect(readEventStream(chunksOf(...chunks))), ['héllo 日本 😀', 'second']);
  });

  test('split at every byte index', async () => {
    for (let i = 0; i <= bytes.length; i++) {
      const events = readEventStream(chunksOf(bytes.subarray(0, i), bytes.subarray(i)));
      assert.deepEqual(await collect(events), ['héllo 日本 😀', 'second'], `split at ${i}`);
    }
  });

  test('a fetch-style ReadableStream body', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 9));
        controller.enqueue(bytes.subarray(9));
        controller.close();
      },
    });
    assert.deepEqual(await collect(readEventStream(body)), ['héllo 日本 😀', 'second']);
  });

  test('invalid UTF-8 becomes U+FFFD, as the spec decode does', async () => {
    const body = chunksOf(encoder.encode('data: a'), Uint8Array.of(0xff), encoder.encode('b\n\n'));
    assert.deepEqual(await collect(readEventStream(body)), ['a\ufffdb']);
  });

  test('a body ending inside a character and an event yields only the complete events', async () => {
    const euro = encoder.encode('€'); // 3 bytes
    const body = chunksOf(encoder.encode('data: x\n\ndata: '), euro.subarray(0, 2));
    assert.deepEqual(await collect(readEventStream(body)), ['x']);
  });

  test('a body ending with CR CR dispatches its last event exactly once', async () => {
    const body = chunksOf(encoder.encode('data: a\n\ndata: b\r\r'));
    assert.deepEqual(await collect(readEventStream(body)), ['a', 'b']);
  });

  test('comments reach onComment', async () => {
    const comments: string[] = [];
    const events = readEventStream(chunksOf(encoder.encode(': ping\n\ndata: x\n\n')), {
      onComment: (comment) => comments.push(comment),
    });
    assert.deepEqual(await collect(events), ['x']);
    assert.deepEqual(comments, ['ping']);
  });

  test('event type and id are passed through', async () => {
    const events: EventStreamEvent[] = [];
    for await (const event of readEventStream(chunksOf(encoder.encode('event: e\nid: 4\ndata: x\n\n')))) events.push(event);
    assert.deepEqual(events, [{ data: 'x', event: 'e', id: '4' }]);
  });

  test('an event over maxEventBytes throws sse_event_too_large', async () => {
    const body = chunksOf(encoder.encode('data: '), encoder.encode('x'.repeat(100)), encoder.encode('\n\n'));
    await assert.rejects(
      collect(readEventStream(body, { maxEventBytes: 50 })),
      (error) => error instanceof EventStreamError && error.code === 'sse_event_too_large',
    );
  });

  test('leaving the loop early cancels the body', async () => {
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
    for await (const event of readEventStream(body)) {
      if (event.data === '3') break;
    }
    assert.equal(cancelled, undefined);
    assert.ok(pulls < 10);
  });

  test('an error from the body propagates', async () => {
    const failure = new Error('socket reset');
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield encoder.encode('data: a\n\n');
      throw failure;
    }
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const event of readEventStream(failing())) seen.push(event.data);
    }, (error) => error === failure);
    assert.deepEqual(seen, ['a']);
  });
});
