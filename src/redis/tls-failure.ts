// What a failed TLS connection to Redis means and which setting fixes it. Pure:
// the client passes the socket's error and the names its settings have in the
// config; nothing here touches a socket.
//
// Codes come from two places: certificate verification on our side
// (X509_V_ERR_* names as node:tls reports them, and ERR_TLS_CERT_ALTNAME_INVALID),
// and alerts the server sent or OpenSSL raised (ERR_SSL_*). OpenSSL 3.0 and 3.5
// name a few of the latter differently, so the table holds both spellings.

/** Where the client's settings live, named in the fixes ("state.redis.tls"). */
export interface RedisSettingNames {
  url: string;
  tls: string;
}

export interface TlsFailure {
  /** The error's code as node:tls gave it, e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE. */
  code: string;
  /** OpenSSL's words for it ("tlsv13 alert certificate required"), without its file and line. */
  reason: string;
  /** The setting that fixes it; null when no client setting can (an expired server certificate). */
  setting: string | null;
  /** One sentence saying what to change. */
  fix: string;
}

const Cause = {
  UntrustedServer: 'untrusted_server',
  NameMismatch: 'name_mismatch',
  ServerExpired: 'server_expired',
  ServerNotYetValid: 'server_not_yet_valid',
  ClientCertificateMissing: 'client_certificate_missing',
  ClientCertificateRefused: 'client_certificate_refused',
  Version: 'version',
  NotTls: 'not_tls',
} as const;
type Cause = (typeof Cause)[keyof typeof Cause];

const CAUSES: ReadonlyMap<string, Cause> = new Map<string, Cause>([
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', Cause.UntrustedServer],
  ['UNABLE_TO_GET_ISSUER_CERT', Cause.UntrustedServer],
  ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', Cause.UntrustedServer],
  ['SELF_SIGNED_CERT_IN_CHAIN', Cause.UntrustedServer],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', Cause.UntrustedServer],
  ['CERT_SIGNATURE_FAILURE', Cause.UntrustedServer],
  ['CERT_UNTRUSTED', Cause.UntrustedServer],
  ['CERT_REJECTED', Cause.UntrustedServer],
  ['ERR_TLS_CERT_ALTNAME_INVALID', Cause.NameMismatch],
  ['HOSTNAME_MISMATCH', Cause.NameMismatch],
  ['CERT_HAS_EXPIRED', Cause.ServerExpired],
  ['CERT_NOT_YET_VALID', Cause.ServerNotYetValid],
  ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', Cause.ClientCertificateMissing],
  ['ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE', Cause.ClientCertificateMissing],
  ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', Cause.ClientCertificateRefused],
  ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', Cause.ClientCertificateRefused],
  ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN', Cause.ClientCertificateRefused],
  ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED', Cause.ClientCertificateRefused],
  ['ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE', Cause.ClientCertificateRefused],
  ['ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', Cause.Version],
  ['ERR_SSL_UNSUPPORTED_PROTOCOL', Cause.Version],
  ['ERR_SSL_NO_PROTOCOLS_AVAILABLE', Cause.Version],
  ['ERR_SSL_WRONG_VERSION_NUMBER', Cause.NotTls],
  ['ERR_SSL_PACKET_LENGTH_TOO_LONG', Cause.NotTls],
  ['ERR_SSL_RECORD_LAYER_FAILURE', Cause.NotTls],
  ['ERR_SSL_HTTP_REQUEST', Cause.NotTls],
]);

/** The TLS failure in a socket error, or undefined when the error is not about TLS (a refused TCP connect, a reset). */
export function tlsFailureOf(error: unknown, names: RedisSettingNames): TlsFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return undefined;
  // OpenSSL's own errors carry `reason`; their message adds an error queue dump with C file names.
  const opensslReason = (error as { reason?: unknown }).reason;
  const reason = typeof opensslReason === 'string' && opensslReason !== '' ? opensslReason : error.message;
  const cause = CAUSES.get(code);
  if (cause !== undefined) return { code, reason, ...fixFor(cause, names) };
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
    return { code, reason, setting: null, fix: 'the TLS handshake with Redis failed; the Redis server\'s log says why' };
  }
  return undefined;
}

function fixFor(cause: Cause, { url, tls }: RedisSettingNames): { setting: string | null; fix: string } {
  switch (cause) {
    case Cause.UntrustedServer:
      return { setting: `${tls}.caFile`, fix: `set ${tls}.caFile to the CA certificate that issued the Redis server's certificate` };
    case Cause.NameMismatch:
      return { setting: `${tls}.serverName`, fix: `the Redis server's certificate does not name the host of ${url}: use a name it holds in the url, or set ${tls}.serverName to one` };
    case Cause.ServerExpired:
      return { setting: null, fix: 'the Redis server\'s certificate has expired: renew it on the server (its tls-cert-file); no client setting accepts an expired certificate' };
    case Cause.ServerNotYetValid:
      return { setting: null, fix: 'the Redis server\'s certificate is not valid yet: check the clocks of this machine and of the CA' };
    case Cause.ClientCertificateMissing:
      return { setting: `${tls}.certFile`, fix: `Redis requires a client certificate: set ${tls}.certFile and ${tls}.keyFile` };
    case Cause.ClientCertificateRefused:
      return { setting: `${tls}.certFile`, fix: `Redis refused the client certificate: give in ${tls}.certFile one that is in date and issued by a CA in the server's tls-ca-cert-file` };
    case Cause.Version:
      return { setting: `${tls}.minVersion`, fix: `Redis and this gateway share no TLS version: lower ${tls}.minVersion or raise the server's tls-protocols` };
    case Cause.NotTls:
      return { setting: url, fix: `the server does not speak TLS on this port: put its tls-port in ${url}, or use redis:// for a plain port` };
  }
}
