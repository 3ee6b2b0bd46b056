// The child side of bench/gateway.ts: every server of the benchmark runs in its
// own process so that no two share an event loop (or a CPU budget we could not
// tell apart). A child announces its port over IPC, answers CPU-time queries
// (process.cpuUsage, microsecond resolution) and exits when the parent goes.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Child → parent: the server is up. */
export interface ListeningMessage {
  type: 'listening';
  port: number;
}

/** Parent → child: what CPU time have you used so far? */
export interface CpuQuery {
  type: 'cpu';
  id: number;
}

/** Child → parent: user + system CPU time since the child started, in µs. */
export interface CpuReply {
  type: 'cpu';
  id: number;
  micros: number;
}

export function isCpuQuery(message: unknown): message is CpuQuery {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'cpu';
}

/** Answers the parent's CPU queries and exits with it. Throws when not started
 * with an IPC channel (i.e. run directly instead of by bench/gateway.ts). */
export function attachToBenchParent(name: string): (message: ListeningMessage) => void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error(`${name} is a child of bench/gateway.ts; run that instead`);
  process.on('message', (message: unknown) => {
    if (!isCpuQuery(message)) return;
    const usage = process.cpuUsage();
    const reply: CpuReply = { type: 'cpu', id: message.id, micros: usage.user + usage.system };
    send(reply);
  });
  // The parent died or closed the channel: nobody will ever stop us otherwise.
  process.on('disconnect', () => process.exit(0));
  return (message) => send(message);
}

/** Listens on 127.0.0.1, port 0, and tells the parent the port. */
export function serveForBench(server: Server, name: string): void {
  const announce = attachToBenchParent(name);
  server.listen(0, '127.0.0.1', () => {
    announce({ type: 'listening', port: (server.address() as AddressInfo).port });
  });
}
