// The client over TLS against a real redis-server started with --tls-port
// (../support/redis-server.ts), certificates from the test PKI
// (../tls/test-pki.ts). Where a test waits for the client's timers (the
// backoff between refused attempts, the connect timeout) they run on a
// ManualScheduler, moved by the test.
import assert from 'node:assert/strict';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import type { Logger, LogFields } from '../../src/log/logger.ts';
import { createRedisClient, type RedisClient, type RedisClientOptions } from '../../src/redis/client.ts';
import { RedisUnavailableError } from '../../src/redis/errors.ts';
import { parseRedisUrl } from '../../src/redis/redis-url.ts';
import { defineScript } from '../../src/redis/script.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { sharedRedis, startRedisServer, type RedisServerHandle, type RedisServerTls } from '../support/redis-server.ts';
import { createTestPki, type IssuedPair, type TestPki } from '../tls/test-pki.ts';
import { createStateRecorder } from './state-recorder.ts';

const FAST_RECONNECT = { baseDelayMs: 10, maxDelayMs: 50 };

interface LogLine {
  level: string;
  msg: string;
  fields: LogFields | undefined;
}

function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (msg: string, fields?: LogFields) => lines.push({ level, msg, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const clients: RedisClient[] = [];
/** A client closed after the file, its timers on a ManualScheduler of its own unless given one: none reconnects behind a test's back. */
function client(options: RedisClientOptions): RedisClient {
  const created = createRedisClient({ reconnect: FAST_RECONNECT, scheduler: new ManualScheduler(), random: () => 0, ...options });
  clients.push(created);
  return created;
}

async function rejection(promise: Promise<unknown>): Promise<RedisUnavailableError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RedisUnavailableError, `expected RedisUnavailableError, got ${String(error)}`);
    return error;
  }
  throw new Error('expected a rejection');
}

const attemptsFailed = (lines: LogLine[]): number => lines.filter((l) => l.msg === 'redis reconnect attempt failed').length;
const tlsErrors = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level === 'error');

/**
 * Moves `scheduler` to the backoff's end `count` times, each once the attempt
 * before has failed, and waits for each new attempt to fail too. The backoff
 * is the only timer pending then: the connect timer went with the attempt.
 */
async function failAttempts(scheduler: ManualScheduler, lines: LogLine[], count: number): Promise<void> {
  const before = attemptsFailed(lines);
  for (let i = 1; i <= count; i++) {
    assert.equal(scheduler.pending().length, 1, 'only the backoff is pending');
    await scheduler.next();
    await eventually(() => attemptsFailed(lines) === before + i, `reconnect attempt ${before + i} to fail`);
  }
}

let pki: TestPki;
let otherPki: TestPki;
let serverPair: IssuedPair;
let gatewayPair: IssuedPair;
let serverTls: RedisServerTls;
/** TLS, no client certificate asked. */
let redis: RedisServerHandle;
/** TLS with --tls-auth-clients yes. */
let mutual: RedisServerHandle;

before(async () => {
  pki = createTestPki();
  otherPki = createTestPki('Another CA');
  serverPair = pki.server('redis');
  gatewayPair = pki.client('gateway', 'portcullis-gateway');
  serverTls = { certFile: serverPair.certFile, keyFile: serverPair.keyFile, caFile: pki.caFile, authClients: 'no' };
  redis = await startRedisServer({ tls: serverTls });
  mutual = await startRedisServer({ tls: { ...serverTls, authClients: 'yes' } });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await redis.stop();
  await mutual.stop();
  pki.cleanup();
  otherPki.cleanup();
});

