// The span queue between the request path and the collector: ended spans wait
// in a bounded queue and leave in batches, when a batch is full or the
// schedule delay passes, one export at a time. Nothing here ever blocks or
// fails a request: a full queue drops the span (counted), an export that
// fails after its retries drops its batch (counted). Retries: 429, 502, 503,
// 504 and no answer at all (OTLP/HTTP's retryable cases), after the
// collector's Retry-After or an exponential backoff, at most maxRetries times.
// Shutdown sends what is queued within a deadline and drops the rest.
import type { ExportAnswer } from './otlp-http.ts';
import type { SpanRecord, SpanSink } from './span.ts';

export const DropReason = {
  /** The queue held maxQueueSize spans. */
  QueueFull: 'queue_full',
  /** The export failed (a status not retried, or retries used up). */
  ExportFailed: 'export_failed',
  /** The collector accepted the batch but rejected these (partialSuccess). */
  Rejected: 'rejected',
  /** Still queued when the shutdown's deadline passed, or ended after it. */
  Shutdown: 'shutdown',
} as const;
export type DropReason = (typeof DropReason)[keyof typeof DropReason];

const RETRYABLE = new Set([0, 429, 502, 503, 504]);
const BACKOFF_BASE_MS = 1000;
/** No wait before a retry is longer, whatever Retry-After says. */
const MAX_RETRY_DELAY_MS = 30_000;

export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  /** One export request, start to answer. */
  timeoutMs: number;
  maxRetries: number;
}

export interface FailedExport {
  status: number;
  failure: string | undefined;
  spans: number;
}

/** `Body`: what one export sends (the OTLP JSON text, or the spans themselves for a host's exporter). */
interface BatchExporterOptions<Body> extends BatchSettings {
  post: (body: Body, timeoutMs: number) => Promise<ExportAnswer>;
  encode(spans: readonly SpanRecord[]): Body;
  onExported(count: number): void;
  onDropped(reason: DropReason, count: number): void;
  /** A batch given up on (for a rate-limited log line). */
  onFailed?(failure: FailedExport): void;
  /** [0, 1) for the backoff's jitter; default Math.random. */
  random?: () => number;
}

export interface BatchExporter extends SpanSink {
  /** Spans waiting now. */
  readonly queued: number;
  /** Exports what is queued within `deadlineMs`, drops what is left; later spans are dropped. */
  shutdown(deadlineMs: number): Promise<void>;
}

export function createBatchExporter<Body = string>(options: BatchExporterOptions<Body>): BatchExporter {
  const queue: SpanRecord[] = [];
  const random = options.random ?? Math.random;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  /** Set during shutdown: exports and retries stop at this performance.now(). */
  let deadline = Number.POSITIVE_INFINITY;

  const arm = (): void => {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      drain();
    }, options.scheduleDelayMs);
    // A queued span never keeps the process alive; shutdown flushes it.
    timer.unref();
  };

  /** Starts the export loop unless it runs; it exports until the queue is empty. */
  const drain = (): Promise<void> => {
    if (running !== undefined) return running;
    // Nothing to do: return before the loop starts. A loop that ended without
    // an await would clear `running` before the assignment below, which would
    // then keep a settled promise there and stop every later export.
    if (queue.length === 0 || performance.now() >= deadline) return Promise.resolve();
    running = (async () => {
      try {
        while (queue.length > 0 && performance.now() < deadline) {
          await exportBatch(queue.splice(0, options.maxExportBatchSize));
        }
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  async function exportBatch(batch: SpanRecord[]): Promise<void> {
    const body = options.encode(batch);
    let answer: ExportAnswer | undefined;
    for (let attempt = 0; attempt <= options.maxRetries; attempt++) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      answer = await options.post(body, Math.min(options.timeoutMs, left));
      if (answer.status >= 200 && answer.status <= 299) {
        if (answer.rejectedSpans > 0) options.onDropped(DropReason.Rejected, Math.min(answer.rejectedSpans, batch.length));
        const exported = batch.length - Math.min(answer.rejectedSpans, batch.length);
        if (exported > 0) options.onExported(exported);
        return;
      }
      if (!RETRYABLE.has(answer.status) || attempt === options.maxRetries) break;
      const backoff = BACKOFF_BASE_MS * 2 ** attempt * (0.5 + random() / 2);
      const delay = Math.min(answer.retryAfterMs ?? backoff, MAX_RETRY_DELAY_MS);
      if (performance.now() + delay >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
    const reason = closed && performance.now() >= deadline ? DropReason.Shutdown : DropReason.ExportFailed;
    options.onDropped(reason, batch.length);
    options.onFailed?.({ status: answer?.status ?? 0, failure: answer?.failure ?? (answer === undefined ? 'deadline' : undefined), spans: batch.length });
  }

  return {
    add(span) {
      if (closed) {
        options.onDropped(DropReason.Shutdown, 1);
        return;
      }
      if (queue.length >= options.maxQueueSize) {
        options.onDropped(DropReason.QueueFull, 1);
        return;
      }
      queue.push(span);
      if (queue.length >= options.maxExportBatchSize) void drain();
      else arm();
    },
    get queued() {
      return queue.length;
    },
    async shutdown(deadlineMs) {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      deadline = performance.now() + deadlineMs;
      let expire: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => {
        expire = setTimeout(resolve, deadlineMs);
      });
      try {
        // An export already running finishes its batch first, then the loop takes the rest.
        await Promise.race([(async () => {
          await running;
          await drain();
        })(), expired]);
      } finally {
        clearTimeout(expire);
      }
      if (queue.length > 0) options.onDropped(DropReason.Shutdown, queue.splice(0).length);
    },
  };
}
