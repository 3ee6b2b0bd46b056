// A private certificate authority for tests, made with the openssl command
// line (as an operator would make one): a CA, server certificates with the
// names given, client certificates, and out-of-date ones. Files live in a
// temporary directory removed by cleanup().
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface IssuedPair {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

export interface TestPki {
  dir: string;
  /** The CA certificate (PEM) and its file. */
  caFile: string;
  ca: Buffer;
  /** A server certificate for `names` (DNS names or IP addresses; default 127.0.0.1 and localhost). */
  server(label: string, names?: readonly string[], options?: IssueOptions): IssuedPair;
  /** A client certificate with subject CN=`commonName`. */
  client(label: string, commonName: string, options?: IssueOptions): IssuedPair;
  cleanup(): void;
}

export interface IssueOptions {
  /** Days of validity from now (default 365, beyond check-config's 30-day expiry warning); negative: expired that many days ago. */
  days?: number;
  /** Signed by another TestPki's CA instead. */
  issuer?: TestPki;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const IP = /^[0-9.]+$|:/;

/** A new CA named `name` in a fresh temporary directory. */
export function createTestPki(name = 'Portcullis Test CA'): TestPki {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-pki-'));
  const caKey = path.join(dir, 'ca.key');
  const caFile = path.join(dir, 'ca.pem');
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-days', '3650', '-keyout', caKey, '-out', caFile,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);

  const pki: TestPki = {
    dir,
    caFile,
    ca: readFileSync(caFile),
    server: (label, names = ['127.0.0.1', 'localhost'], options = {}) => {
      const san = names.map((n) => (IP.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
      return issue(label, `/CN=${names[0] ?? label}`, [`subjectAltName=${san}`, 'extendedKeyUsage=serverAuth', 'basicConstraints=CA:FALSE'], options);
    },
    client: (label, commonName, options = {}) => issue(label, `/CN=${commonName}`, ['extendedKeyUsage=clientAuth', 'basicConstraints=CA:FALSE'], options),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };

  function issue(label: string, subject: string, extensions: readonly string[], options: IssueOptions): IssuedPair {
    const issuer = options.issuer ?? pki;
    const keyFile = path.join(dir, `${label}.key`);
    const csr = path.join(dir, `${label}.csr`);
    const certFile = path.join(dir, `${label}.pem`);
    const ext = path.join(dir, `${label}.ext`);
    writeFileSync(ext, `${extensions.join('\n')}\n`);
    openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subject, '-keyout', keyFile, '-out', csr], dir);
    // A negative -days makes notAfter lie before notBefore (now): expired.
    openssl(['x509', '-req', '-in', csr, '-CA', issuer.caFile, '-CAkey', path.join(issuer.dir, 'ca.key'), '-CAcreateserial', '-out', certFile, '-extfile', ext, '-days', String(options.days ?? 365)], dir);
    return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
  }
  return pki;
}
