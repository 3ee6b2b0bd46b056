import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tlsFailureOf } from '../../src/redis/tls-failure.ts';

const names = { url: 'state.redis.url', tls: 'state.redis.tls' };

function socketError(code: string, message: string, reason?: string): Error {
  return Object.assign(new Error(message), { code }, reason === undefined ? {} : { reason });
}

test('each certificate and handshake failure names the setting that fixes it', () => {
  const cases: [string, string | null, RegExp][] = [
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'state.redis.tls.caFile', /^set state\.redis\.tls\.caFile to the CA certificate that issued/],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'state.redis.tls.caFile', /caFile/],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'state.redis.tls.caFile', /caFile/],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'state.redis.tls.caFile', /caFile/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'state.redis.tls.serverName', /does not name the host of state\.redis\.url: .* set state\.redis\.tls\.serverName/],
    ['CERT_HAS_EXPIRED', null, /has expired: renew it on the server/],
    ['CERT_NOT_YET_VALID', null, /not valid yet: check the clocks/],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'state.redis.tls.certFile', /requires a client certificate: set state\.redis\.tls\.certFile and state\.redis\.tls\.keyFile/],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'state.redis.tls.certFile', /refused the client certificate/],
    ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED', 'state.redis.tls.certFile', /in date/],
    ['ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', 'state.redis.tls.minVersion', /lower state\.redis\.tls\.minVersion/],
    ['ERR_SSL_UNSUPPORTED_PROTOCOL', 'state.redis.tls.minVersion', /minVersion/],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'state.redis.url', /does not speak TLS on this port: put its tls-port in state\.redis\.url/],
    ['ERR_SSL_PACKET_LENGTH_TOO_LONG', 'state.redis.url', /tls-port/],
    ['ERR_SSL_SOMETHING_NEW', null, /the Redis server's log says why/],
  ];
  for (const [code, setting, fix] of cases) {
    const failure = tlsFailureOf(socketError(code, `m ${code}`), names);
    assert.ok(failure !== undefined, code);
    assert.equal(failure.code, code);
    assert.equal(failure.setting, setting, code);
    assert.match(failure.fix, fix, code);
    assert.equal(failure.reason, `m ${code}`);
  }
});

test("OpenSSL's reason is used instead of its message (an error queue dump with C file names)", () => {
  const error = socketError(
    'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    '803C68448D7F0000:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 116\n',
    'tlsv13 alert certificate required',
  );
  assert.equal(tlsFailureOf(error, names)?.reason, 'tlsv13 alert certificate required');
});

test('errors that are not about TLS are not TLS failures', () => {
  assert.equal(tlsFailureOf(socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6379'), names), undefined);
  assert.equal(tlsFailureOf(socketError('ECONNRESET', 'read ECONNRESET'), names), undefined);
  assert.equal(tlsFailureOf(new Error('no ready connection within connectTimeoutMs (200 ms)'), names), undefined);
  assert.equal(tlsFailureOf('UNABLE_TO_VERIFY_LEAF_SIGNATURE', names), undefined);
  assert.equal(tlsFailureOf(Object.assign(new Error('x'), { code: 42 }), names), undefined);
});
