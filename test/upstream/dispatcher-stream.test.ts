import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import type { ChatProvider } from '../../src/upstream/provider.ts';
import { isClientAbort, upstreamStreamTruncatedError } from '../../src/upstream/upstream-errors.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import { dispatchStream, type AttemptRecord, type DispatchContext } from '../../src/upstream/dispatcher.ts';
import {
  addressOf,
  chunkEvent,
  errorStatus,
  hang,
  manualClock,
  rejection,
  startEventStream,
  startFakeUpstream,
  streamOf,
  target,
  type FakeUpstream,
  type UpstreamBehaviour,
} from './fake-upstream.ts';

const upstreams: FakeUpstream[] = [];
async function upstream(behaviour: UpstreamBehaviour): Promise<FakeUpstream> {
  const started = await startFakeUpstream(behaviour);
  upstreams.push(started);
  return started;
}
after(async () => {
  for (const started of upstreams) await started.close();
});

function context(records: AttemptRecord[] = [], extra: Partial<DispatchContext> = {}): DispatchContext {
  return {
    requestId: 'req_stream',
    signal: new AbortController().signal,
    random: () => 0.5,
    onAttempt: (record) => records.push(record),
    ...extra,
  };
}

function sequence(...steps: UpstreamBehaviour[]): UpstreamBehaviour {
  return (n, req, res) => (steps[Math.min(n, steps.length) - 1] as UpstreamBehaviour)(n, req, res);
}

function texts(chunks: ChatCompletionChunk[]): string[] {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '');
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

/** Reads until the stream throws; returns what arrived and the error. */
async function collectUntilError(stream: AsyncIterable<ChatCompletionChunk>): Promise<{ chunks: ChatCompletionChunk[]; error: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  throw new Error('expected the stream to fail');
}

const firstChunkOnly = (content: string): UpstreamBehaviour => (_n, _req, res) => {
  startEventStream(res);
  res.write(chunkEvent(content));
};

describe('dispatchStream before the first chunk', () => {
  test('fail then succeed: a 503 is retried, the stream comes whole', async () => {
    const a = await upstream(sequence(errorStatus(503), streamOf('Hel', 'lo')));
    const records: AttemptRecord[] = [];
    const { stream, target: chosen } = await dispatchStream([target('a', a.baseUrl)], context(records));
    assert.equal(chosen.id, 'a');
    assert.deepEqual(texts(await collect(stream)), ['Hel', 'lo', '']);
    assert.deepEqual(records.map((r) => `${r.outcome}:${r.status ?? ''}`), ['retry:502', 'ok:']);
    assert.equal(a.requests, 2);
  });

  test('a stream that ends before its first chunk is retried', async () => {
    const a = await upstream(
      sequence((_n, _req, res) => {
        startEventStream(res);
        res.end();
      }, streamOf('ok')),
    );
    const records: AttemptRecord[] = [];
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context(records));
    assert.deepEqual(texts(await collect(stream)), ['ok', '']);
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
    const a = await upstream((_n, _req, res) => {
      startEventStream(res);
      res.end('data: {"choices": [oops\n\ndata: [DONE]\n\n');
    });
    const b = await upstream(streamOf('from b'));
    const records: AttemptRecord[] = [];
    const { stream, target: chosen } = await dispatchStream([target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })], context(records));
    assert.equal(chosen.id, 'b');
    assert.deepEqual(texts(await collect(stream)), ['from b', '']);
    assert.deepEqual(records[0], {
      targetId: 'a',
      attempt: 1,
      outcome: 'fallback',
      status: 502,
      code: 'bad_upstream_response',
      cause: { kind: 'bad_response', detail: 'bad_upstream_response', address: addressOf(a) },
    });
    assert.equal(a.requests, 1);
  });

  test('malformed SSE on the only target is a 502 for the client', async () => {
    const a = await upstream((_n, _req, res) => {
      startEventStream(res);
      res.end('data: not json\n\n');
    });
    const error = await rejection(dispatchStream([target('a', a.baseUrl)], context()));
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream provider returned a response that is not valid JSON.', type: 'upstream_error', param: null, code: 'bad_upstream_response' },
    });
  });

  test('a hang before the first byte times out and falls back', async () => {
    const a = await upstream(hang);
    const b = await upstream(streamOf('b'));
    const { stream, target: chosen } = await dispatchStream(
      [target('a', a.baseUrl, { provider: { firstByteTimeoutMs: 100 } }), target('b', b.baseUrl, { priority: 1 })],
      context(),
    );
    assert.equal(chosen.id, 'b');
    assert.deepEqual(texts(await collect(stream)), ['b', '']);
    assert.equal(a.requests, 1);
    await a.closed(1);
  });

  test('headers then silence before any chunk: idle timeout, fallback', async () => {
    const a = await upstream((_n, _req, res) => startEventStream(res));
    const b = await upstream(streamOf('b'));
    const records: AttemptRecord[] = [];
    const { target: chosen, stream } = await dispatchStream(
      [target('a', a.baseUrl, { provider: { idleTimeoutMs: 100 } }), target('b', b.baseUrl, { priority: 1 })],
      context(records),
    );
    await collect(stream);
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
    const a = await upstream((_n, _req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n\n');
    });
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, clock.now);
    breaker.onFailure();
    clock.advance(10);
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    assert.equal(breaker.state(), 'closed');
    assert.deepEqual(await collect(stream), []);
  });
});

