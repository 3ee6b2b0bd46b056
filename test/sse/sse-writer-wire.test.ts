// The SSE writer's bytes on the wire, HTTP chunk framing included, read with a
// raw socket. Node 22 and 24 keep writes to a corked ServerResponse in a buffer
// of their own that end() overtakes (the terminator went out before the last
// events) and whose full state never emits 'drain'; these tests pin the same
// bytes and the same backpressure on every Node line.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createSseWriter } from '../../src/sse/sse-writer.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

let server: Server;
let port = 0;
let handler: Handler = async (_req, res) => {
  res.end();
};

before(async () => {
  server = createServer((req, res) => {
    handler(req, res).catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

/** Sends one GET on a raw socket; the socket, not yet read. */
async function rawGet(): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  return socket;
}

/** Everything after the header block, as sent (chunk framing included). */
async function rawBody(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('latin1');
  const headerEnd = text.indexOf('\r\n\r\n');
  assert.ok(headerEnd > 0, 'a header block arrived');
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(text.slice(0, headerEnd), /\r\nTransfer-Encoding: chunked(\r\n|$)/i);
  return text.slice(headerEnd + 4);
}

/**
 * The payload of a chunked body: every chunk's data in order. Fails unless the
 * framing is well formed and the terminating zero-size chunk comes last.
 */
function unchunk(body: string): string {
  let offset = 0;
  let data = '';
  for (;;) {
    const lineEnd = body.indexOf('\r\n', offset);
    assert.ok(lineEnd > offset, `a chunk size line at ${offset}`);
    const size = Number.parseInt(body.slice(offset, lineEnd), 16);
    assert.ok(Number.isInteger(size), `a hex chunk size at ${offset}`);
    if (size === 0) {
      assert.equal(body.slice(lineEnd), '\r\n\r\n', 'nothing after the terminating chunk');
      return data;
    }
    data += body.slice(lineEnd + 2, lineEnd + 2 + size);
    assert.equal(body.slice(lineEnd + 2 + size, lineEnd + 4 + size), '\r\n');
    offset = lineEnd + 4 + size;
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Events over several turns, then end(): the shape of every streamed answer. */
const severalTurns: Handler = async (_req, res) => {
  const sse = createSseWriter(res);
  sse.start();
  await sse.data('one');
  await sse.data('two');
  await new Promise((resolve) => setTimeout(resolve, 5));
  await sse.data('three');
  await turn();
  await sse.data('four');
  await sse.data('[DONE]');
  sse.end();
};

describe('SSE writer bytes on the wire', () => {
  test('every event arrives, in order, before the terminating chunk', async () => {
    handler = severalTurns;
    assert.equal(
      unchunk(await rawBody(await rawGet())),
      'data: one\n\ndata: two\n\ndata: three\n\ndata: four\n\ndata: [DONE]\n\n',
    );
  });

  test('framing: one HTTP chunk per event-loop turn, the same on every Node line', async () => {
    handler = severalTurns;
    const body = await rawBody(await rawGet());
    assert.equal(
      body,
      '16\r\ndata: one\n\ndata: two\n\n\r\n' +
        'd\r\ndata: three\n\n\r\n' +
        '1a\r\ndata: four\n\ndata: [DONE]\n\n\r\n' +
        '0\r\n\r\n',
    );
  });

  test('start, events and end in one turn: one chunk, then the terminator', async () => {
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start({ 'x-request-id': 'r' });
      void sse.data('a');
      void sse.data('b');
      sse.end();
    };
    assert.equal(await rawBody(await rawGet()), '12\r\ndata: a\n\ndata: b\n\n\r\n0\r\n\r\n');
  });

  test('events past the pending bound leave at once, in order, before the terminator', async () => {
    const big = 'z'.repeat(20 * 1024);
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      await sse.data('small');
      await sse.data(big);
      await sse.data('tail');
      sse.end();
    };
    const first = 'data: small\n\ndata: ' + big + '\n\n';
    assert.equal(
      await rawBody(await rawGet()),
      first.length.toString(16) + '\r\n' + first + '\r\n' + 'c\r\ndata: tail\n\n\r\n0\r\n\r\n',
    );
  });

  test('a client that reads late gets every event and the terminator; data() waited for drain', async () => {
    const payload = 'x'.repeat(64 * 1024);
    const frames = 64;
    let drains = 0;
    let done: Promise<void> = Promise.resolve();
    handler = async (_req, res) => {
      res.on('drain', () => drains++);
      done = (async () => {
        const sse = createSseWriter(res);
        sse.start();
        for (let i = 0; i < frames; i++) {
          await sse.data(payload);
          // Nothing resolves while the socket still needs draining.
          assert.equal(res.writableNeedDrain, false);
        }
        await sse.data('[DONE]');
        sse.end();
      })();
    };
    const socket = await rawGet();
    socket.pause();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const body = await rawBody(socket);
    await done;
    assert.ok(drains > 0, 'the writer went through the drain path');
    assert.equal(unchunk(body), ('data: ' + payload + '\n\n').repeat(frames) + 'data: [DONE]\n\n');
  });
});

describe('SSE writer: end() while a write waits for drain', () => {
  test('the waiting write settles (sse_ended) even when the socket is then destroyed', async () => {
    let waiting: Promise<unknown> = Promise.resolve();
    let blocked: () => void = () => {};
    const isBlocked = new Promise<void>((resolve) => {
      blocked = resolve;
    });
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      for (let i = 0; i < 200 && !res.writableNeedDrain; i++) void sse.data('w'.repeat(64 * 1024)).catch(() => undefined);
      waiting = sse.data('last');
      blocked();
      // A shutdown ends the stream under the waiting writer, then the connection goes.
      sse.end();
      res.destroy();
    };
    const socket = await rawGet();
    socket.pause();
    await isBlocked;
    let settled = false;
    const outcome = waiting.then(
      () => 'resolved',
      (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'rejected'),
    );
    void outcome.then(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    assert.equal(settled, true, 'the waiting write settled');
    assert.equal(await outcome, 'sse_ended');
  });
});
