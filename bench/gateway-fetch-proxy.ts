// The bare pass-through proxy on built-in fetch that bench/gateway.ts measures
// the gateway against: it reads the body, POSTs it upstream with fetch and
// writes back what comes, chunk by chunk as it arrives. No auth, no parsing, no
// logging, no checks: the floor of any fetch-based gateway.
//
// Argument: the upstream origin, e.g. http://127.0.0.1:40000

import { Buffer } from 'node:buffer';
import http from 'node:http';
import { once } from 'node:events';
import { serveForBench } from './gateway-server-child.ts';

const upstreamOrigin = process.argv[2];
if (upstreamOrigin === undefined) throw new Error('usage: gateway-fetch-proxy.js UPSTREAM_ORIGIN');

async function relay(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const upstream = await fetch(upstreamOrigin + (req.url ?? '/'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.concat(parts),
  });
  const headers: Record<string, string> = { 'content-type': upstream.headers.get('content-type') ?? 'application/json' };
  const length = upstream.headers.get('content-length');
  if (length !== null) headers['content-length'] = length;
  res.writeHead(upstream.status, headers);
  if (upstream.body !== null) {
    for await (const chunk of upstream.body) {
      if (!res.write(chunk)) await once(res, 'drain');
    }
  }
  res.end();
}

const server = http.createServer((req, res) => {
  relay(req, res).catch(() => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
  });
});
serveForBench(server, 'bench/gateway-fetch-proxy');
