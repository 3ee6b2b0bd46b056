// Where the gateway's stdout goes during bench/gateway.ts: a pipe read by this
// process, which counts the bytes and drops them. The gateway pays for its
// logging (stdout on a pipe is a synchronous write on Linux) without the
// benchmark printing it, and without the load generator's event loop having to
// drain the pipe in time.

import { attachToBenchParent } from './gateway-server-child.ts';

/** Parent → sink: how many bytes so far? The reply is `{ type: 'log-bytes', id, bytes }`. */
export interface LogBytesReply {
  type: 'log-bytes';
  id: number;
  bytes: number;
}

let bytes = 0;
process.stdin.on('data', (chunk: Buffer) => {
  bytes += chunk.length;
});
const announce = attachToBenchParent('bench/gateway-log-sink');
process.on('message', (message: unknown) => {
  const query = message as { type?: unknown; id?: unknown };
  if (query.type !== 'log-bytes' || typeof query.id !== 'number') return;
  const reply: LogBytesReply = { type: 'log-bytes', id: query.id, bytes };
  process.send?.(reply);
});
announce({ type: 'listening', port: 0 });
