// SIGHUP for `portcullis serve`: reload the config file, the TLS listeners'
// certificates and the keys, all or nothing, one reload at a time.
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import type { Gateway, PreparedReload } from '../gateway/gateway.ts';
import { KeyStoreError } from '../keys/errors.ts';
import type { KeyStore } from '../state/key-store-port.ts';
import type { LevelledLogger, LogLevel } from '../log/logger.ts';

interface ReloaderOptions {
  gateway: Gateway;
  keys: KeyStore;
  logger: LevelledLogger;
  load: () => GatewayConfig;
  source: () => string | null;
  levelFromFlag: LogLevel | undefined;
  stopping: () => boolean;
  /**
   * The TLS listeners' files, read again without serving them (throws
   * ConfigError naming the bad setting); commit() swaps them in.
   */
  certificates?: { prepare(): { commit(): void } };
  /** Told the outcome of each reload (systemd status, metrics). */
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

  const refuse = (source: string, problemPath: string | null, problem: string): void => {
    logger.error('reload refused; keeping the running configuration', { source, path: problemPath, problem });
  };

  async function reloadOnce(): Promise<void> {
    const source = options.source();
    let prepared: PreparedReload;
    let certificates: { commit(): void } | undefined;
    try {
      prepared = gateway.prepareReload(options.load());
      certificates = options.certificates?.prepare();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // The message starts with the file; the source field carries it already.
      const problem = err.problem;
      refuse(source ?? 'embedded', err.path === '' ? null : err.path, problem);
      options.onOutcome?.({ ok: false, problem });
      return;
    }
    let keysRead: { commit(): void };
    try {
      keysRead = await keys.prepareReload();
    } catch (err) {
      if (!(err instanceof KeyStoreError)) throw err;
      refuse(keys.location, null, err.message);
      options.onOutcome?.({ ok: false, problem: err.message });
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
