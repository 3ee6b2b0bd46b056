// The TLS sections of the config: a listener's (listen.tls, admin.tls) and a
// client's (providers.*.tls, state.redis.tls). Only their shape is checked
// here; whether the files exist, hold valid PEM, match and are in date is
// checked where they are read (./tls-files.ts), at start, on reload and by
// check-config.
import { isIP } from 'node:net';
import type { ListenerTlsConfig, TlsClientConfig, TlsMinVersion } from './config.ts';
import { join, type Checker } from './config-checker.ts';

const MIN_VERSIONS: readonly TlsMinVersion[] = ['TLSv1.2', 'TLSv1.3'];
const CLIENT_AUTH = ['none', 'optional', 'required'] as const;
/** A DNS name (SNI carries no IP address). */
const SERVER_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export const LISTENER_TLS_SETTINGS = ['certFile', 'keyFile', 'clientCaFile', 'clientAuth', 'minVersion'] as const;
export const CLIENT_TLS_SETTINGS = ['caFile', 'certFile', 'keyFile', 'serverName', 'minVersion'] as const;

/** listen.tls or admin.tls; undefined when the value is not an object. */
export function parseListenerTls(c: Checker, value: unknown, at: string): ListenerTlsConfig | undefined {
  const o = c.object(value, at, LISTENER_TLS_SETTINGS);
  if (o === undefined) return undefined;
  const certFile = o['certFile'] === undefined ? c.report(join(at, 'certFile'), { code: 'required', hint: '(a PEM certificate chain)' }) : c.string(o['certFile'], join(at, 'certFile'));
  const keyFile = o['keyFile'] === undefined ? c.report(join(at, 'keyFile'), { code: 'required', hint: '(the PEM private key of certFile)' }) : c.string(o['keyFile'], join(at, 'keyFile'));
  const clientCaFile = c.optional(o, 'clientCaFile', at, null, (v, vat) => c.string(v, vat));
  const clientAuth = c.optional(o, 'clientAuth', at, clientCaFile === null ? 'none' : 'required', (v, vat) => c.oneOf(v, vat, CLIENT_AUTH));
  if (clientAuth !== 'none' && clientCaFile === null && o['clientCaFile'] === undefined) {
    c.report(join(at, 'clientCaFile'), { code: 'required', hint: `with "clientAuth": "${clientAuth}" (the CA certificates client certificates are checked against)` });
  }
  if (clientAuth === 'none' && clientCaFile !== null) {
    c.report(join(at, 'clientAuth'), { code: 'conflict', message: 'is "none", so clientCaFile would never be used: set "optional" or "required", or remove clientCaFile' });
  }
  return {
    certFile: certFile ?? '',
    keyFile: keyFile ?? '',
    clientCaFile,
    clientAuth,
    minVersion: parseMinVersion(c, o, at),
  };
}

/** providers.*.tls or state.redis.tls; undefined when the value is not an object. */
export function parseClientTls(c: Checker, value: unknown, at: string): TlsClientConfig | undefined {
  const o = c.object(value, at, CLIENT_TLS_SETTINGS);
  if (o === undefined) return undefined;
  const file = (key: string): string | null => c.optional(o, key, at, null, (v, vat) => c.string(v, vat));
  const certFile = file('certFile');
  const keyFile = file('keyFile');
  if ((o['certFile'] === undefined) !== (o['keyFile'] === undefined)) {
    const missing = o['certFile'] === undefined ? 'certFile' : 'keyFile';
    c.report(join(at, missing), { code: 'required', hint: 'when a client certificate is configured: certFile and keyFile go together' });
  }
  const serverName = c.optional(o, 'serverName', at, null, (v, vat) => {
    const name = c.string(v, vat);
    // "10.0.0.5" matches the DNS pattern (digit-only labels are legal) but is an address, which SNI never carries.
    if (name === undefined || (SERVER_NAME.test(name) && isIP(name) === 0)) return name;
    return c.report(vat, { code: 'invalid_value', message: 'must be a DNS name such as "llm.internal" (the name in the server\'s certificate)' });
  });
  return { caFile: file('caFile'), certFile, keyFile, serverName, minVersion: parseMinVersion(c, o, at) };
}

function parseMinVersion(c: Checker, o: Record<string, unknown>, at: string): TlsMinVersion {
  return c.optional(o, 'minVersion', at, 'TLSv1.2' as TlsMinVersion, (v, vat) => c.oneOf(v, vat, MIN_VERSIONS));
}
