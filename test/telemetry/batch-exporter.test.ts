// The span queue and its exports (src/telemetry/batch-exporter.ts) with a
// scripted collector: batching, the bounded queue, retries and their bound,
// partial success, and the shutdown flush with its deadline.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBatchExporter, type BatchSettings, type DropReason } from '../../src/telemetry/batch-exporter.ts';
import type { ExportAnswer } from '../../src/telemetry/otlp-http.ts';
import { SpanKind, SpanStatusCode, type SpanRecord } from '../../src/telemetry/span.ts';

function span(i: number): SpanRecord {
  return {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: i.toString(16).padStart(16, '0'),
    parentSpanId: undefined,
    traceState: undefined,
    name: `s${i}`,
    kind: SpanKind.Internal,
    startNs: 1n,
    endNs: 2n,
    attributes: {},
    events: [],
    status: { code: SpanStatusCode.Unset, message: undefined },
    remoteParent: false,
    sampled: true,
  };
}

const ok: ExportAnswer = { status: 200, retryAfterMs: undefined, rejectedSpans: 0, failure: undefined };
const status = (n: number, retryAfterMs?: number): ExportAnswer => ({ status: n, retryAfterMs, rejectedSpans: 0, failure: undefined });

/** A collector answering from `script` (then 200); `posts` holds the span names of each request. */
function harness(settings: Partial<BatchSettings>, script: ExportAnswer[] = []) {
  const posts: string[][] = [];
  const timeouts: number[] = [];
  const exported: number[] = [];
  const dropped: Array<[DropReason, number]> = [];
  const failed: Array<{ status: number; spans: number }> = [];
  let wake: (() => void) | undefined;
  const exporter = createBatchExporter({
    maxQueueSize: 100,
    maxExportBatchSize: 10,
    scheduleDelayMs: 60_000,
    timeoutMs: 5000,
    maxRetries: 3,
    ...settings,
    random: () => 0,
    encode: (spans) => JSON.stringify(spans.map((s) => s.name)),
    post: async (body, timeoutMs) => {
      posts.push(JSON.parse(body) as string[]);
      timeouts.push(timeoutMs);
      wake?.();
      return script.shift() ?? ok;
    },
    onExported: (n) => exported.push(n),
    onDropped: (reason, n) => dropped.push([reason, n]),
    onFailed: (f) => failed.push({ status: f.status, spans: f.spans }),
  });
  // The exporter's timers are unref'd (they never hold a process open): while
  // a test waits on one, a ref'd interval keeps the event loop alive.
  const posted = (count: number): Promise<void> =>
    new Promise((resolve) => {
      const alive = setInterval(() => {}, 1000);
      const check = (): void => {
        if (posts.length < count) return;
        clearInterval(alive);
        resolve();
      };
      wake = check;
      check();
    });
  return { exporter, posts, timeouts, exported, dropped, failed, posted };
}

