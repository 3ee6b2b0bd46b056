// The SNI name a real TLS server receives from the client's connections
// (certificates made with openssl, ../tls/test-pki.ts).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { createServer, type TLSSocket, type Server } from 'node:tls';
import { openSocket } from '../../src/redis/connection.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';

let pki: TestPki;
let server: Server;
let port = 0;
const seen: (string | false | null)[] = [];
before(async () => {
  pki = createTestPki();
  const pair = pki.server('sni', ['redis.test', 'localhost', '127.0.0.1']);
  server = createServer({ cert: pair.cert, key: pair.key }, (socket: TLSSocket) => {
    seen.push(socket.servername);
    socket.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
});
after(async () => {
  server.close();
  pki.cleanup();
});

/** Opens a socket and waits for the server's end, sent after it recorded the name. */
async function connectOnce(host: string, servername?: string): Promise<void> {
  let socket: Socket | undefined;
  await new Promise<void>((resolve, reject) => {
    socket = openSocket(host, port, { ca: pki.ca, servername }, () => socket?.once('end', resolve).resume());
    socket.once('error', reject);
  });
  socket?.destroy();
}

test('the SNI name the server receives', async () => {
  seen.length = 0;
  await connectOnce('localhost');
  await connectOnce('127.0.0.1');
  await connectOnce('127.0.0.1', 'redis.test');
  // socket.servername is false when the client sent no SNI.
  assert.deepEqual(seen, ['localhost', false, 'redis.test']);
});
