// dispatchStream against fake upstreams: retries and fallbacks before the
// first chunk, a committed stream after it, the caller leaving. The timeouts
// and back-offs a test is about run on a ManualScheduler, asserted exactly.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import type { ChatProvider } from '../../src/upstream/provider.ts';
import { isClientAbort, upstreamStreamTruncatedError } from '../../src/upstream/upstream-errors.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import { dispatchStream, type AttemptRecord } from '../../src/upstream/dispatcher.ts';
import { collect } from '../support/collect.ts';
import { chunksOf } from '../support/drive-provider.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import type { UpstreamHandler } from '../../src/testing/fake-upstream.ts';
import {
  addressOf,
  backOff,
  chunkEvent,
  context,
  errorStatus,
  hang,
  rejection,
  sequence,
  startEventStream,
  streamOf,
  target,
  upstreamPool,
} from './dispatch-fixtures.ts';

const pool = upstreamPool();
after(() => pool.closeAll());

function texts(chunks: ChatCompletionChunk[]): string[] {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '');
}

const firstChunkOnly = (content: string): UpstreamHandler => (_req, res) => {
  startEventStream(res);
  res.write(chunkEvent(content));
};

describe('dispatchStream before the first chunk', () => {
  test('fail then succeed: a 503 is retried after the back-off, the stream comes whole', async () => {
    const a = await pool.start(sequence(errorStatus(503), streamOf('Hel', 'lo')));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const pending = dispatchStream([target('a', a.baseUrl, { scheduler })], context(records, { scheduler }));
    await backOff(scheduler, 2, a);
    const { stream, target: chosen } = await pending;
    assert.equal(chosen.id, 'a');
    assert.deepEqual(texts(await collect(chunksOf(stream))), ['Hel', 'lo', '']);
    assert.deepEqual(records.map((r) => `${r.outcome}:${r.status ?? ''}`), ['retry:502', 'ok:']);
    assert.equal(a.count, 2);
  });

  test('a stream that ends before its first chunk is retried', async () => {
    const a = await pool.start(
      sequence((_req, res) => {
        startEventStream(res);
        res.end();
      }, streamOf('ok')),
    );
    const records: AttemptRecord[] = [];
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context(records));
    assert.deepEqual(texts(await collect(chunksOf(stream))), ['ok', '']);
    assert.deepEqual(records[0], {
      targetId: 'a',
      attempt: 1,
      outcome: 'retry',
      status: 502,
      code: 'upstream_stream_truncated',
      delayMs: 2,
      cause: { kind: 'bad_response', detail: 'upstream_stream_truncated', address: addressOf(a) },
    });
  });

  test('malformed SSE (a data line that is not JSON) falls back to the next target', async () => {
    const a = await pool.start((_req, res) => {
      startEventStream(res);
      res.end('data: {"choices": [oops\n\ndata: [DONE]\n\n');
    });
    const b = await pool.start(streamOf('from b'));
    const records: AttemptRecord[] = [];
    const { stream, target: chosen } = await dispatchStream([target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })], context(records));
    assert.equal(chosen.id, 'b');
    assert.deepEqual(texts(await collect(chunksOf(stream))), ['from b', '']);
    assert.deepEqual(records[0], {
      targetId: 'a',
      attempt: 1,
      outcome: 'fallback',
      status: 502,
      code: 'bad_upstream_response',
      cause: { kind: 'bad_response', detail: 'bad_upstream_response', address: addressOf(a) },
    });
    assert.equal(a.count, 1);
  });

  test('malformed SSE on the only target is a 502 for the client', async () => {
    const a = await pool.start((_req, res) => {
      startEventStream(res);
      res.end('data: not json\n\n');
    });
    const error = await rejection(dispatchStream([target('a', a.baseUrl)], context()));
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream provider returned a response that is not valid JSON.', type: 'upstream_error', param: null, code: 'bad_upstream_response' },
    });
  });

  test('a hang before the first byte times out at firstByteTimeoutMs and falls back', async () => {
    const a = await pool.start(hang);
    const b = await pool.start(streamOf('b'));
    const scheduler = new ManualScheduler();
    const pending = dispatchStream(
      [target('a', a.baseUrl, { scheduler, provider: { firstByteTimeoutMs: 100 } }), target('b', b.baseUrl, { scheduler, priority: 1 })],
      context([], { scheduler }),
    );
    await a.arrived(1);
    await scheduler.advance(99);
    assert.equal(b.count, 0);
    await scheduler.advance(1);
    const { stream, target: chosen } = await pending;
    assert.equal(chosen.id, 'b');
    assert.deepEqual(texts(await collect(chunksOf(stream))), ['b', '']);
    assert.equal(a.count, 1);
    await a.closed(1);
  });

  test('headers then silence before any chunk: idle timeout at idleTimeoutMs, fallback', async () => {
    const a = await pool.start((_req, res) => startEventStream(res));
    const b = await pool.start(streamOf('b'));
    const scheduler = new ManualScheduler();
    const records: AttemptRecord[] = [];
    const pending = dispatchStream(
      [target('a', a.baseUrl, { scheduler, provider: { idleTimeoutMs: 100 } }), target('b', b.baseUrl, { scheduler, priority: 1 })],
      context(records, { scheduler }),
    );
    // The idle clock starts with the first read of the body, once the headers came.
    await eventually(() => scheduler.pending()[0] === 100, 'the idle timer');
    await scheduler.advance(99);
    assert.equal(b.count, 0);
    await scheduler.advance(1);
    const { target: chosen, stream } = await pending;
    assert.deepEqual(texts(await collect(chunksOf(stream))), ['b', '']);
    assert.equal(chosen.id, 'b');
    assert.deepEqual(records[0], {
      targetId: 'a',
      attempt: 1,
      outcome: 'fallback',
      status: 504,
      code: 'upstream_timeout',
      cause: { kind: 'timeout', detail: 'idle', address: addressOf(a) },
    });
  });

  test('an empty stream ([DONE] only) resolves and yields nothing; the breaker learns success', async () => {
    const a = await pool.start((_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n\n');
    });
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(10);
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    assert.equal(breaker.state(), 'closed');
    assert.deepEqual(await collect(chunksOf(stream)), []);
  });
});

