// The test PKI of ./test-pki.ts made in this process with node:crypto, for
// unit tests (which start no process, so no openssl): the same TestPki, the
// same files in a temporary directory (ca.pem and ca.key, <label>.pem and
// <label>.key), certificates of the same shape: a P-256 CA with
// basicConstraints CA:TRUE and keyUsage keyCertSign and cRLSign; server
// certificates for DNS names or IP addresses with extendedKeyUsage
// serverAuth, client certificates with clientAuth, both CA:FALSE; validity
// from now for `days` (negative: ended that many days ago, as openssl's
// -days makes it). node:crypto signs but builds no certificate, so the DER is
// put together here (RFC 5280, section 4.1).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { IssuedPair, IssueOptions, TestPki } from './test-pki.ts';

const DAY_MS = 86_400_000;
const CA_DAYS = 3650;
const DEFAULT_DAYS = 365;

const Tag = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  sequence: 0x30,
  set: 0x31,
  utcTime: 0x17,
  generalizedTime: 0x18,
  /** Context-specific, constructed: [0] and [3] EXPLICIT around the version and the extensions. */
  explicit0: 0xa0,
  explicit3: 0xa3,
  /** Context-specific, primitive: the GeneralName choices dNSName [2] and iPAddress [7]; keyIdentifier [0]. */
  implicit0: 0x80,
  dnsName: 0x82,
  ipAddress: 0x87,
} as const;

const Oid = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extendedKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let rest = n; rest > 0; rest >>>= 8) bytes.unshift(rest & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) groups.unshift(0x80 | (value & 0x7f));
    bytes.push(...groups);
  }
  return der(Tag.oid, Buffer.from(bytes));
}

const sequence = (...items: Buffer[]): Buffer => der(Tag.sequence, ...items);

/** A positive INTEGER from unsigned big-endian bytes, in its shortest form. */
function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return der(Tag.integer, (trimmed[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280, 4.1.2.5), to the second. */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = Number(iso.slice(0, 4));
  return year >= 1950 && year < 2050 ? der(Tag.utcTime, Buffer.from(`${digits.slice(2)}Z`, 'ascii')) : der(Tag.generalizedTime, Buffer.from(`${digits}Z`, 'ascii'));
}

/** A Name of one RDN, CN=`commonName`, as openssl writes it from -subj (UTF8String). */
function name(commonName: string): Buffer {
  return sequence(der(Tag.set, sequence(oid(Oid.commonName), der(Tag.utf8String, Buffer.from(commonName, 'utf8')))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [der(Tag.boolean, Buffer.from([0xff]))] : []), der(Tag.octetString, value));
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  // IPv6: expand "::" and write the eight groups.
  const [head = '', tail = ''] = address.includes('::') ? address.split('::') : [address, ''];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  const out = Buffer.alloc(16);
  groups.forEach((group, i) => out.writeUInt16BE(parseInt(group, 16), i * 2));
  return out;
}

/** The key identifier openssl's subjectKeyIdentifier=hash makes: SHA-1 of the public key's bits. */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // The SubjectPublicKeyInfo ends with the key's BIT STRING; for P-256 it is the last 65 bytes after the unused-bits byte.
  return createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
}

interface Signer {
  subject: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function certificate(subject: string, publicKey: KeyObject, issuer: Signer, days: number, extensions: Buffer[]): Buffer {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const serial = randomBytes(16);
  serial[0] = ((serial[0] as number) & 0x7f) | 0x01;
  const algorithm = sequence(oid(Oid.ecdsaWithSha256));
  const tbs = sequence(
    der(Tag.explicit0, der(Tag.integer, Buffer.from([2]))),
    integer(serial),
    algorithm,
    name(issuer.subject),
    sequence(time(now), time(now + days * DAY_MS)),
    name(subject),
    publicKey.export({ type: 'spki', format: 'der' }),
    der(Tag.explicit3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, issuer.privateKey);
  return sequence(tbs, algorithm, der(Tag.bitString, Buffer.from([0]), signature));
}

function pem(label: string, body: Buffer): string {
  const base64 = body.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${base64}${base64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}

function newKey(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

/** A new CA named `name` in a fresh temporary directory, made in this process. */
export function createInProcessPki(caName = 'Portcullis Test CA'): TestPki {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-pki-'));
  const caKey = newKey();
  const signer: Signer = { subject: caName, ...caKey };
  const caId = keyIdentifier(caKey.publicKey);
  const caCert = certificate(caName, caKey.publicKey, signer, CA_DAYS, [
    extension(Oid.subjectKeyIdentifier, false, der(Tag.octetString, caId)),
    extension(Oid.basicConstraints, true, sequence(der(Tag.boolean, Buffer.from([0xff])))),
    // keyCertSign (bit 5) and cRLSign (bit 6): one byte, its last bit unused.
    extension(Oid.keyUsage, true, der(Tag.bitString, Buffer.from([0x01, 0x06]))),
  ]);
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, pem('CERTIFICATE', caCert));
  writeFileSync(path.join(dir, 'ca.key'), caKey.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });

  const pki: TestPki & { signer: Signer; keyId: Buffer } = {
    dir,
    caFile,
    ca: readFileSync(caFile),
    signer,
    keyId: caId,
    server: (label, names = ['127.0.0.1', 'localhost'], options = {}) => {
      const altNames = names.map((n) => (isIP(n) === 0 ? der(Tag.dnsName, Buffer.from(n, 'ascii')) : der(Tag.ipAddress, ipBytes(n))));
      return issue(label, names[0] ?? label, Oid.serverAuth, [extension(Oid.subjectAltName, false, sequence(...altNames))], options);
    },
    client: (label, commonName, options = {}) => issue(label, commonName, Oid.clientAuth, [], options),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };

  function issue(label: string, commonName: string, usage: string, more: Buffer[], options: IssueOptions): IssuedPair {
    const by = (options.issuer ?? pki) as typeof pki;
    if (by.signer === undefined) throw new Error('an in-process PKI issues only with another in-process PKI as the issuer');
    const key = newKey();
    const cert = certificate(commonName, key.publicKey, by.signer, options.days ?? DEFAULT_DAYS, [
      extension(Oid.subjectKeyIdentifier, false, der(Tag.octetString, keyIdentifier(key.publicKey))),
      extension(Oid.authorityKeyIdentifier, false, sequence(der(Tag.implicit0, by.keyId))),
      extension(Oid.basicConstraints, false, sequence()),
      extension(Oid.extendedKeyUsage, false, sequence(oid(usage))),
      ...more,
    ]);
    const certFile = path.join(dir, `${label}.pem`);
    const keyFile = path.join(dir, `${label}.key`);
    writeFileSync(certFile, pem('CERTIFICATE', cert));
    writeFileSync(keyFile, key.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
  }

  return pki;
}
