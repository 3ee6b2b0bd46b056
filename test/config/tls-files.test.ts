// The TLS files a config names, read and checked (src/config/tls-files.ts on
// src/config/pem-checks.ts and src/config/config-files.ts): every kind of
// problem, each under its setting, with files made by the in-process test
// PKI. A file root may not read, and a named pipe, need a process to make:
// tls-files.system.test.ts.
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { checkClientTlsFiles, checkListenerTlsFiles, loadClientTls, loadListenerTls } from '../../src/config/tls-files.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';
import { tlsFileChecks } from './tls-files-fixtures.ts';

const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const pki = createInProcessPki();
const otherPki = createInProcessPki('Other Test CA');
after(() => {
  pki.cleanup();
  otherPki.cleanup();
});

const server = pki.server('server');
const other = pki.server('other', ['other.internal']);
const client = pki.client('client', 'gateway-1');
const expired = pki.server('expired', ['expired.internal'], { days: -1 });
const dir = pki.dir;
const { source, file, listener, clientTls, listenerIssues, clientIssues, bad } = tlsFileChecks(dir, server);
const iso = (date: string): string => new Date(date).toISOString();
const subjectOf = (pem: Buffer): string => new X509Certificate(pem).subject.replace(/\n/g, ', ');

const HOLDS_CERT = 'holds no PEM private key ("-----BEGIN PRIVATE KEY-----") (it holds a certificate: is it the certificate file?)';
const HOLDS_KEY = 'holds no PEM certificate ("-----BEGIN CERTIFICATE-----") (it holds a private key: is it the key file?)';
const ENCRYPTED = 'holds an encrypted private key; give it unencrypted (protect the file by its permissions or a systemd credential)';

describe('good files', () => {
  test('a listener: no issues, and the material node:tls takes', () => {
    assert.deepEqual(listenerIssues({}), []);
    assert.deepEqual(loadListenerTls(source, 'listen.tls', listener({}), {}), {
      cert: server.cert,
      key: server.key,
      ca: undefined,
      requestCert: false,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    });
  });

  test('a listener asking for client certificates: required or optional', () => {
    assert.deepEqual(listenerIssues({ clientCaFile: pki.caFile, clientAuth: 'required' }), []);
    const required = loadListenerTls(source, 'admin.tls', listener({ clientCaFile: pki.caFile, clientAuth: 'required', minVersion: 'TLSv1.3' }), {});
    assert.deepEqual({ ca: required.ca, requestCert: required.requestCert, rejectUnauthorized: required.rejectUnauthorized, minVersion: required.minVersion }, {
      ca: pki.ca,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.3',
    });
    const optional = loadListenerTls(source, 'admin.tls', listener({ clientCaFile: pki.caFile, clientAuth: 'optional' }), {});
    assert.deepEqual({ requestCert: optional.requestCert, rejectUnauthorized: optional.rejectUnauthorized }, { requestCert: true, rejectUnauthorized: false });
  });

  test('a client section with nothing set reads nothing', () => {
    assert.deepEqual(loadClientTls(source, 'providers.up.tls', clientTls({}), {}), { ca: undefined, cert: undefined, key: undefined, servername: undefined, minVersion: 'TLSv1.2' });
  });

  test('a client section with a CA, a client certificate and a server name', () => {
    const settings = { caFile: pki.caFile, certFile: client.certFile, keyFile: client.keyFile, serverName: 'llm.internal' };
    assert.deepEqual(clientIssues(settings), []);
    assert.deepEqual(loadClientTls(source, 'providers.up.tls', clientTls(settings), {}), { ca: pki.ca, cert: client.cert, key: client.key, servername: 'llm.internal', minVersion: 'TLSv1.2' });
  });

  test('a chain, leaf first, and a file holding the certificate and its key', () => {
    assert.deepEqual(listenerIssues({ certFile: file('chain.pem', Buffer.concat([server.cert, pki.ca])) }), []);
    assert.deepEqual(listenerIssues({ keyFile: file('key-and-cert.pem', Buffer.concat([server.cert, server.key])) }), []);
  });

  test('a relative path is relative to the config file; without one, to the working directory', () => {
    mkdirSync(path.join(dir, 'tls'), { recursive: true });
    writeFileSync(path.join(dir, 'tls', 'gw.pem'), server.cert);
    writeFileSync(path.join(dir, 'tls', 'gw.key'), server.key);
    assert.deepEqual(listenerIssues({ certFile: 'tls/gw.pem', keyFile: './tls/gw.key' }), []);
    assert.deepEqual(checkListenerTlsFiles(null, 'listen.tls', listener({ certFile: 'tls/gw.pem', keyFile: 'tls/gw.key' }), {}, Date.now()).issues, [
      bad('listen.tls.certFile', `${path.resolve('tls/gw.pem')} does not exist`),
      bad('listen.tls.keyFile', `${path.resolve('tls/gw.key')} does not exist`),
    ]);
  });
});