describe('batch exporter', () => {
  test('a full batch leaves at once; the rest waits for the schedule or the shutdown', async () => {
    const h = harness({ maxExportBatchSize: 3 });
    for (let i = 0; i < 4; i++) h.exporter.add(span(i));
    await h.posted(1);
    assert.deepEqual(h.posts, [['s0', 's1', 's2']]);
    assert.equal(h.exporter.queued, 1);
    await h.exporter.shutdown(1000);
    assert.deepEqual(h.posts, [['s0', 's1', 's2'], ['s3']]);
    assert.deepEqual(h.exported, [3, 1]);
    assert.deepEqual(h.dropped, []);
  });

  test('the schedule delay sends a batch that is not full', async () => {
    const h = harness({ scheduleDelayMs: 10 });
    h.exporter.add(span(0));
    h.exporter.add(span(1));
    await h.posted(1);
    assert.deepEqual(h.posts, [['s0', 's1']]);
    await h.exporter.shutdown(1000);
    assert.equal(h.posts.length, 1);
  });

  test('the schedule timer firing on an empty queue (a full batch already left) does not stop later exports', async () => {
    const h = harness({ maxExportBatchSize: 2, scheduleDelayMs: 10 });
    // s0 arms the schedule timer; s1 fills the batch, which leaves at once.
    h.exporter.add(span(0));
    h.exporter.add(span(1));
    assert.deepEqual(h.posts, [['s0', 's1']]);
    // The armed timer fires on the now empty queue (10 ms; 100 ms is a loose bound).
    await new Promise((resolve) => setTimeout(resolve, 100));
    h.exporter.add(span(2));
    h.exporter.add(span(3));
    assert.deepEqual(h.posts, [['s0', 's1'], ['s2', 's3']], 'a full batch still leaves at once');
    await h.exporter.shutdown(1000);
    assert.deepEqual(h.exported, [2, 2]);
  });

  test('a full queue drops new spans and counts them', async () => {
    const h = harness({ maxQueueSize: 5, maxExportBatchSize: 5 }, []);
    // The first five start an export; while it runs the queue refills and then overflows.
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = createBatchExporter({
      maxQueueSize: 5, maxExportBatchSize: 5, scheduleDelayMs: 60_000, timeoutMs: 1000, maxRetries: 0,
      encode: (spans) => String(spans.length),
      post: async (body) => {
        h.posts.push([body]);
        await blocked;
        return ok;
      },
      onExported: (n) => h.exported.push(n),
      onDropped: (reason, n) => h.dropped.push([reason, n]),
    });
    for (let i = 0; i < 12; i++) slow.add(span(i));
    assert.deepEqual(h.dropped, [['queue_full', 1], ['queue_full', 1]]);
    release();
    await slow.shutdown(1000);
    assert.deepEqual(h.posts, [['5'], ['5']]);
    assert.deepEqual(h.exported, [5, 5]);
  });

  test('429 and 503 are retried (Retry-After honoured) until the collector takes the batch', async () => {
    const h = harness({ maxExportBatchSize: 2 }, [status(503), status(429, 10)]);
    h.exporter.add(span(0));
    h.exporter.add(span(1));
    await h.exporter.shutdown(20_000);
    assert.equal(h.posts.length, 3);
    assert.deepEqual(h.exported, [2]);
    assert.deepEqual(h.dropped, []);
  });

  test('retries are bounded: after maxRetries the batch is dropped as export_failed', async () => {
    const h = harness({ maxExportBatchSize: 1, maxRetries: 2 }, [status(503, 1), status(503, 1), status(503, 1), status(503, 1)]);
    h.exporter.add(span(0));
    await h.exporter.shutdown(20_000);
    assert.equal(h.posts.length, 3);
    assert.deepEqual(h.dropped, [['export_failed', 1]]);
    assert.deepEqual(h.failed, [{ status: 503, spans: 1 }]);
    assert.deepEqual(h.exported, []);
  });

  test('a status that is not retryable (400) drops the batch after one request', async () => {
    const h = harness({ maxExportBatchSize: 2 }, [status(400)]);
    h.exporter.add(span(0));
    h.exporter.add(span(1));
    await h.exporter.shutdown(1000);
    assert.equal(h.posts.length, 1);
    assert.deepEqual(h.dropped, [['export_failed', 2]]);
  });

  test('no answer at all (status 0: refused, timeout) is retried', async () => {
    const h = harness({ maxExportBatchSize: 1, maxRetries: 1 }, [{ status: 0, retryAfterMs: 1, rejectedSpans: 0, failure: 'ECONNREFUSED' }]);
    h.exporter.add(span(0));
    await h.exporter.shutdown(20_000);
    assert.equal(h.posts.length, 2);
    assert.deepEqual(h.exported, [1]);
  });

  test('a partial success counts the rejected spans as dropped and the rest as exported', async () => {
    const h = harness({ maxExportBatchSize: 3 }, [{ ...ok, rejectedSpans: 2 }]);
    for (let i = 0; i < 3; i++) h.exporter.add(span(i));
    await h.exporter.shutdown(1000);
    assert.deepEqual(h.exported, [1]);
    assert.deepEqual(h.dropped, [['rejected', 2]]);
  });

  test('shutdown: a retry that would outlast the deadline is not waited for; later spans are dropped', async () => {
    const h = harness({ maxExportBatchSize: 2 }, [status(503, 30_000)]);
    h.exporter.add(span(0));
    // Not a full batch: the shutdown sends it.
    assert.equal(h.posts.length, 0);
    await h.exporter.shutdown(200);
    assert.equal(h.posts.length, 1);
    assert.ok(h.timeouts[0] !== undefined && h.timeouts[0] <= 200, 'the request itself is bounded by the deadline');
    assert.deepEqual(h.dropped, [['export_failed', 1]]);
    h.exporter.add(span(1));
    assert.deepEqual(h.dropped, [['export_failed', 1], ['shutdown', 1]]);
  });

  test('shutdown with a collector that never answers ends at its deadline and counts the spans left', async () => {
    const dropped: Array<[DropReason, number]> = [];
    const exporter = createBatchExporter({
      maxQueueSize: 100, maxExportBatchSize: 2, scheduleDelayMs: 60_000, timeoutMs: 60_000, maxRetries: 0,
      encode: () => '',
      post: () => new Promise<ExportAnswer>(() => {}),
      onExported: () => assert.fail('nothing is exported'),
      onDropped: (reason, n) => dropped.push([reason, n]),
    });
    for (let i = 0; i < 5; i++) exporter.add(span(i));
    await exporter.shutdown(100);
    // The first two are in the request that never ends; the three queued behind it are dropped at the deadline.
    assert.deepEqual(dropped, [['shutdown', 3]]);
  });
});
