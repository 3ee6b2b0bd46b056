import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createSseWriter, frame, SseWriteError, type SseWriteErrorCode, type SseWriter } from '../../src/sse/sse-writer.ts';
import { ownFunctionPaths } from '../support/own-functions.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

let server: Server;
let port = 0;
let handler: Handler = (_req, res) => {
  res.end();
};
/** Errors thrown by a handler, checked by the test that set it. */
let handlerErrors: unknown[] = [];

before(async () => {
  server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      handlerErrors.push(error);
      res.destroy();
    });
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

function request(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/' }, resolve).on('error', reject);
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function withCode(code: SseWriteErrorCode): (error: unknown) => boolean {
  return (error) => error instanceof SseWriteError && error.code === code;
}

/** Resolves when `promise` settles or after `ms`, telling which. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('frame', () => {
  const cases: Array<[string, string]> = [
    ['{"a":1}', 'data: {"a":1}\n\n'],
    ['', 'data: \n\n'],
    ['a\nb', 'data: a\ndata: b\n\n'],
    ['a\r\nb', 'data: a\ndata: b\n\n'],
    ['a\rb', 'data: a\ndata: b\n\n'],
    ['a\n\nb', 'data: a\ndata: \ndata: b\n\n'],
    ['a\r\r\nb', 'data: a\ndata: \ndata: b\n\n'],
    ['a\n', 'data: a\ndata: \n\n'],
    ['\r', 'data: \ndata: \n\n'],
    ['\r\n', 'data: \ndata: \n\n'],
    ['x\u2028y', 'data: x\u2028y\n\n'],
  ];
  for (const [payload, expected] of cases) {
    test(`data ${JSON.stringify(payload)}`, () => {
      assert.equal(frame('data: ', payload), expected);
    });
  }
  test('comment prefix', () => {
    assert.equal(frame(': ', 'ping\nagain'), ': ping\n: again\n\n');
  });
});

describe('createSseWriter on a real server', () => {
  test('headers and bytes on the wire', async () => {
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start({ 'x-request-id': 'req-1', 'Content-Type': 'text/plain', 'Cache-Control': 'max-age=60' });
      await sse.data('{"id":"c","object":"chat.completion.chunk"}');
      await sse.data('line one\nline two\r\nline three\rline four');
      await sse.data('[DONE]');
      sse.end();
    };
    const res = await request();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers['x-accel-buffering'], 'no');
    assert.equal(res.headers['x-request-id'], 'req-1');
    assert.equal(
      await readAll(res),
      'data: {"id":"c","object":"chat.completion.chunk"}\n\n' +
        'data: line one\ndata: line two\ndata: line three\ndata: line four\n\n' +
        'data: [DONE]\n\n',
    );
  });

  test('headers reach the client before the first event', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      await released;
      await sse.data('late');
      sse.end();
    };
    const res = await request();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    release();
    assert.equal(await readAll(res), 'data: late\n\n');
  });

  test('misuse is reported: data before start, start twice, data after end', async () => {
    const outcomes: string[] = [];
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      await sse.data('x').catch((error: SseWriteError) => outcomes.push(error.code));
      sse.start();
      try {
        sse.start();
      } catch (error) {
        outcomes.push((error as SseWriteError).code);
      }
      await sse.data('ok');
      sse.end();
      sse.end();
      await sse.data('y').catch((error: SseWriteError) => outcomes.push(error.code));
    };
    const res = await request();
    assert.equal(await readAll(res), 'data: ok\n\n');
    assert.deepEqual(outcomes, ['sse_not_started', 'sse_ended', 'sse_ended']);
  });

  test('makes one function per stream (its write callback); its steps are shared', async () => {
    let own: string[] = [];
    let shared = false;
    let second: unknown;
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      await sse.data('a');
      await sse.data('b');
      // The events leave at the end of the turn, through the write callback.
      await new Promise<void>((resolve) => setImmediate(resolve));
      own = ownFunctionPaths(sse, [res, res.socket]);
      shared = !Object.hasOwn(sse, 'data') && (Object.getPrototypeOf(sse) as SseWriter).data === sse.data;
      try {
        createSseWriter(res);
      } catch (error) {
        second = error;
      }
      sse.end();
    };
    const res = await request();
    assert.equal(await readAll(res), 'data: a\n\ndata: b\n\n');
    assert.deepEqual(own, ['writeCallback']);
    assert.equal(shared, true);
    assert.match(String(second), /already has an SSE writer/);
  });

  test('end() before start() leaves the response to the caller', async () => {
    handler = (_req, res) => {
      const sse = createSseWriter(res);
      sse.end();
      assert.equal(res.headersSent, false);
      res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
    };
    const res = await request();
    assert.equal(res.statusCode, 500);
    assert.equal(await readAll(res), '{}');
  });

  test('backpressure: data() waits for drain with a slow reader, and every byte arrives', async () => {
    const payload = 'x'.repeat(64 * 1024);
    const frames = 64; // 4 MiB in all, far above the socket buffers
    let drains = 0;
    let resolvedWhileFull = 0;
    let done: Promise<void> = Promise.resolve();
    handler = (_req, res) => {
      res.on('drain', () => drains++);
      done = (async () => {
        const sse = createSseWriter(res);
        sse.start();
        for (let i = 0; i < frames; i++) {
          await sse.data(payload);
          if (res.writableNeedDrain) resolvedWhileFull++;
        }
        sse.end();
      })();
    };
    const res = await request();
    res.pause();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const body = await readAll(res);
    await done;
    assert.equal(body.length, frames * (payload.length + 8));
    assert.equal(body.slice(0, 8), 'data: xx');
    assert.ok(drains > 0, 'the writer went through the drain path');
    assert.equal(resolvedWhileFull, 0);
  });

  test('a client leaving while data() waits for drain rejects promptly', async () => {
    const payload = 'y'.repeat(64 * 1024);
    let outcome: Promise<unknown> = Promise.resolve();
    let blocked: () => void = () => {};
    const isBlocked = new Promise<void>((resolve) => {
      blocked = resolve;
    });
    handler = (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      outcome = (async () => {
        for (let i = 0; i < 1000; i++) {
          const write = sse.data(payload);
          if (res.writableNeedDrain) blocked();
          await write;
        }
      })();
    };
    const res = await request();
    res.pause();
    await isBlocked;
    res.destroy();
    assert.equal(await settlesWithin(outcome, 2000), true, 'data() settled after the client left');
    await assert.rejects(outcome, withCode('sse_client_gone'));
  });

  test('end() while data() waits for drain rejects that data() with sse_ended', async () => {
    const payload = 'z'.repeat(64 * 1024);
    let outcome: Promise<unknown> = Promise.resolve();
    let ended: () => void = () => {};
    const hasEnded = new Promise<void>((resolve) => {
      ended = resolve;
    });
    handler = (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      outcome = (async () => {
        for (let i = 0; i < 1000; i++) {
          const write = sse.data(payload);
          if (res.writableNeedDrain) {
            // The waiter is registered: ending now must wake it (no 'drain' follows end()).
            sse.end();
            ended();
          }
          await write;
        }
      })();
      // It may reject before the client side is even set up: asserted below.
      outcome.catch(() => undefined);
    };
    const res = await request();
    res.pause();
    await hasEnded;
    assert.equal(await settlesWithin(outcome, 2000), true, 'data() settled when the stream ended');
    await assert.rejects(outcome, withCode('sse_ended'));
    res.destroy();
  });

  test('writing after the client left rejects at once with sse_client_gone', async () => {
    let result: Promise<unknown> = Promise.resolve();
    let handled: () => void = () => {};
    const wasHandled = new Promise<void>((resolve) => {
      handled = resolve;
    });
    handler = async (req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      await sse.data('first');
      await once(res, 'close');
      result = sse.data('second');
      handled();
      sse.end();
    };
    const res = await request();
    res.once('data', () => res.destroy());
    await wasHandled;
    await assert.rejects(result, withCode('sse_client_gone'));
  });

  test('a failed write is not swallowed: the next call rejects with it', async () => {
    const outcomes: unknown[] = [];
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      sse.start();
      await sse.data('one');
      // The turn's events leave at its end; then someone else ends the
      // response: the next write fails on the socket.
      await new Promise((resolve) => setImmediate(resolve));
      res.end();
      await sse.data('two').catch((error: unknown) => outcomes.push(error));
      await sse.data('three').catch((error: unknown) => outcomes.push(error));
      sse.end();
    };
    const res = await request();
    assert.equal(await readAll(res), 'data: one\n\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(outcomes.length, 2);
    const [first, second] = outcomes;
    assert.ok(first instanceof SseWriteError);
    assert.equal(first.code, 'sse_write_failed');
    assert.equal(second, first);
    assert.deepEqual(handlerErrors, []);
  });

  test('a writer created after the client left knows it at once', async () => {
    let outcome: Promise<unknown> = Promise.resolve();
    let handled: () => void = () => {};
    const wasHandled = new Promise<void>((resolve) => {
      handled = resolve;
    });
    handler = async (_req, res) => {
      await once(res, 'close');
      const sse = createSseWriter(res);
      sse.start();
      outcome = sse.data('x');
      sse.end();
      handled();
    };
    const req = get({ host: '127.0.0.1', port, path: '/' });
    req.on('error', () => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    req.destroy();
    await wasHandled;
    await assert.rejects(outcome, withCode('sse_client_gone'));
  });

  test('start() that throws leaves the writer unstarted', async () => {
    const outcomes: string[] = [];
    handler = async (_req, res) => {
      const sse = createSseWriter(res);
      try {
        sse.start({ 'x-bad': 'line\nbreak' });
      } catch (error) {
        outcomes.push((error as { code: string }).code);
      }
      await sse.data('x').catch((error: SseWriteError) => outcomes.push(error.code));
      sse.start();
      await sse.data('ok');
      sse.end();
    };
    const res = await request();
    assert.equal(await readAll(res), 'data: ok\n\n');
    assert.deepEqual(outcomes, ['ERR_INVALID_CHAR', 'sse_not_started']);
  });
});
