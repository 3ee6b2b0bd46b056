// Where a listener binds: a socket passed by systemd, or host:port. Used by
// `portcullis serve` for both listeners, and by the tests that start a gateway.
import type { Server } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { listenOnFd } from './socket-activation.ts';

interface Listener {
  name: string;
  /** What to change when the address is taken. */
  settings: string;
}
export const API_LISTENER: Listener = { name: 'the API listener', settings: 'listen.port or --port' };
export const ADMIN_LISTENER: Listener = { name: 'the admin listener', settings: 'admin.port or --admin-port, or turn it off with --no-admin' };

/**
 * Listens on a socket passed by systemd when there is one, else on host:port;
 * resolves to the URL base. A taken or forbidden address is an error that
 * names the listener and the setting to change.
 */
export async function listenOn(server: Server, fd: number | undefined, port: number, host: string, listener: Listener): Promise<string> {
  const scheme = server instanceof https.Server ? 'https' : 'http';
  if (fd !== undefined) {
    const address = await listenOnFd(server, fd);
    return typeof address === 'string' ? `${scheme}+unix:${address}` : `${scheme}://${hostPart(address)}:${address.port}`;
  }
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (err.code === 'EADDRINUSE') {
        reject(new Error(`${listener.name}: ${where} is already in use by another process; set ${listener.settings} (0 picks a free port)`));
      } else if (err.code === 'EACCES') {
        reject(new Error(`${listener.name}: permission denied for ${where} (ports below 1024 need privileges); set ${listener.settings}`));
      } else if (err.code === 'EADDRNOTAVAIL') {
        reject(new Error(`${listener.name}: ${host} is not an address of this machine`));
      } else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return `${scheme}://${hostPart(server.address() as AddressInfo)}:${(server.address() as AddressInfo).port}`;
}

function hostPart(address: AddressInfo): string {
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}
