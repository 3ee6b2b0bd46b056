// The fake OpenAI-compatible upstream of bench/gateway.ts, as fast as node:http
// allows: the request body is read and ignored, the answer is prebuilt bytes
// (./gateway-upstream-answers.ts). A stream's events are written one write each
// but all at once, without delays: the benchmark measures the relays, not a model.

import { Buffer } from 'node:buffer';
import http from 'node:http';
import { completionBody, streamFrames } from './gateway-upstream-answers.ts';
import { serveForBench } from './gateway-server-child.ts';

/** Whether a JSON request body asks for a stream, without parsing it: the
 * benchmark's clients and the gateway write `"stream":true` compactly. */
function wantsStream(body: Buffer): boolean {
  return body.includes('"stream":true');
}

function createUpstreamServer(): http.Server {
  const completion = completionBody();
  const completionLength = String(completion.length);
  const frames = streamFrames();
  return http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (wantsStream(Buffer.concat(parts))) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (let i = 0; i < frames.length; i++) res.write(frames[i]);
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': completionLength });
        res.end(completion);
      }
    });
  });
}

serveForBench(createUpstreamServer(), 'bench/gateway-upstream');
