// Where a listener binds: a socket passed by systemd, or host:port. Used by
// the embedded gateway's listen() for its listeners, and by the tests that
// start a gateway. A failure carries what went wrong as properties
// (ListenFailure, src/api/gateway.ts) so a host can word it in its own terms.
import type { Server } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ListenFailure } from '../api/gateway.ts';
import { listenOnFd } from './socket-activation.ts';

export interface Listener {
  id: ListenFailure['listener'];
  name: string;
  /** What to change when the address is taken. */
  settings: string;
}
export const API_LISTENER: Listener = { id: 'api', name: 'the API listener', settings: 'listen.port or --port' };
export const ADMIN_LISTENER: Listener = { id: 'admin', name: 'the admin listener', settings: 'admin.port or --admin-port, or turn it off with --no-admin' };

const REASONS: Readonly<Record<string, ListenFailure['reason']>> = { EADDRINUSE: 'in_use', EACCES: 'forbidden', EADDRNOTAVAIL: 'not_local' };

/** The sentence for `failure`, naming `listener`'s settings. */
export function listenFailureMessage(listener: Listener, failure: Pick<ListenFailure, 'reason' | 'address' | 'host'>): string {
  switch (failure.reason) {
    case 'in_use':
      return `${listener.name}: ${failure.address} is already in use by another process; set ${listener.settings} (0 picks a free port)`;
    case 'forbidden':
      return `${listener.name}: permission denied for ${failure.address} (ports below 1024 need privileges); set ${listener.settings}`;
    case 'not_local':
      return `${listener.name}: ${failure.host} is not an address of this machine`;
  }
}

/** The ListenFailure properties of an error listenOn rejected with, or null for any other error. */
export function listenFailureOf(error: unknown): ListenFailure | null {
  if (!(error instanceof Error)) return null;
  const f = error as Error & Partial<ListenFailure>;
  if (f.listener === undefined || f.reason === undefined || f.address === undefined || f.host === undefined || f.port === undefined) return null;
  return { listener: f.listener, reason: f.reason, address: f.address, host: f.host, port: f.port };
}

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
      const reason = REASONS[err.code ?? ''];
      if (reason === undefined) {
        reject(err);
        return;
      }
      const failure: ListenFailure = { listener: listener.id, reason, address: `${host.includes(':') ? `[${host}]` : host}:${port}`, host, port };
      reject(Object.assign(new Error(listenFailureMessage(listener, failure), { cause: err }), failure));
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
