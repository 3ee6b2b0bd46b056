// What node:tls takes for a listener's TLS (listen.tls, admin.tls, read by
// loadListenerTls), and what a failed handshake tells the log.
import type { TLSSocket } from 'node:tls';
import type { ListenerTlsMaterial } from '../config/tls-files.ts';
import type { LogFields } from '../log/logger.ts';

/** The parts of the material that make a secure context: what setSecureContext can change. */
export function secureContextOptions(material: ListenerTlsMaterial): { cert: Buffer; key: Buffer; ca?: Buffer; minVersion: ListenerTlsMaterial['minVersion'] } {
  return { cert: material.cert, key: material.key, ...(material.ca === undefined ? {} : { ca: material.ca }), minVersion: material.minVersion };
}

/** https.createServer's TLS options; whether client certificates are asked for is fixed here, for the server's life. */
export function serverTlsOptions(material: ListenerTlsMaterial): ReturnType<typeof secureContextOptions> & { requestCert: boolean; rejectUnauthorized: boolean } {
  return { ...secureContextOptions(material), requestCert: material.requestCert, rejectUnauthorized: material.rejectUnauthorized };
}

/**
 * The fields of a "TLS handshake failed" line: node's error code, or for a
 * client certificate that failed verification (clientAuth "required"), which
 * node reports as a reset of the socket it closed, the reason it left on the
 * socket (CERT_HAS_EXPIRED); the client's address while the socket had one.
 */
export function handshakeFailure(err: NodeJS.ErrnoException, socket: TLSSocket): LogFields {
  const reason: unknown = socket.authorizationError;
  return { code: typeof reason === 'string' ? reason : (err.code ?? err.name), remote: socket.remoteAddress ?? null };
}
