// The OpenAI-compatible adapter's exchange: unreachable upstreams, the
// first-byte, total, idle and connect timeouts, the caller's abort, and
// connection reuse. The timers run on a ManualScheduler, so each deadline is
// asserted exactly whatever the machine's load; one test keeps the system
// scheduler, where the real clock is the point. The same timeouts through
// both transports are in ../upstream/transport-table.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeChunk, normalizeCompletion } from '../../src/chat/completion-response.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import { collect } from '../support/collect.ts';
import { eventually } from '../support/eventually.ts';
import { startTestUpstream as startFakeUpstream } from '../../src/testing/fake-upstream-server.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import { refusedPort } from '../upstream/refused-port.ts';
import { API_KEY, call, chunkBodies, completionBody, FIRST_CHUNK, json, providerFor, startEventStream, streamText } from './openai-compatible-fixtures.ts';
import { abortListeners, assertNoSecrets, failure, rendered, tick, useFakeUpstream } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

const upstream = useFakeUpstream();
const provider = (options: Partial<OpenAICompatibleOptions> = {}): DrivenProvider => providerFor(upstream, options);
const allChunks = (): ChatCompletionChunk[] => chunkBodies().map((chunk) => normalizeChunk(chunk));

describe('network failures, timeouts and aborts', () => {
  test('connection refused is 502 upstream_unreachable', async () => {
    const port = await refusedPort();
    const p = drive(createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY }));
    for (const attempt of [p.complete(call()), collect(p.stream(call({ stream: true })))]) {
      const error = await failure(attempt);
      assert.deepEqual(rendered(error), {
        status: 502,
        body: { error: { message: 'The upstream provider could not be reached.', type: 'upstream_error', param: null, code: 'upstream_unreachable' } },
        headers: {},
      });
      assertNoSecrets(error, [`:${port}`, API_KEY]);
    }
  });

  test('on the real clock (the system scheduler): no headers within firstByteTimeoutMs is 504, and the socket is closed', async (t) => {
    // Its own upstream: the shared one keeps the other tests' connections.
    const silent = await startFakeUpstream(() => {
      // never answers
    });
    t.after(() => silent.close());
    const p = drive(createOpenAICompatibleProvider({ baseUrl: silent.baseUrl, apiKey: API_KEY, firstByteTimeoutMs: 150 }));
    const error = await failure(p.complete(call()));
    assert.deepEqual(rendered(error), {
      status: 504,
      body: { error: { message: 'The upstream provider did not deliver response headers within 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    // On a loaded machine the deadline can pass before the upstream has read the request: what holds
    // either way is that no connection to it stays open.
    await eventually(() => silent.sockets.length > 0 && silent.sockets.every((socket) => socket.destroyed), 'the upstream connections closed');
  });

  test('the first-byte timer stops once headers arrive; the total timeout still applies, at timeoutMs', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.write(FIRST_CHUNK());
      // then hangs
    };
    const scheduler = new ManualScheduler();
    const stream = provider({ firstByteTimeoutMs: 50, timeoutMs: 300, scheduler }).stream(call({ stream: true }))[Symbol.asyncIterator]();
    assert.equal(((await stream.next()).value as ChatCompletionChunk).id, 'chatcmpl-s1');
    const next = tracked(failure(stream.next()));
    // Past the first-byte deadline: nothing; one ms before the total deadline: nothing.
    await scheduler.advance(299);
    assert.equal(next.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(rendered(await next.promise), {
      status: 504,
      body: { error: { message: 'The upstream provider did not deliver the whole response within 300 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstream.closed();
  });

  test('call.signal aborting mid-stream aborts the upstream and throws a client abort', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.write(FIRST_CHUNK());
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call({ stream: true }, controller.signal))) {
          got.push(chunk);
          controller.abort(reason);
        }
      })(),
    );
    assert.equal(got.length, 1);
    assert.equal(isClientAbort(error), true);
    assert.equal((error as Error).cause, reason);
    assert.equal(error instanceof ApiError, false);
    await upstream.closed();
  });

  test('call.signal aborting before the headers aborts the upstream', async () => {
    const controller = new AbortController();
    upstream.handle = () => {
      controller.abort();
    };
    const error = await failure(provider().complete(call({}, controller.signal)));
    assert.equal(isClientAbort(error), true);
    await upstream.closed();
  });

  test('an already aborted signal never reaches the upstream', async () => {
    const controller = new AbortController();
    controller.abort();
    const p = provider();
    assert.equal(isClientAbort(await failure(p.complete(call({}, controller.signal)))), true);
    assert.equal(isClientAbort(await failure(collect(p.stream(call({ stream: true }, controller.signal))))), true);
    assert.equal(upstream.received.length, 0);
  });

  test('no timers or abort listeners are left behind, every timeout configured', async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const scheduler = new ManualScheduler();
    const p = provider({ connectTimeoutMs: 60_000, idleTimeoutMs: 60_000, firstByteTimeoutMs: 60_000, timeoutMs: 60_000, scheduler });
    const leftBehind = (): unknown => ({ timers: scheduler.pending(), listeners: abortListeners(signal) });

    upstream.handle = (_req, res) => json(res, 200, completionBody());
    await p.complete(call({}, signal));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    upstream.handle = (_req, res) => json(res, 500, {});
    await failure(p.complete(call({}, signal)));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(streamText());
    };
    await collect(p.stream(call({ stream: true }, signal)));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.write(FIRST_CHUNK());
    };
    for await (const chunk of p.stream(call({ stream: true }, signal))) {
      assert.equal(chunk.id, 'chatcmpl-s1');
      break;
    }
    await upstream.closed();
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
  });
});

