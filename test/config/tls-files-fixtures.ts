// What both TLS file check test files share: settings made from a test PKI's
// server certificate, and the issues each check reports for them.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ListenerTlsConfig, TlsClientConfig } from '../../src/config/config.ts';
import { checkClientTlsFiles, checkListenerTlsFiles } from '../../src/config/tls-files.ts';

export interface TlsFileChecks {
  /** The config file the settings are relative to (it need not exist). */
  source: string;
  file(name: string, content: string | Buffer): string;
  listener(settings: Partial<ListenerTlsConfig>): ListenerTlsConfig;
  clientTls(settings: Partial<TlsClientConfig>): TlsClientConfig;
  listenerIssues(settings: Partial<ListenerTlsConfig>, env?: NodeJS.ProcessEnv, nowMs?: number): ReturnType<typeof checkListenerTlsFiles>['issues'];
  clientIssues(settings: Partial<TlsClientConfig>, env?: NodeJS.ProcessEnv, nowMs?: number): ReturnType<typeof checkClientTlsFiles>['issues'];
  bad(pathInConfig: string, message: string): { code: string; path: string; message: string };
}

export function tlsFileChecks(dir: string, server: { certFile: string; keyFile: string }): TlsFileChecks {
  const source = path.join(dir, 'config.json');
  const listener = (settings: Partial<ListenerTlsConfig>): ListenerTlsConfig => ({
    certFile: server.certFile,
    keyFile: server.keyFile,
    clientCaFile: null,
    clientAuth: 'none',
    minVersion: 'TLSv1.2',
    ...settings,
  });
  const clientTls = (settings: Partial<TlsClientConfig>): TlsClientConfig => ({ caFile: null, certFile: null, keyFile: null, serverName: null, minVersion: 'TLSv1.2', ...settings });
  return {
    source,
    file(name, content) {
      const p = path.join(dir, name);
      writeFileSync(p, content);
      return p;
    },
    listener,
    clientTls,
    // Certificates are issued through the file (notBefore: the second they were made), so each check takes the clock when it runs.
    listenerIssues: (settings, env = {}, nowMs = Date.now()) => checkListenerTlsFiles(source, 'listen.tls', listener(settings), env, nowMs).issues,
    clientIssues: (settings, env = {}, nowMs = Date.now()) => checkClientTlsFiles(source, 'providers.up.tls', clientTls(settings), env, nowMs).issues,
    bad: (pathInConfig, message) => ({ code: 'invalid_tls_file', path: pathInConfig, message }),
  };
}
