import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { readBodyBounded, readErrorDetail } from '../../src/upstream/bounded-reads.ts';
import type { UpstreamResponse } from '../../src/upstream/transport.ts';
import { asUpstream, readEvents } from './event-stream-fixtures.ts';

function chunked(parts: string[], headers: Record<string, string> = {}): UpstreamResponse {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
  return asUpstream(new Response(body, { headers }));
}

describe('readBodyBounded', () => {
  test('a body up to the limit is read whole, a UTF-8 character split across chunks included', async () => {
    const euro = new TextEncoder().encode('€');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(euro.slice(0, 1));
        controller.enqueue(euro.slice(1));
        controller.close();
      },
    });
    assert.equal(await readBodyBounded(asUpstream(new Response(body)), 3), '€');
  });

  test('a declared or streamed length over the limit is a 502 bad_upstream_response', async () => {
    for (const response of [asUpstream(new Response('x', { headers: { 'content-length': '11' } })), chunked(['12345', '678901'])]) {
      await assert.rejects(readBodyBounded(response, 10), (error: unknown) => {
        assert.ok(error instanceof UpstreamError);
        assert.equal(error.status, 502);
        assert.equal(error.code, 'bad_upstream_response');
        assert.equal(error.message, "The upstream response exceeds the gateway's limit of 10 bytes.");
        return true;
      });
    }
  });
});

describe('readErrorDetail', () => {
  test("the upstream's message when the body has one; undefined for anything else, never a throw", async () => {
    assert.deepEqual(await readErrorDetail(asUpstream(new Response('{"error":{"message":"bad key","code":"invalid_api_key"}}'))), {
      message: 'bad key',
      param: null,
      code: 'invalid_api_key',
    });
    assert.equal(await readErrorDetail(asUpstream(new Response('not json'))), undefined);
    assert.equal(await readErrorDetail(asUpstream(new Response(''))), undefined);
    assert.equal(await readErrorDetail(asUpstream(new Response('x'.repeat(64 * 1024 + 1)))), undefined);
  });
});

describe('the stream read loop', () => {
  test('events across chunks; the last one without a blank line is dropped at the end', async () => {
    const reads = readEvents(chunked(['data: a\n', '\ndata: b\n\n', 'data: cut'], { 'content-type': 'text/event-stream' }), 1024);
    const data: string[] = [];
    while (!reads.ended) for (const event of await reads.next()) data.push(event.data);
    reads.close();
    assert.deepEqual(data, ['a', 'b']);
  });

  test('an answer that is not an event stream is refused', async () => {
    await assert.rejects(readEvents(chunked(['{}'], { 'content-type': 'application/json' }), 1024).next(), {
      message: 'The upstream provider did not answer with an event stream.',
    });
  });
});