describe('rediss:// with the CA', () => {
  test('commands, 200 pipelined, a Lua script (EVAL after NOSCRIPT, then EVALSHA)', async () => {
    const recorder = createStateRecorder();
    const address = parseRedisUrl(redis.url);
    assert.equal(address.tls, true);
    const c = client({ ...address, tls: { ca: pki.ca }, onStateChange: recorder.onStateChange });
    assert.equal(await c.command(['SET', 'tls:k', 'v€']), 'OK');
    assert.equal(await c.command(['GET', 'tls:k']), 'v€');
    const increments = Array.from({ length: 200 }, () => c.command(['INCR', 'tls:n']));
    assert.deepEqual(await Promise.all(increments), Array.from({ length: 200 }, (_, i) => i + 1));
    const script = defineScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    await c.command(['SCRIPT', 'FLUSH']);
    assert.equal(await c.evalScript(script, ['tls:n'], [10]), 210);
    assert.equal(await c.evalScript(script, ['tls:n'], [1]), 211);
    assert.deepEqual(recorder.changes, ['connecting->ready']);
  });

  test('a host name is the server name by default; an IP address is checked against the IP entries', async () => {
    // The certificate names 127.0.0.1 and localhost; "localhost" is both the host and the SNI name.
    const byName = client({ host: 'localhost', port: redis.port, tls: { ca: pki.ca } });
    assert.equal(await byName.command(['PING']), 'PONG');
    const byIp = client({ host: '127.0.0.1', port: redis.port, tls: { ca: pki.ca } });
    assert.equal(await byIp.command(['PING']), 'PONG');
  });

  test('a connection lost to a restart comes back over TLS', async () => {
    const recorder = createStateRecorder();
    const { logger, lines } = recordingLogger();
    const scheduler = new ManualScheduler();
    const c = client({ ...parseRedisUrl(redis.url), tls: { ca: pki.ca }, logger, onStateChange: recorder.onStateChange, scheduler });
    assert.equal(await c.command(['SET', 'tls:restart', '1']), 'OK');
    await redis.restart();
    await recorder.reach('reconnecting');
    // The backoff (half of baseDelayMs, no jitter) and the client is back.
    assert.equal(await scheduler.next(), FAST_RECONNECT.baseDelayMs / 2);
    await recorder.reach('ready');
    assert.deepEqual(recorder.changes, ['connecting->ready', 'ready->reconnecting', 'reconnecting->ready']);
    // No persistence in tests: the restarted Redis is empty, and answers over TLS.
    assert.equal(await c.command(['GET', 'tls:restart']), null);
    assert.deepEqual(lines.filter((l) => l.level !== 'debug').map((l) => [l.level, l.msg]), [
      ['info', 'redis connected'],
      ['warn', 'redis connection lost'],
      ['info', 'redis reconnected'],
    ]);
  });
});

