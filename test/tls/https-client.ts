// An HTTPS client for the listener tests: one fresh connection per request
// (agent: false), the test CA trusted, an optional client certificate, and
// what the server's certificate was on that connection. A stream can be read
// as it arrives.
import { X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface TlsClientOptions {
  /** CA certificates the client trusts (the test PKI's). */
  ca: Buffer;
  /** A client certificate and its key. */
  cert?: Buffer;
  key?: Buffer;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  maxVersion?: 'TLSv1.2' | 'TLSv1.3';
}

export interface TlsAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json(): unknown;
  /** The server certificate's SHA-256 fingerprint on this connection ("AB:CD:..."). */
  serverSha256: string;
}

export interface TlsStream {
  /** Resolves once the first bytes of the body arrived. */
  firstBytes: Promise<void>;
  answer: Promise<TlsAnswer>;
}

/** A request on a connection of its own; rejects with the client's error when the handshake or connection fails. */
export function tlsRequest(url: string, options: TlsClientOptions): Promise<TlsAnswer> {
  return tlsStream(url, options).answer;
}

/** As tlsRequest, with a promise for the body's first bytes. */
export function tlsStream(url: string, options: TlsClientOptions): TlsStream {
  let markFirst: () => void = () => {};
  const firstBytes = new Promise<void>((resolve) => {
    markFirst = resolve;
  });
  const answer = new Promise<TlsAnswer>((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: options.method ?? 'GET',
        agent: false,
        ca: options.ca,
        ...(options.cert === undefined ? {} : { cert: options.cert }),
        ...(options.key === undefined ? {} : { key: options.key }),
        ...(options.maxVersion === undefined ? {} : { maxVersion: options.maxVersion }),
        headers: options.headers ?? {},
      },
      (res) => {
        const serverSha256 = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          parts.push(chunk);
          markFirst();
        });
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text), serverSha256 });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
  return { firstBytes, answer };
}

/** A PEM certificate's SHA-256 fingerprint as node prints it. */
export function sha256Of(cert: Buffer): string {
  return new X509Certificate(cert).fingerprint256;
}

/** What a request that could not complete failed with: its error's code. */
export async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as NodeJS.ErrnoException).code);
  }
  return 'no failure';
}
