// Reads the PEM files a TLS section names and checks them (./pem-checks.ts):
// present, readable, valid PEM, certificate and key matching, in date. Every
// problem is an issue under its own setting ("listen.tls.keyFile: ... does not
// match certFile"), all collected, so check-config, start and a reload report
// the same sentences. Start and reload throw one ConfigError; check-config
// prints the issues, and as warnings the certificates that expire soon.
import type { SecureVersion } from 'node:tls';
import { ConfigError, type ListenerTlsConfig, type TlsClientConfig } from './config.ts';
import { readConfigFile } from './config-files.ts';
import { ConfigIssueCode, ConfigWarningCode, type ConfigIssue, type ConfigWarning } from './config-issues.ts';
import { join } from './config-checker.ts';
import { checkCaCertificates, checkCertificates, checkPrivateKey, keyMatchesCertificate, type CertificateChain } from './pem-checks.ts';

/** PEM files are small; a chain of a dozen certificates is some 20 kB. */
const MAX_PEM_BYTES = 1024 * 1024;
const CODE = ConfigIssueCode.InvalidTlsFile;

/** What node:tls takes for a listener (tls.createServer / setSecureContext). */
export interface ListenerTlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** Client certificates are checked against these; undefined with clientAuth "none". */
  ca: Buffer | undefined;
  requestCert: boolean;
  rejectUnauthorized: boolean;
  minVersion: SecureVersion;
}

/** What node:tls takes for a client connection (tls.connect, an https.Agent). */
export interface ClientTlsMaterial {
  ca: Buffer | undefined;
  cert: Buffer | undefined;
  key: Buffer | undefined;
  servername: string | undefined;
  minVersion: SecureVersion;
}

interface Reader {
  source: string | null;
  env: NodeJS.ProcessEnv;
  nowMs: number;
  issues: ConfigIssue[];
  warnings: ConfigWarning[];
}

/** What check-config prints for a TLS section: its problems and its warnings. */
export interface TlsFileReport {
  issues: ConfigIssue[];
  warnings: ConfigWarning[];
}

function reader(source: string | null, env: NodeJS.ProcessEnv, nowMs: number): Reader {
  return { source, env, nowMs, issues: [], warnings: [] };
}

function addChain(r: Reader, at: string, chain: CertificateChain): void {
  for (const problem of chain.problems) r.issues.push({ code: CODE, path: at, message: problem });
  for (const warning of chain.warnings) r.warnings.push({ code: ConfigWarningCode.CertificateExpiresSoon, path: at, message: warning });
}

/** Reads one file; undefined (and an issue) when it cannot be read. */
function read(r: Reader, at: string, file: string): Buffer | undefined {
  try {
    return readConfigFile(r.source, at, file, r.env, MAX_PEM_BYTES, CODE).bytes;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    r.issues.push(...err.issues.map((i) => ({ ...i, code: CODE })));
    return undefined;
  }
}

/** A file of CA certificates: its bytes when it holds at least one, its problems as issues. */
function caCertificates(r: Reader, at: string, file: string): Buffer | undefined {
  const bytes = read(r, at, file);
  if (bytes === undefined) return undefined;
  const chain = checkCaCertificates(bytes, r.nowMs);
  addChain(r, at, chain);
  return chain.certificates.length > 0 && chain.problems.length === 0 ? bytes : undefined;
}

