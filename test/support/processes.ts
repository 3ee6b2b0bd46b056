// What the tests that start real servers (redis-server, tinyproxy) share: a
// port free right now, for a program that cannot listen on port 0 and report
// it, and stopping a child politely, then by force after a grace.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

const STOP_GRACE_MS = 5000;

/** A port on 127.0.0.1 free when asked (another bind may take it after: retry on EADDRINUSE). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Sends `signal`, and SIGKILL if the child has not exited within the grace; resolves at its exit. */
export function terminate(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill(signal);
  });
}
