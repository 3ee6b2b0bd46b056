// The fake OpenAI-compatible upstream of bench/gateway.ts, as fast as node:http
// allows: the request body is read and ignored, the answer is prebuilt bytes
// (./gateway-upstream-answers.ts). A stream's events are written one write each
// but all at once, without delays: the benchmark measures the relays, not a model.

import { Buffer } from 'node:buffer';
import http from 'node:http';
import { completionBody, HOLD_MODEL, streamFrames } from './gateway-upstream-answers.ts';
import { serveForBench } from './gateway-server-child.ts';

/** Whether a JSON request body asks for a stream, without parsing it: the
 * benchmark's clients and the gateway write `"stream":true` compactly. */
function wantsStream(body: Buffer): boolean {
  return body.includes('"stream":true');
}

const HOLD_MARK = Buffer.from(`"model":"${HOLD_MODEL}"`);
/** Held streams, finished on the parent's release. */
const held = new Set<http.ServerResponse>();

function createUpstreamServer(frames: readonly Buffer[]): http.Server {
  const completion = completionBody();
  const completionLength = String(completion.length);
  return http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      if (wantsStream(body)) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        if (body.includes(HOLD_MARK)) {
          res.write(frames[0]);
          held.add(res);
          res.on('close', () => held.delete(res));
          return;
        }
        for (let i = 0; i < frames.length; i++) res.write(frames[i]);
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': completionLength });
        res.end(completion);
      }
    });
  });
}

const frames = streamFrames();
serveForBench(createUpstreamServer(frames), 'bench/gateway-upstream');
process.on('message', (message: unknown) => {
  if ((message as { type?: unknown }).type !== 'release') return;
  for (const res of held) {
    for (let i = 1; i < frames.length; i++) res.write(frames[i]);
    res.end();
  }
  held.clear();
});