describe('dispatchStream after the first chunk', () => {
  test('a stall mid-stream is an idle timeout for the caller, never retried; the breaker counts it', async () => {
    const a = await pool.start(firstChunkOnly('only this'));
    const b = await pool.start(streamOf('never'));
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1 }, scheduler.now);
    const { stream, target: chosen } = await dispatchStream(
      [target('a', a.baseUrl, { scheduler, breaker, provider: { idleTimeoutMs: 150 } }), target('b', b.baseUrl, { scheduler, priority: 1 })],
      context([], { scheduler }),
    );
    assert.equal(chosen.id, 'a');
    const iterator = chunksOf(stream);
    assert.deepEqual(texts([(await iterator.next()).value as ChatCompletionChunk]), ['only this']);
    const next = tracked(rejection(iterator.next()));
    await scheduler.advance(149);
    assert.equal(next.settled, false);
    await scheduler.advance(1);
    const error = await next.promise;
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream stream stalled: no data for 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' },
    });
    assert.equal(a.count, 1);
    assert.equal(b.count, 0);
    assert.equal(breaker.state(), 'open');
    await a.closed(1);
  });

  test('a cut after the first chunk reaches the caller unchanged', async () => {
    let cutNow: () => void = () => undefined;
    const cut = new Promise<void>((resolve) => {
      cutNow = resolve;
    });
    const a = await pool.start(async (req, res) => {
      startEventStream(res);
      res.write(chunkEvent('partial'));
      await cut;
      req.socket.destroy();
    });
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context());
    const iterator = chunksOf(stream);
    assert.deepEqual(texts([(await iterator.next()).value as ChatCompletionChunk]), ['partial']);
    cutNow();
    const error = await rejection(iterator.next());
    assert.equal((error as ApiError).code, 'upstream_stream_truncated');
    assert.equal(a.count, 1);
  });

  test('the breaker learns success only when the stream completes', async () => {
    let finish: () => void = () => undefined;
    const a = await pool.start(async (_req, res) => {
      startEventStream(res);
      res.write(chunkEvent('one'));
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      res.end(`${chunkEvent('', 'stop')}data: [DONE]\n\n`);
    });
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(10);
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    const iterator = chunksOf(stream);
    assert.deepEqual(texts([(await iterator.next()).value as ChatCompletionChunk]), ['one']);
    // The probe is still in flight: half-open, nobody else gets through.
    assert.equal(breaker.state(), 'half_open');
    assert.equal(breaker.canAttempt(), false);
    finish();
    assert.equal((await iterator.next()).done, false);
    assert.equal((await iterator.next()).done, true);
    assert.equal(breaker.state(), 'closed');
  });
});