/** A certificate file and its key: both read, parsed and matched. */
function certificateAndKey(r: Reader, at: string, certFile: string, keyFile: string): { cert: Buffer | undefined; key: Buffer | undefined } {
  const certAt = join(at, 'certFile');
  const keyAt = join(at, 'keyFile');
  // Each file read and checked in turn, so its problems are listed together, certFile's first.
  const cert = read(r, certAt, certFile);
  const chain = cert === undefined ? undefined : checkCertificates(cert, r.nowMs);
  if (chain !== undefined) addChain(r, certAt, chain);
  const key = read(r, keyAt, keyFile);
  const parsed = key === undefined ? undefined : checkPrivateKey(key);
  if (parsed?.problem !== undefined) r.issues.push({ code: CODE, path: keyAt, message: parsed.problem });
  const leaf = chain?.certificates[0];
  const privateKey = parsed?.key;
  if (leaf !== undefined && privateKey !== undefined && !keyMatchesCertificate(leaf, privateKey)) {
    // A chain in the wrong order (intermediate first) fails the handshake just
    // the same, but the fix is in certFile, not in keyFile.
    const own = chain?.certificates.find((c) => keyMatchesCertificate(c, privateKey));
    if (own !== undefined) {
      r.issues.push({ code: CODE, path: certAt, message: `starts with ${oneLine(leaf.subject)}, but the key in keyFile belongs to ${oneLine(own.subject)} further down: put that certificate first, then its intermediates (leaf first)` });
    } else {
      r.issues.push({ code: CODE, path: keyAt, message: `does not match the certificate in certFile (${oneLine(leaf.subject)}): give the key that certificate was issued for` });
    }
  }
  return { cert, key };
}

function oneLine(subject: string): string {
  return subject.replace(/\n/g, ', ');
}

/** The problems and warnings of a listener's files (both empty when all is well). */
export function checkListenerTlsFiles(source: string | null, at: string, tls: ListenerTlsConfig, env: NodeJS.ProcessEnv, nowMs: number): TlsFileReport {
  const r = reader(source, env, nowMs);
  readListener(r, at, tls);
  return { issues: r.issues, warnings: r.warnings };
}

/** A listener's material; throws one ConfigError listing every problem. */
export function loadListenerTls(source: string | null, at: string, tls: ListenerTlsConfig, env: NodeJS.ProcessEnv, nowMs = Date.now()): ListenerTlsMaterial {
  const { issues, material } = readListener(reader(source, env, nowMs), at, tls);
  if (material === undefined || issues.length > 0) throw new ConfigError(source, issues);
  return material;
}

function readListener(r: Reader, at: string, tls: ListenerTlsConfig): { issues: ConfigIssue[]; material: ListenerTlsMaterial | undefined } {
  const { cert, key } = certificateAndKey(r, at, tls.certFile, tls.keyFile);
  let ca: Buffer | undefined;
  if (tls.clientAuth !== 'none' && tls.clientCaFile !== null) ca = caCertificates(r, join(at, 'clientCaFile'), tls.clientCaFile);
  if (cert === undefined || key === undefined) return { issues: r.issues, material: undefined };
  return {
    issues: r.issues,
    material: { cert, key, ca, requestCert: tls.clientAuth !== 'none', rejectUnauthorized: tls.clientAuth === 'required', minVersion: tls.minVersion },
  };
}

/** The problems and warnings of a client section's files (both empty when all is well). */
export function checkClientTlsFiles(source: string | null, at: string, tls: TlsClientConfig, env: NodeJS.ProcessEnv, nowMs: number): TlsFileReport {
  const r = reader(source, env, nowMs);
  readClient(r, at, tls);
  return { issues: r.issues, warnings: r.warnings };
}

/** A client section's material; throws one ConfigError listing every problem. */
export function loadClientTls(source: string | null, at: string, tls: TlsClientConfig, env: NodeJS.ProcessEnv, nowMs = Date.now()): ClientTlsMaterial {
  const { issues, material } = readClient(reader(source, env, nowMs), at, tls);
  if (issues.length > 0) throw new ConfigError(source, issues);
  return material;
}

function readClient(r: Reader, at: string, tls: TlsClientConfig): { issues: ConfigIssue[]; material: ClientTlsMaterial } {
  const ca = tls.caFile === null ? undefined : caCertificates(r, join(at, 'caFile'), tls.caFile);
  let pair: { cert: Buffer | undefined; key: Buffer | undefined } = { cert: undefined, key: undefined };
  if (tls.certFile !== null && tls.keyFile !== null) pair = certificateAndKey(r, at, tls.certFile, tls.keyFile);
  return { issues: r.issues, material: { ca, ...pair, servername: tls.serverName ?? undefined, minVersion: tls.minVersion } };
}
