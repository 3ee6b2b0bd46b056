// SIGHUP for `portcullis serve`: reload the config file, the TLS listeners'
// certificates and the keys, all or nothing, one reload at a time.
import type { AuditActor, AuditTrail } from '../audit/audit-event.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { configChange, MAX_CHANGED_PATHS } from '../config/config-change.ts';
import type { Gateway, PreparedReload } from '../gateway/gateway.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { FileError } from '../files/errors.ts';
import type { KeyStore } from '../state/key-store-port.ts';
import type { LevelledLogger, LogLevel } from '../log/logger.ts';

/**
 * What an accepted reload's record says (docs/audit.md, `config.reload`): the
 * digests of the new and the replaced config, the settings that differ, and
 * those among the restart-only ones that keep their running value.
 */
type AcceptedDetail = ReturnType<typeof configChange> & { restartNeeded: string[] };

/** Who a SIGHUP reload is, in its audit record. */
const SIGNAL_ACTOR: AuditActor = { kind: 'system', id: 'serve' };

interface ReloaderOptions {
  gateway: Gateway;
  keys: KeyStore;
  logger: LevelledLogger;
  load: () => GatewayConfig;
  /** The config as loaded at start (before anything derived from the machine): what the first reload is compared with. */
  loaded: GatewayConfig;
  source: () => string | null;
  levelFromFlag: LogLevel | undefined;
  stopping: () => boolean;
  /**
   * The TLS listeners' files, read again without serving them (throws
   * ConfigError naming the bad setting); commit() swaps them in.
   */
  certificates?: { prepare(): { commit(): void } };
  /** Where each reload, accepted or refused, is recorded (docs/audit.md, "What each door records"). */
  audit: AuditTrail;
  /** Told the outcome of each reload (systemd status, metrics), after it was recorded. */
  onOutcome?: (outcome: { ok: true } | { ok: false; problem: string }) => void;
}

/**
 * SIGHUP: reload the config file, the certificates and the keys, all or
 * nothing. The new config is read, checked and built without serving it, the
 * certificates are read and checked (a bad one refuses the reload and the
 * running ones keep serving), and the keys are read without serving them (a
 * broken keys.json refuses the reload and the last good keys stay); only then
 * all are swapped in, in one synchronous step. Reloads never
 * overlap: a SIGHUP during one runs one more after it.
 */
export function createReloader(options: ReloaderOptions): { request(): void } {
  const { gateway, keys, logger } = options;
  let reloading = false;
  let again = false;

  /** The config the last accepted reload (or the start) loaded: what the next reload is compared with. */
  let last = options.loaded;

  /** The record of one reload; its target is the config file a reload reads, or "embedded". */
  const recordReload = (detail: { problem: string; path: string | null } | AcceptedDetail): Promise<void> =>
    options.audit.record({
      actor: SIGNAL_ACTOR,
      source: 'signal',
      action: 'problem' in detail ? 'config.reload_refused' : 'config.reload',
      target: options.source() ?? 'embedded',
      before: null,
      after: null,
      detail: { ...detail },
    });

  /** `problemPath`: the setting at fault; the record names the keys' location for a keys problem. */
  const refuse = async (source: string, problemPath: string | null, problem: string, recordedPath = problemPath): Promise<void> => {
    logger.error('reload refused; keeping the running configuration', { source, path: problemPath, problem });
    await recordReload({ problem, path: recordedPath });
    options.onOutcome?.({ ok: false, problem });
  };

  async function reloadOnce(): Promise<void> {
    const source = options.source();
    let next: GatewayConfig;
    let prepared: PreparedReload;
    let certificates: { commit(): void } | undefined;
    try {
      next = options.load();
      prepared = gateway.prepareReload(next);
      certificates = options.certificates?.prepare();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // The message starts with the file; the source field carries it already.
      const problem = err.problem;
      await refuse(source ?? 'embedded', err.path === '' ? null : err.path, problem);
      return;
    }
    let keysRead: { commit(): void };
    try {
      keysRead = await keys.prepareReload();
    } catch (err) {
      if (!(err instanceof KeyStoreError || err instanceof FileError)) throw err;
      await refuse(keys.location, null, err.message, keys.location);
      return;
    }
    // A shutdown that began meanwhile serves no new requests: nothing to swap.
    if (options.stopping()) return;
    // Keys and config change together, in one synchronous step: no request sees one without the other.
    keysRead.commit();
    prepared.commit();
    // Open connections keep the certificates they began with.
    certificates?.commit();
    if (options.levelFromFlag === undefined) logger.setLevel(gateway.config.log.level);
    const change = configChange(last, next);
    last = next;
    const restartNeeded = prepared.summary.restartNeeded.map((c) => c.setting);
    await recordReload({ ...change, restartNeeded: restartNeeded.slice(0, MAX_CHANGED_PATHS) });
    options.onOutcome?.({ ok: true });
  }

  return {
    request() {
      if (options.stopping()) return;
      if (reloading) {
        again = true;
        return;
      }
      reloading = true;
      void (async () => {
        try {
          do {
            again = false;
            try {
              await reloadOnce();
            } catch (err) {
              logger.error('reload failed; keeping the running configuration', { error: err instanceof Error ? err.message : String(err) });
              await recordReload({ problem: 'unexpected error', path: null });
              options.onOutcome?.({ ok: false, problem: 'unexpected error' });
            }
          } while (again && !options.stopping());
        } finally {
          reloading = false;
        }
      })();
    },
  };
}