describe('idle timeout on streams', () => {
  test('headers then silence: the idle timer starts with the body and fires at idleTimeoutMs', async () => {
    upstream.handle = (_req, res) => startEventStream(res);
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const pending = tracked(failure(collect(provider({ idleTimeoutMs: 100, firstByteTimeoutMs: 5000, scheduler }).stream(call({ stream: true })))));
    await arrival;
    await eventually(() => scheduler.pending()[0] === 100, 'the idle timer, once the headers came');
    await scheduler.advance(99);
    assert.equal(pending.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(rendered(await pending.promise), {
      status: 504,
      body: { error: { message: 'The upstream stream stalled: no data for 100 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstream.closed();
  });

  test('keep-alive comments keep a slow stream alive: each one restarts the idle clock', async () => {
    let writer: { write(text: string): void; end(text: string): void } | undefined;
    upstream.handle = (_req, res) => {
      startEventStream(res);
      writer = res;
    };
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const chunks = tracked(collect(provider({ idleTimeoutMs: 150, scheduler }).stream(call({ stream: true }))));
    await arrival;
    await eventually(() => scheduler.pending()[0] === 150, 'the idle timer');
    for (let i = 0; i < 6; i++) {
      await scheduler.advance(149);
      writer?.write(': keep-alive\n\n');
      await eventually(() => scheduler.pending()[0] === 150, `the idle timer restarted by keep-alive ${i + 1}`);
    }
    writer?.end(streamText());
    assert.deepEqual(await chunks.promise, allChunks());
    assert.equal(scheduler.elapsedMs, 6 * 149);
  });

  test('a slow consumer is not an idle upstream', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(streamText());
    };
    const scheduler = new ManualScheduler();
    const got: ChatCompletionChunk[] = [];
    for await (const chunk of provider({ idleTimeoutMs: 60, scheduler }).stream(call({ stream: true }))) {
      got.push(chunk);
      // Holding a chunk for longer than the idle timeout is backpressure, not a stall.
      if (got.length <= 2) await scheduler.advance(150);
    }
    assert.deepEqual(got, allChunks());
    assert.equal(scheduler.elapsedMs, 300);
  });

  test('idleTimeoutMs is validated', () => {
    for (const idleTimeoutMs of [0, -1, 1.5, 2 ** 31]) {
      assert.throws(() => drive(createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', idleTimeoutMs })), RangeError);
    }
  });
});

describe('connect timeout', () => {
  test('a slow first byte on a fresh or a pooled connection is not a connect timeout', async () => {
    // An upstream of its own, new to the pool: the first call connects, the
    // second goes over the first's socket. Each answer waits for the test.
    let answerNow: () => void = () => undefined;
    const slow = await startFakeUpstream((_req, res) => {
      answerNow = () => json(res, 200, completionBody());
    });
    try {
      const scheduler = new ManualScheduler();
      const p = drive(createOpenAICompatibleProvider({ baseUrl: slow.baseUrl, apiKey: API_KEY, connectTimeoutMs: 80, firstByteTimeoutMs: 5000, scheduler }));
      for (const n of [1, 2]) {
        const arrival = slow.arrived(n);
        const answered = p.complete(call());
        await arrival;
        // Connected: the one timer is at the first-byte deadline (before the total one); well past the connect timeout, still waiting.
        assert.deepEqual(scheduler.pending(), [5000]);
        await scheduler.advance(1000);
        answerNow();
        assert.deepEqual(await answered, normalizeCompletion(completionBody()));
        await tick();
      }
      assert.equal(slow.connections, 1, "the second call reused the first call's connection");
    } finally {
      await slow.close();
    }
  });

  test('connectTimeoutMs is validated', () => {
    for (const connectTimeoutMs of [0, -1, 1.5, 2 ** 31]) {
      assert.throws(() => drive(createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', connectTimeoutMs })), RangeError);
    }
  });
});

describe('connection reuse', () => {
  // fetch keeps connections alive by default; undici frees a connection for
  // the next request on the tick after the body ended, hence the tick between
  // calls. An upstream of its own: after a server closes pooled connections,
  // when the pool opens the next one differs between Node lines.
  test('sequential calls reuse one upstream socket (complete and stream)', async () => {
    const own = await startFakeUpstream((req, res) => {
      if (req.headers['accept'] === 'text/event-stream') {
        startEventStream(res);
        res.end(streamText());
      } else json(res, 200, completionBody());
    });
    try {
      const p = drive(createOpenAICompatibleProvider({ baseUrl: own.baseUrl, apiKey: API_KEY }));
      await p.complete(call());
      await tick();
      await p.complete(call());
      await tick();
      await collect(p.stream(call({ stream: true })));
      await tick();
      await collect(p.stream(call({ stream: true })));
      await tick();
      await p.complete(call());
      assert.equal(own.count, 5);
      assert.equal(own.connections, 1);
    } finally {
      await own.close();
    }
  });
});
