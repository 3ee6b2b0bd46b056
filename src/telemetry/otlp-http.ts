// One OTLP/HTTP POST over node:http or node:https (not the upstream transport:
// the collector is not an upstream, and needs none of its proxy or retry
// rules). Bounded: a timeout covers the whole exchange, and at most 64 KiB
// of the answer is read (OTLP answers are small: a partial-success note).
import http from 'node:http';
import https from 'node:https';

const MAX_ANSWER_BYTES = 64 * 1024;

export interface ExportAnswer {
  /** HTTP status; 0 when no answer came (refused, reset, DNS, timeout). */
  status: number;
  /** Retry-After in milliseconds when the collector sent one (seconds form only). */
  retryAfterMs: number | undefined;
  /** partialSuccess.rejectedSpans of a 2xx answer, 0 when none. */
  rejectedSpans: number;
  /** For the log when status is 0: an errno-style code or "timeout"; never a message. */
  failure: string | undefined;
}

export type ExportPost = (body: string, timeoutMs: number) => Promise<ExportAnswer>;

/** A poster for `endpoint` with `headers` (already resolved; never logged). */
export function createOtlpPost(endpoint: string, headers: Readonly<Record<string, string>>): ExportPost {
  const url = new URL(endpoint);
  const request = url.protocol === 'https:' ? https.request : http.request;
  return (body, timeoutMs) =>
    new Promise<ExportAnswer>((resolve) => {
      let settled = false;
      const finish = (answer: ExportAnswer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      };
      const failed = (failure: string): ExportAnswer => ({ status: 0, retryAfterMs: undefined, rejectedSpans: 0, failure });
      const req = request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      });
      const timer = setTimeout(() => {
        finish(failed('timeout'));
        req.destroy();
      }, timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => finish(failed(typeof err.code === 'string' ? err.code : 'error')));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (chunk: Buffer) => {
          length += chunk.length;
          if (length <= MAX_ANSWER_BYTES) chunks.push(chunk);
        });
        res.on('error', () => finish(failed('reset')));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          finish({
            status,
            retryAfterMs: retryAfterMs(res.headers['retry-after']),
            rejectedSpans: status >= 200 && status < 300 && length <= MAX_ANSWER_BYTES ? rejectedSpans(Buffer.concat(chunks).toString('utf8')) : 0,
            failure: undefined,
          });
        });
      });
      req.end(body);
    });
}

/** Retry-After as delay-seconds (the form collectors send); a date is ignored. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

/** ExportTraceServiceResponse.partialSuccess.rejectedSpans (an int64: number or string in JSON). */
function rejectedSpans(text: string): number {
  if (text === '') return 0;
  try {
    const answer = JSON.parse(text) as { partialSuccess?: { rejectedSpans?: unknown } } | null;
    const rejected = answer?.partialSuccess?.rejectedSpans;
    const n = typeof rejected === 'string' ? Number(rejected) : rejected;
    return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}
