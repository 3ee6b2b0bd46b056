// The Anthropic adapter's exchange: the first-byte, idle, total and connect
// timeouts (its pings count as data) and the caller's abort. The timers run on
// a ManualScheduler, so each deadline is asserted exactly; the upstream sends
// its pings when the test says, not on a real clock.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { createAnthropicProvider, type AnthropicOptions } from '../../src/providers/anthropic.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import { collect } from '../support/collect.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import { fixtureJson, fixtureText } from '../fixtures/anthropic/fixtures.ts';
import { call, json, MESSAGE_END, MESSAGE_START, PING, providerFor, startEventStream, TEXT_BLOCK, useAnthropicUpstream } from './anthropic-fixtures.ts';
import { abortListeners, failure, rendered, silentTcpServer } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

const upstream = useAnthropicUpstream();
const provider = (options: Partial<AnthropicOptions> = {}): DrivenProvider => providerFor(upstream, options);

const timeout = (message: string): ReturnType<typeof rendered> => ({
  status: 504,
  body: { error: { message, type: 'server_error', param: null, code: 'upstream_timeout' } },
  headers: {},
});

/** An upstream that sends the stream's headers and MESSAGE_START, then writes what the test gives it. */
function heldStream(): { response(): ServerResponse } {
  let held: ServerResponse | undefined;
  upstream.handle = (_req, res) => {
    startEventStream(res);
    res.write(MESSAGE_START);
    held = res;
  };
  return {
    response() {
      if (held === undefined) throw new Error('no request yet');
      return held;
    },
  };
}

