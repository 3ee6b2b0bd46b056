// Socket activation (sd_listen_fds(3)): systemd binds the listeners and
// passes them as file descriptors 3, 4, ... with
//   LISTEN_PID      the PID they are meant for (variables inherited by another
//                   process must be ignored),
//   LISTEN_FDS      how many descriptors, starting at SD_LISTEN_FDS_START = 3,
//   LISTEN_FDNAMES  their FileDescriptorName= values, colon-separated.
// The gateway knows two names: "api" and "admin" (deploy/portcullis.socket,
// deploy/portcullis-admin.socket).
//
// listenFdsFromEnv is the pure parser; claimListenFds also unsets the three
// variables, as sd_listen_fds(unset_environment=1) does, so that a child
// process (systemd-notify) never takes descriptors meant for the gateway as
// its own; listenOnFd turns a descriptor into a listening server.
import type { AddressInfo, Server } from 'node:net';

/** sd_listen_fds(3): "the first passed file descriptor is 3". */
const SD_LISTEN_FDS_START = 3;
const LISTENER_NAMES = ['api', 'admin'] as const;
export type ListenerName = (typeof LISTENER_NAMES)[number];
export type ListenFds = { [K in ListenerName]?: number };

/** Bounds the count parsed from LISTEN_FDS; the gateway uses at most two. */
const MAX_LISTEN_FDS = LISTENER_NAMES.length;

type SocketActivationErrorCode =
  | 'listen_pid_invalid'
  | 'listen_fds_invalid'
  | 'listen_fds_too_many'
  | 'listen_fdnames_count_mismatch'
  | 'listen_fdname_unknown'
  | 'listen_fdname_duplicate'
  | 'listen_fds_unnamed';

export class SocketActivationError extends Error {
  override name = 'SocketActivationError';
  readonly code: SocketActivationErrorCode;
  constructor(code: SocketActivationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

const DECIMAL = /^[0-9]{1,10}$/;

/**
 * The listeners systemd passed to process `pid`, by name. Empty when
 * LISTEN_PID is unset or names another process (not an error: the variables
 * were inherited), or when LISTEN_FDS is unset or 0. Throws
 * SocketActivationError for a malformed variable or a set of descriptors the
 * gateway cannot tell apart.
 *
 * A single descriptor without a name (LISTEN_FDNAMES unset, "unknown", or
 * systemd's default name, the socket unit's name "NAME.socket") is the API
 * listener. Two or more must be named api and admin.
 */
export function listenFdsFromEnv(env: NodeJS.ProcessEnv, pid: number): ListenFds {
  const listenPid = env['LISTEN_PID'];
  if (listenPid === undefined || listenPid === '') return {};
  if (!DECIMAL.test(listenPid) || Number(listenPid) === 0) {
    throw new SocketActivationError('listen_pid_invalid', `LISTEN_PID must be a process id, got '${shown(listenPid)}'`);
  }
  if (Number(listenPid) !== pid) return {};

  const listenFds = env['LISTEN_FDS'];
  if (listenFds === undefined || listenFds === '') return {};
  if (!DECIMAL.test(listenFds)) {
    throw new SocketActivationError('listen_fds_invalid', `LISTEN_FDS must be a count of file descriptors, got '${shown(listenFds)}'`);
  }
  const count = Number(listenFds);
  if (count === 0) return {};
  if (count > MAX_LISTEN_FDS) {
    throw new SocketActivationError(
      'listen_fds_too_many',
      `LISTEN_FDS is ${count}; the gateway takes at most ${MAX_LISTEN_FDS} listeners (FileDescriptorName=api and FileDescriptorName=admin)`,
    );
  }

  const namesValue = env['LISTEN_FDNAMES'];
  const names = namesValue === undefined ? null : namesValue.split(':');
  if (names !== null && names.length !== count) {
    throw new SocketActivationError(
      'listen_fdnames_count_mismatch',
      `LISTEN_FDNAMES names ${names.length} descriptor(s) ('${shown(namesValue ?? '')}') but LISTEN_FDS is ${count}`,
    );
  }
  if (count === 1 && (names === null || isUnnamed(names[0] as string))) return { api: SD_LISTEN_FDS_START };
  if (names === null) {
    throw new SocketActivationError('listen_fds_unnamed', `LISTEN_FDS is ${count} but LISTEN_FDNAMES is not set; name the sockets FileDescriptorName=api and FileDescriptorName=admin`);
  }

  const fds: ListenFds = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (!isListenerName(name)) {
      throw new SocketActivationError(
        'listen_fdname_unknown',
        `LISTEN_FDNAMES: '${shown(name)}' is not a listener name; use FileDescriptorName=api or FileDescriptorName=admin in the socket unit`,
      );
    }
    if (fds[name] !== undefined) {
      throw new SocketActivationError('listen_fdname_duplicate', `LISTEN_FDNAMES: '${name}' is given to more than one descriptor; the gateway takes one of each`);
    }
    fds[name] = SD_LISTEN_FDS_START + i;
  }
  return fds;
}

/**
 * listenFdsFromEnv, then unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES in
 * `env` (process.env by default), whatever the outcome, like
 * sd_listen_fds(1). This is the function `portcullis serve` calls once, at
 * start, before spawning anything.
 */
export function claimListenFds(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): ListenFds {
  try {
    return listenFdsFromEnv(env, pid);
  } finally {
    delete env['LISTEN_PID'];
    delete env['LISTEN_FDS'];
    delete env['LISTEN_FDNAMES'];
  }
}

/**
 * Starts `server` (an http.Server or net.Server) on an inherited listening
 * descriptor. Resolves with the bound address (a path for a Unix socket),
 * rejects when the descriptor is not a usable socket.
 */
export function listenOnFd(server: Server, fd: number): Promise<AddressInfo | string> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ fd }, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null) reject(new Error(`descriptor ${fd} has no address`));
      else resolve(address);
    });
  });
}

function isListenerName(name: string): name is ListenerName {
  return (LISTENER_NAMES as readonly string[]).includes(name);
}

function isUnnamed(name: string): boolean {
  return name === '' || name === 'unknown' || (name.endsWith('.socket') && !isListenerName(name));
}

/** Environment values end up in logs; keep them short and printable. */
function shown(value: string): string {
  const cut = value.length > 64 ? `${value.slice(0, 64)}...` : value;
  return cut.replace(/[\x00-\x1f\x7f]/g, '?');
}
