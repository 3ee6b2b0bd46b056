// A fetch over node:https with a private CA and a client certificate, to hand
// to an SDK (`new OpenAI({ fetch })`): the built-in fetch takes neither on
// every Node line. Each call is one request on a connection of its own; the
// body streams as it arrives; an abort destroys the request.
import https from 'node:https';
import { Readable } from 'node:stream';

export interface HttpsFetchOptions {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export interface HttpsFetch {
  fetch: typeof fetch;
  /** How many requests were sent (an SDK's retries included). */
  readonly calls: number;
}

export function httpsFetch(options: HttpsFetchOptions): HttpsFetch {
  let calls = 0;
  const send: typeof fetch = async (input, init) => {
    calls++;
    const request = new Request(input, init);
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(
        request.url,
        {
          method: request.method,
          headers: Object.fromEntries(request.headers),
          agent: false,
          ca: options.ca,
          ...(options.cert === undefined ? {} : { cert: options.cert }),
          ...(options.key === undefined ? {} : { key: options.key }),
        },
        (res) => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode ?? 0, headers }));
        },
      );
      const signal = request.signal;
      const onAbort = (): void => {
        req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal.removeEventListener('abort', onAbort));
      req.on('error', reject);
      req.end(body);
    });
  };
  return {
    fetch: send,
    get calls() {
      return calls;
    },
  };
}
