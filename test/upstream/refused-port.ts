// A port on 127.0.0.1 where a connection is refused (ECONNREFUSED), for
// tests of "nothing listens there". Port 2 (compressnet: unused, and not one of
// the Fetch standard's "bad ports", which fetch refuses before connecting) is below the range port 0
// hands out, so no test server of this suite can come to listen on it while a
// test relies on it, as one can on a port just freed (the kernel hands a freed
// port to the next bind to port 0, in this file or another running beside it).
import net, { type AddressInfo } from 'node:net';

const WELL_KNOWN_CLOSED = 2;

export async function refusedPort(): Promise<number> {
  if (await isRefused(WELL_KNOWN_CLOSED)) return WELL_KNOWN_CLOSED;
  // Something listens on port 1 here: a freed ephemeral port, the racy way.
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function isRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
