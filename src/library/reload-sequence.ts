// A reload, all or nothing: the sequence behind the embedded gateway's
// reload() (which `portcullis serve` calls on SIGHUP). The new config is read, checked and
// built without serving it, extra material (the listeners' certificates) is
// read and checked, the keys are read without serving them; only when all of
// that succeeded is everything swapped in, in one synchronous step, so no
// request sees new keys with the old config or the other way round. Both
// outcomes leave one audit record (docs/audit.md, config.reload and
// config.reload_refused). Runs never overlap: one asked for during another
// waits for it.
import type { AuditActor, AuditTrail } from '../audit/audit-event.ts';
import { ConfigError, type GatewayConfig } from '../config/config.ts';
import { configChange, MAX_CHANGED_PATHS } from '../config/config-change.ts';
import { ConfigIssueCode, type ConfigIssue } from '../config/config-issues.ts';
import type { Gateway, PreparedReload } from '../gateway/gateway.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { FileError } from '../files/errors.ts';
import type { KeyStore } from '../state/key-store-port.ts';
import type { Logger, LogLevel } from '../log/logger.ts';

/** What one run did; `problem` is the refusal as one sentence (logs, systemd status). */
export type ReloadOutcome =
  | { ok: true; aliases: number; restartNeeded: string[] }
  | { ok: false; issues: readonly ConfigIssue[]; problem: string };

export interface ReloadSequenceOptions {
  gateway: Pick<Gateway, 'prepareReload' | 'config'>;
  keys: Pick<KeyStore, 'prepareReload' | 'location'>;
  logger: Logger;
  audit: AuditTrail;
  /** Who the audit records name, and where from (`{kind:'system', id:'serve'}`, "signal"). */
  actor: AuditActor;
  origin: string;
  /** The record's target: the config file's path, "embedded", ... */
  target: () => string;
  /** The config as given at start: what the first accepted reload is compared with. */
  loaded: GatewayConfig;
  /** Set after each accepted reload with the new log.level (the CLI's logger follows it); absent: the level stays. */
  setLevel?: (level: LogLevel) => void;
  /** True once a shutdown began: a run that gets there commits nothing. */
  stopping: () => boolean;
  /** Told each outcome after it was recorded (systemd status, metrics). */
  onOutcome?: (outcome: ReloadOutcome) => void;
}

/**
 * One reload's input: `load` gives the checked config (throws or rejects with ConfigError),
 * `extra` reads what else swaps with it (throws ConfigError); `who` names this
 * run in its audit record and log lines in place of the sequence's defaults.
 */
export interface ReloadRequest {
  load: () => GatewayConfig | Promise<GatewayConfig>;
  extra?: () => { commit(): void };
  who?: { actor?: AuditActor; origin?: string; target?: string };
}

type Who = { actor: AuditActor; origin: string; target: string };

export interface ReloadSequence {
  /** Runs one reload after those already asked for; resolves to its outcome (never rejects for a config or keys problem). */
  run(request: ReloadRequest): Promise<ReloadOutcome>;
  /** Resolves once every run asked for so far has finished (a shutdown waits for it before closing the audit chain). */
  settled(): Promise<void>;
}

export function createReloadSequence(options: ReloadSequenceOptions): ReloadSequence {
  const { gateway, keys, logger } = options;
  /** The config the last accepted reload (or the start) loaded: what the next one is compared with. */
  let last = options.loaded;
  let queue: Promise<unknown> = Promise.resolve();

  const whoOf = (request: ReloadRequest): Who => ({
    actor: request.who?.actor ?? options.actor,
    origin: request.who?.origin ?? options.origin,
    target: request.who?.target ?? options.target(),
  });

  const record = (who: Who, detail: { problem: string; path: string | null } | (ReturnType<typeof configChange> & { restartNeeded: string[] })): Promise<void> =>
    options.audit.record({
      actor: who.actor,
      source: who.origin,
      action: 'problem' in detail ? 'config.reload_refused' : 'config.reload',
      target: who.target,
      before: null,
      after: null,
      detail: { ...detail },
    });

  /** `recordedPath`: what the record names (the keys' location for a keys problem). */
  const refuse = async (who: Who, source: string, issues: readonly ConfigIssue[], problem: string, recordedPath: string | null): Promise<ReloadOutcome> => {
    const path = issues[0]?.path ?? '';
    logger.error('reload refused; keeping the running configuration', { source, path: path === '' ? null : path, problem });
    await record(who, { problem, path: recordedPath });
    const outcome: ReloadOutcome = { ok: false, issues, problem };
    options.onOutcome?.(outcome);
    return outcome;
  };

  async function once(request: ReloadRequest, who: Who): Promise<ReloadOutcome | null> {
    const source = who.target;
    let next: GatewayConfig;
    let prepared: PreparedReload;
    let extra: { commit(): void } | undefined;
    try {
      next = await request.load();
      prepared = gateway.prepareReload(next);
      extra = request.extra?.();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // The message starts with the source; the log line's source field carries it already.
      return refuse(who, source, err.issues, err.problem, err.path === '' ? null : err.path);
    }
    let keysRead: { commit(): void };
    try {
      keysRead = await keys.prepareReload();
    } catch (err) {
      if (!(err instanceof KeyStoreError || err instanceof FileError)) throw err;
      const issue: ConfigIssue = { code: ConfigIssueCode.InvalidValue, path: '', message: `${keys.location}: ${err.message}` };
      return refuse(who, keys.location, [issue], err.message, keys.location);
    }
    // A shutdown that began meanwhile serves no new requests: nothing to swap.
    if (options.stopping()) return null;
    keysRead.commit();
    prepared.commit();
    // Open connections keep the certificates they began with.
    extra?.commit();
    options.setLevel?.(gateway.config.log.level);
    const change = configChange(last, next);
    last = next;
    const restartNeeded = prepared.summary.restartNeeded.map((c) => c.setting);
    await record(who, { ...change, restartNeeded: restartNeeded.slice(0, MAX_CHANGED_PATHS) });
    const outcome: ReloadOutcome = { ok: true, aliases: prepared.summary.aliases, restartNeeded };
    options.onOutcome?.(outcome);
    return outcome;
  }

  async function guarded(request: ReloadRequest): Promise<ReloadOutcome> {
    const who = whoOf(request);
    try {
      const outcome = await once(request, who);
      if (outcome !== null) return outcome;
      return { ok: false, issues: [{ code: ConfigIssueCode.InvalidValue, path: '', message: 'the gateway is shutting down' }], problem: 'the gateway is shutting down' };
    } catch (err) {
      logger.error('reload failed; keeping the running configuration', { error: err instanceof Error ? err.message : String(err) });
      await record(who, { problem: 'unexpected error', path: null });
      const outcome: ReloadOutcome = { ok: false, issues: [{ code: ConfigIssueCode.InvalidValue, path: '', message: 'unexpected error (see the log)' }], problem: 'unexpected error' };
      options.onOutcome?.(outcome);
      return outcome;
    }
  }

  return {
    run(request) {
      const result = queue.then(() => guarded(request));
      queue = result.catch(() => undefined);
      return result;
    },
    settled: () => queue.then(() => undefined),
  };
}
