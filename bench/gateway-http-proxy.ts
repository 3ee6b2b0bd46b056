// The bare pass-through proxy on node:http that bench/gateway.ts measures the
// gateway against: http.request with a keep-alive Agent, the client's body
// piped up and the upstream's answer piped back. No auth, no parsing, no
// logging, no checks: the floor of any node:http-based gateway.
//
// Argument: the upstream origin, e.g. http://127.0.0.1:40000

import http from 'node:http';
import { serveForBench } from './gateway-server-child.ts';

const upstreamOrigin = process.argv[2];
if (upstreamOrigin === undefined) throw new Error('usage: gateway-http-proxy.js UPSTREAM_ORIGIN');
const upstream = new URL(upstreamOrigin);
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((req, res) => {
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
  if (req.headers['content-length'] !== undefined) headers['content-length'] = req.headers['content-length'];
  const upstreamReq = http.request(
    { host: upstream.hostname, port: upstream.port, method: 'POST', path: req.url, headers, agent },
    (upstreamRes) => {
      const out: http.OutgoingHttpHeaders = { 'content-type': upstreamRes.headers['content-type'] ?? 'application/json' };
      if (upstreamRes.headers['content-length'] !== undefined) out['content-length'] = upstreamRes.headers['content-length'];
      res.writeHead(upstreamRes.statusCode ?? 502, out);
      upstreamRes.pipe(res);
    },
  );
  upstreamReq.on('error', () => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
  });
  req.pipe(upstreamReq);
});
serveForBench(server, 'bench/gateway-http-proxy');