describe('each problem under its setting', () => {
  test('a missing file', () => {
    assert.deepEqual(listenerIssues({ certFile: 'nope.pem' }), [bad('listen.tls.certFile', `${path.join(dir, 'nope.pem')} does not exist`)]);
    assert.deepEqual(clientIssues({ caFile: '/nonexistent/ca.pem' }), [bad('providers.up.tls.caFile', '/nonexistent/ca.pem does not exist')]);
  });

  test('a directory instead of a file', () => {
    assert.deepEqual(listenerIssues({ keyFile: dir }), [bad('listen.tls.keyFile', `${dir} is a directory`)]);
  });

  test('a key file given a certificate, a certificate file given a key', () => {
    assert.deepEqual(listenerIssues({ keyFile: server.certFile }), [bad('listen.tls.keyFile', HOLDS_CERT)]);
    assert.deepEqual(listenerIssues({ certFile: server.keyFile }), [bad('listen.tls.certFile', HOLDS_KEY)]);
    // Swapped: both named, and no mismatch on top.
    assert.deepEqual(listenerIssues({ certFile: server.keyFile, keyFile: server.certFile }), [bad('listen.tls.certFile', HOLDS_KEY), bad('listen.tls.keyFile', HOLDS_CERT)]);
    assert.deepEqual(clientIssues({ caFile: pki.caFile.replace(/\.pem$/, '.key') }), [bad('providers.up.tls.caFile', HOLDS_KEY)]);
  });

  test('an encrypted key (PKCS#8 and the traditional Proc-Type form)', () => {
    // As `openssl genpkey -algorithm EC -aes256` and `openssl ec -aes256` write them.
    const pkcs8 = file('encrypted.key', generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }));
    assert.match(readFileSync(pkcs8, 'latin1'), /^-----BEGIN ENCRYPTED PRIVATE KEY-----\n/);
    assert.deepEqual(listenerIssues({ keyFile: pkcs8 }), [bad('listen.tls.keyFile', ENCRYPTED)]);
    const traditional = file('encrypted-ec.key', createPrivateKey(server.key).export({ type: 'sec1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }));
    assert.match(readFileSync(traditional, 'latin1'), /^-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n/);
    assert.deepEqual(clientIssues({ certFile: client.certFile, keyFile: traditional }), [bad('providers.up.tls.keyFile', ENCRYPTED)]);
  });

  test('a key that does not belong to the certificate', () => {
    assert.deepEqual(listenerIssues({ keyFile: other.keyFile }), [
      bad('listen.tls.keyFile', 'does not match the certificate in certFile (CN=127.0.0.1): give the key that certificate was issued for'),
    ]);
    assert.deepEqual(clientIssues({ certFile: client.certFile, keyFile: server.keyFile }), [
      bad('providers.up.tls.keyFile', 'does not match the certificate in certFile (CN=gateway-1): give the key that certificate was issued for'),
    ]);
  });

  // A chain with the CA (or an intermediate) first was reported as a key that
  // "does not match", sending the operator to the wrong file.
  test('a chain in the wrong order is named in certFile, not as a wrong key', () => {
    const reversed = file('reversed-chain.pem', Buffer.concat([pki.ca, server.cert]));
    assert.deepEqual(listenerIssues({ certFile: reversed }), [
      bad('listen.tls.certFile', 'starts with CN=Portcullis Test CA, but the key in keyFile belongs to CN=127.0.0.1 further down: put that certificate first, then its intermediates (leaf first)'),
    ]);
  });

  test('an expired certificate, in certFile and in a CA file', () => {
    const until = iso(new X509Certificate(expired.cert).validTo);
    assert.deepEqual(listenerIssues({ certFile: expired.certFile, keyFile: expired.keyFile }), [
      bad('listen.tls.certFile', `certificate 1 of 1 (CN=expired.internal) expired on ${until}; renew it`),
    ]);
    // A CA file is a trust list: an expired CA beside a current one is skipped, as OpenSSL
    // skips it (system bundles carry expired roots); only a file with no current CA is a problem.
    assert.deepEqual(clientIssues({ caFile: file('ca-bundle.pem', Buffer.concat([pki.ca, expired.cert])) }), []);
    const from = iso(new X509Certificate(expired.cert).validFrom);
    assert.deepEqual(clientIssues({ caFile: file('ca-expired.pem', expired.cert) }), [
      bad('providers.up.tls.caFile', `holds no CA certificate valid now (its one certificate, e.g. CN=expired.internal, valid ${from} to ${until}); give the CA's current certificate`),
    ]);
  });

  test('the system\'s CA bundle, expired roots and all, is a usable caFile', { skip: existsSync(SYSTEM_BUNDLE) ? false : `no ${SYSTEM_BUNDLE}` }, () => {
    assert.deepEqual(clientIssues({ caFile: SYSTEM_BUNDLE }), []);
  });

  test('a certificate not valid yet (the clock, or a certificate issued ahead)', () => {
    const from = new X509Certificate(server.cert).validFrom;
    const yesterday = Date.parse(from) - 86_400_000;
    assert.deepEqual(listenerIssues({}, {}, yesterday).map((i) => i.path), ['listen.tls.certFile']);
    assert.deepEqual(listenerIssues({}, {}, yesterday)[0], bad('listen.tls.certFile', `certificate 1 of 1 (${subjectOf(server.cert)}) is not valid until ${iso(from)}; check the clock or the certificate`));
  });

  test('garbage: a PEM block that is not a certificate, a key that does not parse, no PEM at all', () => {
    const garbageCert = file('garbage.pem', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    const garbageKey = file('garbage.key', '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n');
    assert.deepEqual(listenerIssues({ certFile: garbageCert, keyFile: garbageKey }), [
      bad('listen.tls.certFile', 'certificate 1 of 1 is not a valid X.509 certificate'),
      bad('listen.tls.keyFile', 'holds a private key that cannot be parsed'),
    ]);
    const der = file('ca.der', new X509Certificate(pki.ca).raw);
    const empty = file('empty.pem', '');
    assert.deepEqual(clientIssues({ caFile: der, certFile: empty, keyFile: empty }), [
      bad('providers.up.tls.caFile', 'holds no PEM certificate ("-----BEGIN CERTIFICATE-----")'),
      bad('providers.up.tls.certFile', 'holds no PEM certificate ("-----BEGIN CERTIFICATE-----")'),
      bad('providers.up.tls.keyFile', 'holds no PEM private key ("-----BEGIN PRIVATE KEY-----")'),
    ]);
    // One bad block in a chain is named by its place; the good leaf still gets matched with the key.
    const chain = file('half-garbage.pem', Buffer.concat([server.cert, readFileSync(garbageCert)]));
    assert.deepEqual(listenerIssues({ certFile: chain }), [bad('listen.tls.certFile', 'certificate 2 of 2 is not a valid X.509 certificate')]);
  });

  test('${NAME} in a path: expanded from the environment, named when it is not set', () => {
    const env = { CREDENTIALS_DIRECTORY: dir };
    assert.deepEqual(listenerIssues({ keyFile: '${CREDENTIALS_DIRECTORY}/server.key' }, env), []);
    assert.deepEqual(listenerIssues({ keyFile: '${CREDENTIALS_DIRECTORY}/server.key', clientCaFile: '${TLS_DIR}/ca.pem', clientAuth: 'required' }, {}), [
      bad('listen.tls.keyFile', 'environment variable CREDENTIALS_DIRECTORY (used in the path) is not set'),
      bad('listen.tls.clientCaFile', 'environment variable TLS_DIR (used in the path) is not set'),
    ]);
    assert.deepEqual(clientIssues({ caFile: '${TLS_DIR}/ca.pem' }, { TLS_DIR: '' }), [bad('providers.up.tls.caFile', 'environment variable TLS_DIR (used in the path) is not set')]);
    // Only ${NAME} is expanded; the value is used as it is, relative values from the config file's folder.
    assert.deepEqual(clientIssues({ caFile: '${TLS_DIR}/ca.pem' }, { TLS_DIR: 'certs' }), [bad('providers.up.tls.caFile', `${path.join(dir, 'certs', 'ca.pem')} does not exist`)]);
    assert.deepEqual(clientIssues({ caFile: '$TLS_DIR/ca.pem' }, { TLS_DIR: dir }), [bad('providers.up.tls.caFile', `${path.join(dir, '$TLS_DIR', 'ca.pem')} does not exist`)]);
  });

  test('a file larger than a PEM file can be', () => {
    const big = file('big.pem', Buffer.alloc(1024 * 1024 + 1, 0x41));
    assert.deepEqual(clientIssues({ caFile: big }), [bad('providers.up.tls.caFile', `${big} is larger than 1048576 bytes`)]);
  });

  // The whole file was read before its size was checked: a device named by
  // mistake was read until memory ran out.
  test('a device that never ends is read no further than the bound', () => {
    assert.deepEqual(clientIssues({ caFile: '/dev/zero' }), [bad('providers.up.tls.caFile', '/dev/zero is larger than 1048576 bytes')]);
  });

  test('a certificate from another CA is not a file problem (the handshake decides)', () => {
    const foreign = otherPki.client('foreign', 'gateway-2');
    assert.deepEqual(clientIssues({ caFile: pki.caFile, certFile: foreign.certFile, keyFile: foreign.keyFile }), []);
  });
});

describe('certificates that expire soon: warnings, not problems', () => {
  const shortLived = pki.server('short-lived', ['short.internal'], { days: 10 });
  const until = (pem: Buffer): string => iso(new X509Certificate(pem).validTo);
  const soon = (pathInConfig: string, which: string, pem: Buffer) => ({
    code: 'certificate_expires_soon',
    path: pathInConfig,
    message: `${which} (${subjectOf(pem)}) expires on ${until(pem)}, within 30 days; renew it before then`,
  });

  test('a certificate with 10 days left is a warning naming its date; the files are usable', () => {
    const settings = listener({ certFile: shortLived.certFile, keyFile: shortLived.keyFile });
    assert.deepEqual(checkListenerTlsFiles(source, 'listen.tls', settings, {}, Date.now()), {
      issues: [],
      warnings: [soon('listen.tls.certFile', 'certificate 1 of 1', shortLived.cert)],
    });
    assert.deepEqual(loadListenerTls(source, 'listen.tls', settings, {}).cert, shortLived.cert);
  });

  test('in a CA file: only when every current CA expires soon', () => {
    const bundle = file('soon-bundle.pem', Buffer.concat([pki.ca, shortLived.cert]));
    assert.deepEqual(checkClientTlsFiles(source, 'state.redis.tls', clientTls({ caFile: bundle }), {}, Date.now()), { issues: [], warnings: [] });
    const alone = file('soon-ca.pem', shortLived.cert);
    const by = iso(new X509Certificate(shortLived.cert).validTo);
    assert.deepEqual(checkClientTlsFiles(source, 'state.redis.tls', clientTls({ caFile: alone }), {}, Date.now()), {
      issues: [],
      warnings: [{ code: 'certificate_expires_soon', path: 'state.redis.tls.caFile', message: `every CA certificate in it expires by ${by}, within 30 days; add the CA's next certificate before then` }],
    });
  });

  test('the edge: a second under 30 days left warns, a second over does not', () => {
    const end = Date.parse(new X509Certificate(server.cert).validTo);
    const at = (nowMs: number) => checkListenerTlsFiles(source, 'listen.tls', listener({}), {}, nowMs).warnings.length;
    assert.equal(at(end - 30 * 86_400_000 - 1000), 0);
    assert.equal(at(end - 30 * 86_400_000 + 1000), 1);
    assert.equal(at(end - 1000), 1);
    // Past the end it is a problem instead.
    assert.deepEqual(checkListenerTlsFiles(source, 'listen.tls', listener({}), {}, end + 1000).warnings, []);
  });

  test('an expired certificate is a problem, never also a warning', () => {
    assert.deepEqual(checkListenerTlsFiles(source, 'listen.tls', listener({ certFile: expired.certFile, keyFile: expired.keyFile }), {}, Date.now()).warnings, []);
  });
});

describe('every problem at once', () => {
  test('the issues of every setting, in order; load* throws them as one ConfigError', () => {
    const settings = listener({ certFile: expired.certFile, keyFile: 'missing.key', clientCaFile: dir, clientAuth: 'optional' });
    const expected = [
      bad('admin.tls.certFile', `certificate 1 of 1 (CN=expired.internal) expired on ${iso(new X509Certificate(expired.cert).validTo)}; renew it`),
      bad('admin.tls.keyFile', `${path.join(dir, 'missing.key')} does not exist`),
      bad('admin.tls.clientCaFile', `${dir} is a directory`),
    ];
    assert.deepEqual(checkListenerTlsFiles(source, 'admin.tls', settings, {}, Date.now()), { issues: expected, warnings: [] });
    assert.throws(
      () => loadListenerTls(source, 'admin.tls', settings, {}),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(err.issues, expected);
        assert.equal(err.message, `${source}: 3 problems\n${expected.map((i: { path: string; message: string }) => `  ${i.path}: ${i.message}`).join('\n')}`);
        return true;
      },
    );
  });

  test('a client section: CA, certificate and key each named', () => {
    const settings = clientTls({ caFile: 'nope-ca.pem', certFile: client.certFile, keyFile: other.keyFile });
    const expected = [
      bad('state.redis.tls.caFile', `${path.join(dir, 'nope-ca.pem')} does not exist`),
      bad('state.redis.tls.keyFile', 'does not match the certificate in certFile (CN=gateway-1): give the key that certificate was issued for'),
    ];
    assert.deepEqual(checkClientTlsFiles(source, 'state.redis.tls', settings, {}, Date.now()), { issues: expected, warnings: [] });
    assert.throws(() => loadClientTls(source, 'state.redis.tls', settings, {}), (err: unknown) => err instanceof ConfigError && err.issues.length === 2);
  });

  test('no private key bytes in any message', () => {
    const keyText = server.key.toString('latin1');
    const body = keyText.split('\n')[1] ?? '';
    assert.ok(body.length > 20);
    const all = [
      ...listenerIssues({ certFile: server.keyFile, keyFile: server.keyFile }),
      ...listenerIssues({ keyFile: other.keyFile }),
    ];
    assert.equal(all.length, 2);
    for (const issue of all) assert.ok(!issue.message.includes(body), issue.message);
  });
});
