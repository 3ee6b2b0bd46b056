// A tiny OTLP/HTTP traces receiver on 127.0.0.1 port 0: keeps each export
// request (path, headers, parsed JSON body) and answers with the next status
// the test queued (200 with an empty ExportTraceServiceResponse by default).
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedExport {
  path: string;
  headers: IncomingHttpHeaders;
  text: string;
  body: OtlpRequest;
}

/** The parts of ExportTraceServiceRequest the tests read (OTLP JSON). */
export interface OtlpRequest {
  resourceSpans: Array<{
    resource: { attributes: OtlpKeyValue[] };
    scopeSpans: Array<{ scope: { name: string; version?: string }; spans: OtlpSpan[] }>;
  }>;
}
export interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  events: Array<{ name: string; timeUnixNano: string; attributes: OtlpKeyValue[] }>;
  status: { code: number; message?: string };
  flags: number;
}

export interface OtlpReceiver {
  url: string;
  exports: ReceivedExport[];
  /** Statuses to answer the next requests with, in order (then 200). */
  answers: Array<{ status: number; headers?: Record<string, string>; body?: string }>;
  /** All spans received so far. */
  spans(): OtlpSpan[];
  /** Resolves once at least `count` spans arrived. */
  waitForSpans(count: number): Promise<OtlpSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const waiters: Array<() => void> = [];
  const receiver: OtlpReceiver = {
    url: '',
    exports: [],
    answers: [],
    spans: () => receiver.exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))),
    waitForSpans(count) {
      return new Promise((resolve) => {
        const check = (): void => {
          if (receiver.spans().length >= count) resolve(receiver.spans());
          else waiters.push(check);
        };
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const answer = receiver.answers.shift() ?? { status: 200, body: '{}' };
      const text = Buffer.concat(parts).toString('utf8');
      if (answer.status >= 200 && answer.status < 300) {
        receiver.exports.push({ path: req.url ?? '', headers: req.headers, text, body: JSON.parse(text) as OtlpRequest });
      }
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body ?? '{}');
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return receiver;
}

/** A span's attributes as a plain object (OTLP AnyValue unwrapped). */
export function attributesOf(span: Pick<OtlpSpan, 'attributes'>): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const { key, value } of span.attributes) out[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.doubleValue ?? value.boolValue;
  return out;
}
