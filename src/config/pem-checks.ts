// What is wrong with the bytes of a PEM file, as sentences naming the fix:
// certificates that do not parse or are out of date, a key that does not parse
// or is encrypted, a certificate and key that do not belong together. Pure
// (node:crypto parses; nothing is read or written); ./tls-files.ts reads the
// files and puts each problem under its setting.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

const BEGIN_CERTIFICATE = '-----BEGIN CERTIFICATE-----';
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** A certificate this close to its end is a warning: time to renew it. */
export const EXPIRY_WARNING_DAYS = 30;
const EXPIRY_WARNING_MS = EXPIRY_WARNING_DAYS * 86_400_000;

export interface CertificateChain {
  certificates: X509Certificate[];
  problems: string[];
  /** Certificates in date but expiring within EXPIRY_WARNING_DAYS, each with its date. */
  warnings: string[];
}

/**
 * Every certificate in `pem`, and what is wrong with them: none at all, one
 * that does not parse, one expired or not yet valid at `nowMs` (each named by
 * its subject and dates, so the operator knows which to renew); and, as
 * warnings, those that expire within EXPIRY_WARNING_DAYS of `nowMs`.
 */
export function checkCertificates(pem: Buffer, nowMs: number): CertificateChain {
  const text = pem.toString('latin1');
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    const hint = text.includes('PRIVATE KEY-----') ? ' (it holds a private key: is it the key file?)' : '';
    return { certificates: [], problems: [`holds no PEM certificate ("${BEGIN_CERTIFICATE}")${hint}`], warnings: [] };
  }
  const certificates: X509Certificate[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  blocks.forEach((block, i) => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch {
      problems.push(`certificate ${i + 1} of ${blocks.length} is not a valid X.509 certificate`);
      return;
    }
    certificates.push(cert);
    const validFrom = Date.parse(cert.validFrom);
    const validTo = Date.parse(cert.validTo);
    const who = `certificate ${i + 1} of ${blocks.length} (${oneLine(cert.subject)})`;
    if (Number.isFinite(validTo) && validTo < nowMs) problems.push(`${who} expired on ${new Date(validTo).toISOString()}; renew it`);
    else if (Number.isFinite(validFrom) && validFrom > nowMs) problems.push(`${who} is not valid until ${new Date(validFrom).toISOString()}; check the clock or the certificate`);
    else if (Number.isFinite(validTo) && validTo - nowMs < EXPIRY_WARNING_MS) warnings.push(`${who} expires on ${new Date(validTo).toISOString()}, within ${EXPIRY_WARNING_DAYS} days; renew it before then`);
  });
  return { certificates, problems, warnings };
}

/**
 * A file of CA certificates (caFile, clientCaFile): a trust list, not a chain.
 * OpenSSL skips a CA that is out of date when it builds a chain, and system
 * bundles carry expired roots, so those are no problem here; the file is one
 * when none of its certificates is valid now, and a warning when every one
 * that is valid expires within EXPIRY_WARNING_DAYS.
 */
export function checkCaCertificates(pem: Buffer, nowMs: number): CertificateChain {
  const all = checkCertificates(pem, nowMs);
  if (all.certificates.length === 0) return all;
  const parseProblems = all.problems.filter((p) => p.endsWith('is not a valid X.509 certificate'));
  const current = all.certificates.filter((c) => Date.parse(c.validFrom) <= nowMs && Date.parse(c.validTo) >= nowMs);
  if (current.length === 0) {
    const n = all.certificates.length;
    const first = all.certificates[0] as X509Certificate;
    return {
      certificates: all.certificates,
      problems: [...parseProblems, `holds no CA certificate valid now (${n === 1 ? 'its one certificate' : `all ${n}`}, e.g. ${oneLine(first.subject)}, valid ${new Date(Date.parse(first.validFrom)).toISOString()} to ${new Date(Date.parse(first.validTo)).toISOString()}); give the CA's current certificate`],
      warnings: [],
    };
  }
  const latest = Math.max(...current.map((c) => Date.parse(c.validTo)));
  const warnings = latest - nowMs < EXPIRY_WARNING_MS ? [`every CA certificate in it expires by ${new Date(latest).toISOString()}, within ${EXPIRY_WARNING_DAYS} days; add the CA's next certificate before then`] : [];
  return { certificates: current, problems: parseProblems, warnings };
}

export interface PrivateKeyCheck {
  key: KeyObject | undefined;
  problem: string | undefined;
}

/** The private key in `pem`, or why it cannot be used. */
export function checkPrivateKey(pem: Buffer): PrivateKeyCheck {
  const text = pem.toString('latin1');
  if (!text.includes('PRIVATE KEY-----')) {
    const hint = text.includes(BEGIN_CERTIFICATE) ? ' (it holds a certificate: is it the certificate file?)' : '';
    return { key: undefined, problem: `holds no PEM private key ("-----BEGIN PRIVATE KEY-----")${hint}` };
  }
  if (text.includes('ENCRYPTED')) return { key: undefined, problem: 'holds an encrypted private key; give it unencrypted (protect the file by its permissions or a systemd credential)' };
  try {
    return { key: createPrivateKey(pem), problem: undefined };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MISSING_PASSPHRASE') return { key: undefined, problem: 'holds an encrypted private key; give it unencrypted (protect the file by its permissions or a systemd credential)' };
    return { key: undefined, problem: 'holds a private key that cannot be parsed' };
  }
}

/** Whether the first certificate of a chain (the leaf) belongs to `key`. */
export function keyMatchesCertificate(leaf: X509Certificate, key: KeyObject): boolean {
  try {
    return leaf.checkPrivateKey(key);
  } catch {
    return false;
  }
}

function oneLine(subject: string): string {
  return subject.replace(/\n/g, ', ');
}
