// SIGHUP for `portcullis serve`: reload the config file, the TLS listeners'
// certificates and the keys, all or nothing (src/library/reload-sequence.ts,
// the sequence an embedded gateway's reload() runs too). Signals coalesce: a
// SIGHUP during a reload runs exactly one more after it.
import type { AuditActor, AuditTrail } from '../audit/audit-event.ts';
import type { GatewayConfig } from '../config/config.ts';
import type { Gateway } from '../gateway/gateway.ts';
import type { KeyStore } from '../state/key-store-port.ts';
import type { LevelledLogger, LogLevel } from '../log/logger.ts';
import { createReloadSequence } from '../library/reload-sequence.ts';

/** Who a SIGHUP reload is, in its audit record. */
const SIGNAL_ACTOR: AuditActor = { kind: 'system', id: 'serve' };

interface ReloaderOptions {
  gateway: Pick<Gateway, 'prepareReload' | 'config'>;
  keys: Pick<KeyStore, 'prepareReload' | 'location'>;
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

export function createReloader(options: ReloaderOptions): { request(): void } {
  const { logger } = options;
  const sequence = createReloadSequence({
    gateway: options.gateway,
    keys: options.keys,
    logger,
    audit: options.audit,
    actor: SIGNAL_ACTOR,
    origin: 'signal',
    target: () => options.source() ?? 'embedded',
    loaded: options.loaded,
    // --log-level wins over the file for the life of the process.
    ...(options.levelFromFlag === undefined ? { setLevel: (level: LogLevel) => logger.setLevel(level) } : {}),
    stopping: options.stopping,
    ...(options.onOutcome === undefined ? {} : { onOutcome: (outcome) => options.onOutcome?.(outcome.ok ? { ok: true } : { ok: false, problem: outcome.problem }) }),
  });
  const certificates = options.certificates;
  let reloading = false;
  let again = false;
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
            await sequence.run({ load: options.load, ...(certificates === undefined ? {} : { extra: () => certificates.prepare() }) });
          } while (again && !options.stopping());
        } finally {
          reloading = false;
        }
      })();
    },
  };
}
