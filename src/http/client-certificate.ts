// Who a client is by its TLS certificate, on a server that asks for one: the
// listener's (listen.tls or admin.tls with clientAuth "optional" or
// "required"), or a host's https server made with requestCert.
//
// "required": node:tls refuses a client without a valid certificate in the
// handshake (rejectUnauthorized), so every request that arrives is verified.
// "optional": the handshake completes either way; a client that sent no
// certificate is served as on a listener without client authentication, and a
// client that sent one that does not verify (another CA, expired, not for
// client use) gets 403 client_certificate_refused on every request of that
// connection, which then closes. Refusing, rather than serving it as if it had
// sent none, keeps a broken or stolen-but-expired certificate from going
// unnoticed: the operator sees it in the access log, the client in its error.
// A host's server decides this itself (./request-core.ts Arrival): what its
// handshake let through is served, the reason it did not verify logged.
//
// Looked up once per connection (a keep-alive connection carries one handshake).
import type { TLSSocket } from 'node:tls';
import { ApiError } from '../errors/api-error.ts';

export type ClientCertificate =
  | { kind: 'absent' }
  /** `subject` as "CN=alice, O=Example"; `sha256` the fingerprint's first 8 bytes, as openssl prints it. */
  | { kind: 'verified'; subject: string; sha256: string }
  /** `reason` is OpenSSL's verification code, e.g. CERT_HAS_EXPIRED. */
  | { kind: 'unverified'; reason: string };

/** Subjects are short in practice; a hostile one must not blow up a log line. */
const MAX_SUBJECT_CHARS = 256;
/** "AB:CD:..." for 8 bytes: enough to tell certificates apart in a log, short enough to read. */
const FINGERPRINT_CHARS = 8 * 3 - 1;

const seen = new WeakMap<TLSSocket, ClientCertificate>();

/** The client certificate of the connection `socket` (a TLS socket of a listener that requests one). */
export function clientCertificateOf(socket: TLSSocket): ClientCertificate {
  let found = seen.get(socket);
  if (found === undefined) {
    found = identify(socket);
    seen.set(socket, found);
  }
  return found;
}

function identify(socket: TLSSocket): ClientCertificate {
  const peer = socket.getPeerX509Certificate();
  if (peer === undefined) return { kind: 'absent' };
  if (!socket.authorized) {
    // Typed as an Error, but node sets OpenSSL's code, a string, on a server's socket.
    const reason: unknown = socket.authorizationError;
    return { kind: 'unverified', reason: typeof reason === 'string' ? reason : 'UNVERIFIED' };
  }
  const subject = peer.subject.replace(/\n/g, ', ');
  return {
    kind: 'verified',
    subject: subject.length > MAX_SUBJECT_CHARS ? `${subject.slice(0, MAX_SUBJECT_CHARS)}...` : subject,
    sha256: peer.fingerprint256.slice(0, FINGERPRINT_CHARS),
  };
}

/** 403 for a connection whose client certificate did not verify (clientAuth "optional"). */
export function clientCertificateRefused(reason: string): ApiError {
  return new ApiError('client_certificate_refused', `The TLS client certificate was refused: ${why(reason)} (${reason}). Connect with a valid certificate, or without one.`);
}

/** OpenSSL's verification codes (X509_V_ERR_*) a client's owner can act on, in words. */
function why(reason: string): string {
  switch (reason) {
    case 'CERT_HAS_EXPIRED':
      return 'it has expired';
    case 'CERT_NOT_YET_VALID':
      return 'it is not valid yet';
    case 'INVALID_PURPOSE':
      return 'it is not made for client authentication (its extendedKeyUsage lacks clientAuth)';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'CERT_SIGNATURE_FAILURE':
      return 'it is not issued by a certificate authority this server trusts';
    case 'CERT_REVOKED':
      return 'it is revoked';
    default:
      return 'it did not verify';
  }
}
