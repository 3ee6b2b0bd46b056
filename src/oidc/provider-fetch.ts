// The gateway's requests to the OpenID provider (discovery, JWKS, token
// endpoint): built-in fetch with a deadline for the whole exchange and a cap
// on the answer's size, counted while it is read. Redirects are not followed:
// every URL comes from the configured issuer's discovery document.
export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body, or undefined when it was not JSON. */
  json: unknown;
}

export interface ProviderRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
}

export type ProviderFetch = (url: string, request: ProviderRequest) => Promise<ProviderAnswer>;

export class ProviderFetchError extends Error {
  override name = 'ProviderFetchError';
}

async function readBounded(body: ReadableStream<Uint8Array> | null, maxBytes: number, url: string): Promise<Buffer> {
  if (body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let length = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ProviderFetchError(`${url} answered more than ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, length);
}

export const fetchFromProvider: ProviderFetch = async (url, request) => {
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await fetch(url, {
      method: request.method ?? 'GET',
      headers: { accept: 'application/json', ...request.headers },
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal,
    });
    const bytes = await readBounded(response.body, request.maxBytes, url);
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  } catch (err) {
    if (err instanceof ProviderFetchError) throw err;
    if (signal.aborted) throw new ProviderFetchError(`${url} did not answer within ${request.timeoutMs} ms`);
    throw new ProviderFetchError(`${url} could not be reached: ${reachProblem(err)}`);
  }
};

/**
 * Why a request failed before any answer. Built-in fetch says only "fetch
 * failed"; its cause says why (connect ECONNREFUSED 127.0.0.1:8443, getaddrinfo
 * ENOTFOUND, a certificate the CA does not vouch for), which is what the
 * operator has to change. No request content is in either.
 */
export function reachProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  if (!(cause instanceof Error)) return message;
  const code = (cause as NodeJS.ErrnoException).code;
  const why = cause.message !== '' ? cause.message : typeof code === 'string' ? code : '';
  if (why === '') return message;
  const withCode = typeof code === 'string' && !why.includes(code) ? `${why} (${code})` : why;
  return `${message}: ${withCode.slice(0, 300)}`;
}
