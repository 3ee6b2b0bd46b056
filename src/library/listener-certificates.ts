// The certificates of the gateway's TLS listeners (listen.tls, admin.tls):
// read and checked at start, read again on every reload. The
// paths, clientAuth and minVersion are fixed at start (restart-only, see
// src/gateway/restart-settings.ts); what a reload takes is the files' new
// content, so a renewed certificate written over the old one is served
// without a restart. A new file that cannot be used refuses the reload, as a
// bad config does: the old certificates keep serving.
import { X509Certificate } from 'node:crypto';
import { ConfigError, type GatewayConfig, type ListenerTlsConfig } from '../config/config.ts';
import type { ConfigIssue } from '../config/config-issues.ts';
import { loadListenerTls, type ListenerTlsMaterial } from '../config/tls-files.ts';
import { EXPIRY_WARNING_DAYS } from '../config/pem-checks.ts';
import type { Logger } from '../log/logger.ts';

export type ListenerSetting = 'listen.tls' | 'admin.tls';

interface TlsListener {
  at: ListenerSetting;
  tls: ListenerTlsConfig;
  material: ListenerTlsMaterial;
}

export interface ListenerCertificates {
  /** listen.tls's material, when set. */
  readonly api: ListenerTlsMaterial | undefined;
  /** admin.tls's material, when set and the admin listener runs. */
  readonly admin: ListenerTlsMaterial | undefined;
  /** One log line per TLS listener: which certificate it serves, until when. */
  logServed(logger: Logger): void;
  /**
   * Reads every TLS listener's files again, without serving them; throws one
   * ConfigError naming each bad setting. commit() hands them to `apply`.
   */
  prepareReload(nowMs?: number): { commit(apply: (at: ListenerSetting, material: ListenerTlsMaterial) => void, logger: Logger): void };
}

/**
 * The TLS listeners of `config` (admin.tls only when the admin listener runs),
 * their files read and checked; throws one ConfigError naming each bad setting.
 */
export function loadListenerCertificates(config: GatewayConfig, env: NodeJS.ProcessEnv, adminRuns: boolean, nowMs = Date.now()): ListenerCertificates {
  const sections: Array<{ at: ListenerSetting; tls: ListenerTlsConfig }> = [];
  if (config.listen.tls !== null) sections.push({ at: 'listen.tls', tls: config.listen.tls });
  if (adminRuns && config.admin.tls !== null) sections.push({ at: 'admin.tls', tls: config.admin.tls });
  const source = config.source;
  let listeners = readAll(source, sections, env, nowMs);

  return {
    get api() {
      return listeners.find((l) => l.at === 'listen.tls')?.material;
    },
    get admin() {
      return listeners.find((l) => l.at === 'admin.tls')?.material;
    },
    logServed(logger) {
      for (const l of listeners) {
        logger.info('TLS certificate', { listener: l.at, clientAuth: l.tls.clientAuth, ...describe(l.material) });
        warnIfExpiring(logger, l, Date.now());
      }
    },
    prepareReload(now = Date.now()) {
      const next = readAll(source, sections, env, now);
      return {
        commit(apply, logger) {
          for (const l of next) {
            apply(l.at, l.material);
            logger.info('TLS certificate reloaded', { listener: l.at, ...describe(l.material) });
            warnIfExpiring(logger, l, Date.now());
          }
          listeners = next;
        },
      };
    },
  };
}

function readAll(source: string | null, sections: ReadonlyArray<{ at: ListenerSetting; tls: ListenerTlsConfig }>, env: NodeJS.ProcessEnv, nowMs: number): TlsListener[] {
  const issues: ConfigIssue[] = [];
  const read: TlsListener[] = [];
  for (const { at, tls } of sections) {
    try {
      read.push({ at, tls, material: loadListenerTls(source, at, tls, env, nowMs) });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push(...err.issues);
    }
  }
  if (issues.length > 0) throw new ConfigError(source, issues);
  return read;
}

/** The served certificate near its end: the same 30 days check-config warns about, said at start and on each reload. */
function warnIfExpiring(logger: Logger, l: TlsListener, nowMs: number): void {
  const validTo = Date.parse(new X509Certificate(l.material.cert).validTo);
  if (validTo - nowMs >= EXPIRY_WARNING_DAYS * 86_400_000) return;
  logger.warn('TLS certificate expires soon', { listener: l.at, expires: new Date(validTo).toISOString(), withinDays: EXPIRY_WARNING_DAYS });
}

/** The served certificate (the chain's first), as an operator checks it against the file. */
function describe(material: ListenerTlsMaterial): { subject: string; sha256: string; expires: string } {
  const leaf = new X509Certificate(material.cert);
  return { subject: leaf.subject.replace(/\n/g, ', '), sha256: leaf.fingerprint256.slice(0, 23), expires: new Date(leaf.validTo).toISOString() };
}