describe('timeouts', () => {
  test('no headers at firstByteTimeoutMs is 504, and the socket is closed', async () => {
    upstream.handle = () => {};
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const first = tracked(failure(provider({ firstByteTimeoutMs: 100, scheduler }).stream(call())[Symbol.asyncIterator]().next()));
    await arrival;
    await scheduler.advance(99);
    assert.equal(first.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(rendered(await first.promise), timeout('The upstream provider did not deliver response headers within 100 ms.'));
    await upstream.closed();
  });

  test('a stream that stalls between events for idleTimeoutMs is 504, after the chunks it had', async () => {
    heldStream();
    const scheduler = new ManualScheduler();
    const stream = provider({ idleTimeoutMs: 120, scheduler }).stream(call())[Symbol.asyncIterator]();
    assert.equal(((await stream.next()).value as ChatCompletionChunk).id, 'msg_x');
    const next = tracked(failure(stream.next()));
    await scheduler.advance(119);
    assert.equal(next.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(rendered(await next.promise), timeout('The upstream stream stalled: no data for 120 ms.'));
    await upstream.closed();
  });

  test('headers then no event at all within idleTimeoutMs is the same 504', async () => {
    upstream.handle = (_req, res) => startEventStream(res);
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const pending = tracked(failure(collect(provider({ idleTimeoutMs: 100, scheduler }).stream(call()))));
    await arrival;
    await eventually(() => scheduler.pending()[0] === 100, 'the idle timer, once the headers came');
    await scheduler.advance(99);
    assert.equal(pending.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(rendered(await pending.promise), timeout('The upstream stream stalled: no data for 100 ms.'));
    await upstream.closed();
  });

  test('pings and keep-alive comments keep a slow stream alive: each restarts the idle clock', async () => {
    const held = heldStream();
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const chunks = tracked(collect(provider({ idleTimeoutMs: 100, scheduler }).stream(call())));
    await arrival;
    await eventually(() => scheduler.pending()[0] === 100, 'the idle timer');
    for (let i = 0; i < 6; i++) {
      await scheduler.advance(99);
      held.response().write(i % 2 === 0 ? PING : ': keep-alive\n\n');
      await eventually(() => scheduler.pending()[0] === 100, `the idle timer restarted by write ${i + 1}`);
    }
    held.response().end(TEXT_BLOCK + MESSAGE_END);
    assert.equal((await chunks.promise).length, 4);
    assert.equal(scheduler.elapsedMs, 6 * 99);
  });

  test('a slow consumer is backpressure, not an idle upstream', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(MESSAGE_START + TEXT_BLOCK + MESSAGE_END);
    };
    const scheduler = new ManualScheduler();
    const got: ChatCompletionChunk[] = [];
    for await (const chunk of provider({ idleTimeoutMs: 50, scheduler }).stream(call())) {
      got.push(chunk);
      await scheduler.advance(80);
    }
    assert.equal(got.length, 4);
  });

  test('the total timeout covers a stream that keeps pinging: 504 at timeoutMs', async () => {
    const held = heldStream();
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const pending = tracked(failure(collect(provider({ idleTimeoutMs: 100, timeoutMs: 250, scheduler }).stream(call()))));
    await arrival;
    // A ping every 50 ms: the idle clock never runs out, the total one does.
    for (let at = 50; at <= 200; at += 50) {
      await scheduler.advance(50);
      held.response().write(PING);
      // The one deadline timer: the idle deadline restarted (100 ms to go) or the total one (250 - at), whichever comes first.
      const restarted = String(Math.min(100, 250 - at));
      await eventually(() => scheduler.pending().join() === restarted, `the idle timer restarted at ${at} ms`);
    }
    await scheduler.advance(49);
    assert.equal(pending.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(rendered(await pending.promise), timeout('The upstream provider did not deliver the whole response within 250 ms.'));
    await upstream.closed();
  });

  test('a connection that never completes is 504 at connectTimeoutMs, well before the first-byte timeout', async () => {
    const silent = await silentTcpServer();
    try {
      const scheduler = new ManualScheduler();
      const p = drive(createAnthropicProvider({ baseUrl: `https://127.0.0.1:${silent.port}/v1`, connectTimeoutMs: 150, firstByteTimeoutMs: 5000, scheduler }));
      for (const [i, attempt] of [() => p.complete(call()), () => collect(p.stream(call({ stream: true })))].entries()) {
        const pending = tracked(failure(attempt()));
        await eventually(() => silent.sockets.length === i + 1, 'the TCP connection');
        await scheduler.advance(149);
        assert.equal(pending.settled, false);
        await scheduler.advance(1);
        assert.deepEqual(rendered(await pending.promise), timeout('The upstream provider did not accept a connection within 150 ms.'));
      }
      assert.equal(silent.sockets.length, 2);
    } finally {
      await silent.close();
    }
  });

  test('connectTimeoutMs is validated', () => {
    for (const connectTimeoutMs of [0, -1, 1.5, 2 ** 31]) {
      assert.throws(() => drive(createAnthropicProvider({ connectTimeoutMs })), RangeError);
    }
  });
});

describe('aborts', () => {
  test('call.signal aborting mid-stream aborts the upstream and throws a client abort', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    heldStream();
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call({}, controller.signal))) {
          got.push(chunk);
          controller.abort(reason);
        }
      })(),
    );
    assert.equal(got.length, 1);
    assert.equal(isClientAbort(error), true);
    assert.equal((error as Error).cause, reason);
    await upstream.closed();
  });

  test('call.signal aborting before the headers aborts the upstream (complete)', async () => {
    const controller = new AbortController();
    upstream.handle = () => {
      controller.abort();
    };
    assert.equal(isClientAbort(await failure(provider().complete(call({}, controller.signal)))), true);
    await upstream.closed();
  });

  test('an already aborted signal never reaches the upstream', async () => {
    const controller = new AbortController();
    controller.abort();
    const p = provider();
    assert.equal(isClientAbort(await failure(p.complete(call({}, controller.signal)))), true);
    assert.equal(isClientAbort(await failure(collect(p.stream(call({}, controller.signal))))), true);
    assert.equal(upstream.received.length, 0);
  });

  test('no timers or abort listeners are left behind', async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const scheduler = new ManualScheduler();
    const p = provider({ timeoutMs: 60_000, firstByteTimeoutMs: 60_000, idleTimeoutMs: 60_000, scheduler });
    const leftBehind = (): unknown => ({ timers: scheduler.pending(), listeners: abortListeners(signal) });

    upstream.handle = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    await p.complete(call({}, signal));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    upstream.handle = (_req, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    await failure(p.complete(call({}, signal)));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-text-tool.sse'));
    };
    await collect(p.stream(call({}, signal)));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-error.sse'));
    };
    await failure(collect(p.stream(call({}, signal))));
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
    heldStream();
    for await (const chunk of p.stream(call({}, signal))) {
      assert.equal(chunk.id, 'msg_x');
      break;
    }
    await upstream.closed();
    assert.deepEqual(leftBehind(), { timers: [], listeners: 0 });
  });
});