describe('refused', () => {
  test('an unknown CA (the server\'s chain is not issued by caFile, or Node\'s roots): the code and tls.caFile', async () => {
    for (const tls of [{ ca: otherPki.ca }, true] as const) {
      const { logger, lines } = recordingLogger();
      const c = client({ host: '127.0.0.1', port: redis.port, tls, logger });
      const error = await rejection(c.command(['PING']));
      assert.equal(error.reason, 'not_connected');
      assert.equal(error.message, `Redis at 127.0.0.1:${redis.port} is not connected (connecting; last error: TLS SELF_SIGNED_CERT_IN_CHAIN ` +
        `(self-signed certificate in certificate chain): set tls.caFile to the CA certificate that issued the Redis server's certificate).`);
      assert.deepEqual(tlsErrors(lines).map((l) => l.fields), [{
        redis: `127.0.0.1:${redis.port}`, code: 'SELF_SIGNED_CERT_IN_CHAIN', error: 'self-signed certificate in certificate chain',
        setting: 'tls.caFile', fix: 'set tls.caFile to the CA certificate that issued the Redis server\'s certificate',
      }]);
      await c.close();
    }
  });

  test('a serverName the certificate does not hold', async () => {
    const c = client({ host: '127.0.0.1', port: redis.port, tls: { ca: pki.ca, servername: 'redis.internal' }, settingNames: { url: 'state.redis.url', tls: 'state.redis.tls' } });
    const error = await rejection(c.command(['PING']));
    assert.equal(error.message, `Redis at 127.0.0.1:${redis.port} is not connected (connecting; last error: TLS ERR_TLS_CERT_ALTNAME_INVALID ` +
      `(Host: redis.internal. is not in the cert's altnames: IP Address:127.0.0.1, DNS:localhost): the Redis server's certificate does not ` +
      `name the host of state.redis.url: use a name it holds in the url, or set state.redis.tls.serverName to one).`);
  });

  test('a client certificate is required: the configured one is accepted, none or a foreign one is refused', async () => {
    const withCert = client({ host: '127.0.0.1', port: mutual.port, tls: { ca: pki.ca, cert: gatewayPair.cert, key: gatewayPair.key } });
    assert.equal(await withCert.command(['PING']), 'PONG');

    const foreign = otherPki.client('foreign', 'portcullis-gateway');
    const cases = [
      [{ ca: pki.ca }, 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'tlsv13 alert certificate required', 'Redis requires a client certificate: set tls.certFile and tls.keyFile'],
      [{ ca: pki.ca, cert: foreign.cert, key: foreign.key }, 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'tlsv1 alert unknown ca',
        'Redis refused the client certificate: give in tls.certFile one that is in date and issued by a CA in the server\'s tls-ca-cert-file'],
    ] as const;
    for (const [tls, code, reason, fix] of cases) {
      const { logger, lines } = recordingLogger();
      const recorder = createStateRecorder();
      const scheduler = new ManualScheduler();
      const c = client({ host: '127.0.0.1', port: mutual.port, tls, logger, onStateChange: recorder.onStateChange, scheduler });
      const error = await rejection(c.command(['PING']));
      assert.equal(error.message, `Redis at 127.0.0.1:${mutual.port} is not connected (connecting; last error: TLS ${code} (${reason}): ${fix}).`);
      // It keeps trying with the backoff, never "ready" in between (TLS 1.3 refuses after the
      // client's handshake is done: readiness waits for the PING's answer), and logs the refusal once.
      await failAttempts(scheduler, lines, 3);
      assert.deepEqual(recorder.changes, ['connecting->reconnecting']);
      assert.deepEqual(tlsErrors(lines).map((l) => [l.msg, l.fields?.['code'], l.fields?.['setting']]), [['redis TLS connection refused', code, 'tls.certFile']]);
      await c.close();
    }
  });

  test('minVersion TLSv1.3 against a Redis that speaks only TLSv1.2: tls.minVersion', async () => {
    const old = await startRedisServer({ tls: { ...serverTls, protocols: 'TLSv1.2' } });
    try {
      const c12 = client({ host: '127.0.0.1', port: old.port, tls: { ca: pki.ca, minVersion: 'TLSv1.2' } });
      assert.equal(await c12.command(['PING']), 'PONG');
      const { logger, lines } = recordingLogger();
      const c13 = client({ host: '127.0.0.1', port: old.port, tls: { ca: pki.ca, minVersion: 'TLSv1.3' }, logger });
      const error = await rejection(c13.command(['PING']));
      assert.match(error.message, /last error: TLS ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION \(tlsv1 alert protocol version\): Redis and this gateway share no TLS version: lower tls\.minVersion/);
      assert.equal(tlsErrors(lines)[0]?.fields?.['setting'], 'tls.minVersion');
      await c13.close();
    } finally {
      await old.stop();
    }
  });

  test('an expired server certificate: CERT_HAS_EXPIRED, no setting accepts it', async () => {
    const expired = pki.server('expired', ['127.0.0.1'], { days: -1 });
    const stale = await startRedisServer({ tls: { ...serverTls, certFile: expired.certFile, keyFile: expired.keyFile } });
    try {
      const { logger, lines } = recordingLogger();
      const c = client({ host: '127.0.0.1', port: stale.port, tls: { ca: pki.ca }, logger });
      const error = await rejection(c.command(['PING']));
      assert.match(error.message, /last error: TLS CERT_HAS_EXPIRED \(certificate has expired\): the Redis server's certificate has expired: renew it on the server/);
      assert.equal(tlsErrors(lines)[0]?.fields?.['setting'], null);
      await c.close();
    } finally {
      await stale.stop();
    }
  });
});

test('a TLS failure is logged once per outage: a certificate swapped to another CA, then back, then again', async () => {
  const foreignServer = otherPki.server('foreign-redis');
  const foreignTls: RedisServerTls = { ...serverTls, certFile: foreignServer.certFile, keyFile: foreignServer.keyFile };
  const { logger, lines } = recordingLogger();
  const recorder = createStateRecorder();
  const scheduler = new ManualScheduler();
  const c = client({ host: '127.0.0.1', port: redis.port, tls: { ca: pki.ca }, logger, onStateChange: recorder.onStateChange, scheduler });
  let foreign = false;
  try {
    assert.equal(await c.command(['PING']), 'PONG');
    for (let outage = 1; outage <= 2; outage += 1) {
      foreign = true;
      await redis.restart(foreignTls);
      await recorder.reach('reconnecting');
      await failAttempts(scheduler, lines, 3);
      assert.equal(tlsErrors(lines).length, outage);
      await redis.restart(serverTls);
      foreign = false;
      await scheduler.next();
      await recorder.reach('ready');
      assert.equal(await c.command(['PING']), 'PONG');
    }
    assert.deepEqual(tlsErrors(lines).map((l) => l.fields?.['code']), ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);
    assert.deepEqual(recorder.changes, ['connecting->ready', 'ready->reconnecting', 'reconnecting->ready', 'ready->reconnecting', 'reconnecting->ready']);
  } finally {
    await c.close();
    // The other tests use this server too.
    if (foreign) await redis.restart(serverTls);
  }
});

describe('the connect timeout covers the TLS handshake and the first reply', () => {
  let silentTcp: TcpServer;
  let silentTls: TlsServer;
  const accepted = new Set<Socket>();
  let tlsHandshakes = 0;
  const keep = (socket: Socket): void => {
    if ('encrypted' in socket) tlsHandshakes += 1;
    accepted.add(socket);
    socket.once('close', () => accepted.delete(socket));
  };
  before(async () => {
    silentTcp = createTcpServer(keep);
    silentTls = createTlsServer({ cert: serverPair.cert, key: serverPair.key }, keep);
    await Promise.all([silentTcp, silentTls].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  });
  after(async () => {
    for (const socket of accepted) socket.destroy();
    await Promise.all([silentTcp, silentTls].map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const port = (server: TcpServer): number => (server.address() as { port: number }).port;

  /** A client's first connect to `p`, failed by the connect timeout (200) and not a millisecond before; `reached` holds once the connection is as far as it will get. */
  async function timedOut(p: number, reached: () => boolean = () => true): Promise<RedisUnavailableError> {
    const scheduler = new ManualScheduler();
    const c = client({ host: '127.0.0.1', port: p, tls: { ca: pki.ca }, connectTimeoutMs: 200, scheduler });
    const pending = rejection(c.command(['PING']));
    let settled = false;
    void pending.then(() => (settled = true));
    await eventually(reached, 'the connection to get as far as it will');
    await scheduler.advance(199);
    assert.equal(settled, false);
    await scheduler.advance(1);
    const error = await pending;
    await c.close();
    return error;
  }

  let plainPort = 0;
  before(async () => {
    plainPort = (await sharedRedis()).port;
  });

  test('no handshake (a plain Redis port, a silent peer): the message asks whether it is the tls-port', async () => {
    for (const p of [plainPort, port(silentTcp)]) {
      const error = await timedOut(p);
      assert.equal(error.message, `Redis at 127.0.0.1:${p} is not connected (connecting; last error: TLS handshake not finished within ` +
        `connectTimeoutMs (200 ms): is port ${p} the server's tls-port?).`);
    }
  });

  test('a handshake and then no answer to PING', async () => {
    // The TLS server sees the connection once the handshake is done.
    const handshakes = tlsHandshakes;
    const error = await timedOut(port(silentTls), () => tlsHandshakes > handshakes);
    assert.equal(error.message, `Redis at 127.0.0.1:${port(silentTls)} is not connected (connecting; last error: no ready connection within connectTimeoutMs (200 ms)).`);
  });
});
