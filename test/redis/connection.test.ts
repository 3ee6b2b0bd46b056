// How the client opens a connection, the pure parts: the server name it
// checks and sends, and what goes first on every connection. The SNI name a
// real TLS server receives: connection.system.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { handshakeCommands, tlsServerName } from '../../src/redis/connection.ts';

test('the server name: the one given, else the host when it is a DNS name, never an IP address (RFC 6066 section 3)', () => {
  assert.equal(tlsServerName('redis.internal', {}), 'redis.internal');
  assert.equal(tlsServerName('redis.internal', { servername: 'redis.example' }), 'redis.example');
  assert.equal(tlsServerName('10.0.0.5', {}), undefined);
  assert.equal(tlsServerName('::1', {}), undefined);
  assert.equal(tlsServerName('10.0.0.5', { servername: 'redis.internal' }), 'redis.internal');
});

test('the connect handshake: AUTH, SELECT; over TLS a PING when neither is needed', () => {
  assert.deepEqual(handshakeCommands(undefined, undefined, 0, false), []);
  assert.deepEqual(handshakeCommands(undefined, undefined, 0, true), [['PING']]);
  assert.deepEqual(handshakeCommands(undefined, 'pw', 0, true), [['AUTH', 'pw']]);
  assert.deepEqual(handshakeCommands('app', 'pw', 3, false), [['AUTH', 'app', 'pw'], ['SELECT', 3]]);
  assert.deepEqual(handshakeCommands(undefined, undefined, 2, true), [['SELECT', 2]]);
});