describe('dispatchStream: the caller leaving', () => {
  test('return() mid-stream aborts the upstream request; no verdict for the breaker', async () => {
    const a = await pool.start(firstChunkOnly('hi'));
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    for await (const chunk of chunksOf(stream)) {
      assert.equal(chunk.choices[0]?.delta.content, 'hi');
      break;
    }
    await a.closed(1);
    assert.equal(breaker.state(), 'closed');
  });

  test('return() before the first next() still closes the upstream request', async () => {
    const a = await pool.start(firstChunkOnly('hi'));
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context());
    const iterator = chunksOf(stream);
    assert.deepEqual(await iterator.return?.(), { done: true, value: undefined });
    await a.closed(1);
    assert.deepEqual(await iterator.next(), { done: true, value: undefined });
  });

  test('a released half-open probe lets the next request probe', async () => {
    const a = await pool.start(firstChunkOnly('hi'));
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(10);
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    assert.equal(breaker.canAttempt(), false);
    await chunksOf(stream).return?.();
    assert.equal(breaker.state(), 'half_open');
    assert.equal(breaker.canAttempt(), true);
  });

  test('an abort during the stream ends it with a client abort and closes the upstream socket', async () => {
    const a = await pool.start(firstChunkOnly('hi'));
    const controller = new AbortController();
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context([], { signal: controller.signal }));
    const chunks: ChatCompletionChunk[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of chunksOf(stream)) {
          chunks.push(chunk);
          controller.abort(new Error('client left'));
        }
      })(),
    );
    assert.equal(chunks.length, 1);
    assert.equal(isClientAbort(error), true);
    await a.closed(1);
    assert.equal(breaker.state(), 'closed');
  });

  test('an abort during the back-off before a stream retry ends the wait at once', async () => {
    const a = await pool.start(errorStatus(500));
    const controller = new AbortController();
    const scheduler = new ManualScheduler();
    const pending = dispatchStream(
      [target('a', a.baseUrl, { scheduler, retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 } })],
      context([], { signal: controller.signal, scheduler }),
    );
    await eventually(() => scheduler.pending().join() === '5000', 'the back-off of 5000 ms');
    controller.abort();
    assert.equal(isClientAbort(await rejection(pending)), true);
    assert.equal(scheduler.elapsedMs, 0);
    assert.deepEqual(scheduler.pending(), []);
    assert.equal(a.count, 1);
  });
});

describe('dispatchStream with a local provider', () => {
  test('a failing first next() is followed by close(), so the provider can free its request', async () => {
    let closed = 0;
    let calls = 0;
    const provider: ChatProvider = {
      kind: 'local',
      complete: () => Promise.reject(new Error('unused')),
      open: () => ({
        next: () => {
          calls++;
          return Promise.reject(upstreamStreamTruncatedError());
        },
        close: () => {
          closed++;
        },
        commit: () => assert.fail('a failed stream is not committed'),
      }),
    };
    const t = { ...target('iter', 'http://127.0.0.1:9/v1', { retry: { maxAttempts: 2 } }), provider };
    // random 0 draws a back-off of 0: the retry follows at once.
    const error = await rejection(dispatchStream([t], context([], { random: () => 0 })));
    assert.equal((error as ApiError).code, 'upstream_stream_truncated');
    assert.equal(calls, 2);
    assert.equal(closed, 2);
  });
});