describe('dispatchStream after the first chunk', () => {
  test('a stall mid-stream is an idle timeout for the caller, never retried; the breaker counts it', async () => {
    const a = await upstream(firstChunkOnly('only this'));
    const b = await upstream(streamOf('never'));
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const { stream, target: chosen } = await dispatchStream(
      [target('a', a.baseUrl, { breaker, provider: { idleTimeoutMs: 150 } }), target('b', b.baseUrl, { priority: 1 })],
      context(),
    );
    assert.equal(chosen.id, 'a');
    const started = performance.now();
    const { chunks, error } = await collectUntilError(stream);
    assert.ok(performance.now() - started < 1500);
    assert.deepEqual(texts(chunks), ['only this']);
    assert.ok(error instanceof ApiError);
    assert.deepEqual(error.toBody(), {
      error: { message: 'The upstream stream stalled: no data for 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' },
    });
    assert.equal(a.requests, 1);
    assert.equal(b.requests, 0);
    assert.equal(breaker.state(), 'open');
    await a.closed(1);
  });

  test('a cut after the first chunk reaches the caller unchanged', async () => {
    const a = await upstream(async (_n, req, res) => {
      startEventStream(res);
      res.write(chunkEvent('partial'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      req.socket.destroy();
    });
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context());
    const { chunks, error } = await collectUntilError(stream);
    assert.deepEqual(texts(chunks), ['partial']);
    assert.equal((error as ApiError).code, 'upstream_stream_truncated');
    assert.equal(a.requests, 1);
  });

  test('the breaker learns success only when the stream completes', async () => {
    let finish: () => void = () => undefined;
    const a = await upstream(async (_n, _req, res) => {
      startEventStream(res);
      res.write(chunkEvent('one'));
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      res.end(`${chunkEvent('', 'stop')}data: [DONE]\n\n`);
    });
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, clock.now);
    breaker.onFailure();
    clock.advance(10);
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    const iterator = stream[Symbol.asyncIterator]();
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
    const a = await upstream(firstChunkOnly('hi'));
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    for await (const chunk of stream) {
      assert.equal(chunk.choices[0]?.delta.content, 'hi');
      break;
    }
    await a.closed(1);
    assert.equal(breaker.state(), 'closed');
  });

  test('return() before the first next() still closes the upstream request', async () => {
    const a = await upstream(firstChunkOnly('hi'));
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context());
    const iterator = stream[Symbol.asyncIterator]();
    assert.deepEqual(await iterator.return?.(), { done: true, value: undefined });
    await a.closed(1);
    assert.deepEqual(await iterator.next(), { done: true, value: undefined });
  });

  test('a released half-open probe lets the next request probe', async () => {
    const a = await upstream(firstChunkOnly('hi'));
    const clock = manualClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, clock.now);
    breaker.onFailure();
    clock.advance(10);
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context());
    assert.equal(breaker.canAttempt(), false);
    await stream[Symbol.asyncIterator]().return?.();
    assert.equal(breaker.state(), 'half_open');
    assert.equal(breaker.canAttempt(), true);
  });

  test('an abort during the stream ends it with a client abort and closes the upstream socket', async () => {
    const a = await upstream(firstChunkOnly('hi'));
    const controller = new AbortController();
    const breaker = createCircuitBreaker({ failureThreshold: 1 });
    const { stream } = await dispatchStream([target('a', a.baseUrl, { breaker })], context([], { signal: controller.signal }));
    const chunks: ChatCompletionChunk[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) {
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

  test('an abort during the backoff before a stream retry', async () => {
    const a = await upstream(errorStatus(500));
    const controller = new AbortController();
    const pending = dispatchStream(
      [target('a', a.baseUrl, { retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 } })],
      context([], {
        signal: controller.signal,
        onAttempt(record) {
          if (record.outcome === 'retry') setTimeout(() => controller.abort(), 20);
        },
      }),
    );
    const started = performance.now();
    assert.equal(isClientAbort(await rejection(pending)), true);
    assert.ok(performance.now() - started < 1000);
    assert.equal(a.requests, 1);
  });
});

describe('dispatchStream with a provider that is not a generator', () => {
  test('a failing first next() is followed by return(), so the provider can free its request', async () => {
    let returned = 0;
    let calls = 0;
    const provider: ChatProvider = {
      complete: () => Promise.reject(new Error('unused')),
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => {
            calls++;
            return Promise.reject(upstreamStreamTruncatedError());
          },
          return: () => {
            returned++;
            return Promise.resolve({ done: true as const, value: undefined });
          },
        }),
      }),
    };
    const t = { ...target('iter', 'http://127.0.0.1:9/v1', { retry: { maxAttempts: 2 } }), provider };
    const error = await rejection(dispatchStream([t], context([], { sleep: async () => undefined })));
    assert.equal((error as ApiError).code, 'upstream_stream_truncated');
    assert.equal(calls, 2);
    assert.equal(returned, 2);
  });
});
