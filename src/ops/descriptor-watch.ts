// Running out of file descriptors, noticed. With no descriptor left, libuv
// accepts each waiting connection and closes it at once (its "EMFILE trick")
// and tells node nothing: clients are reset and no gateway code runs, so
// nothing would be logged. The process therefore probes: every second it opens
// and closes the null device; EMFILE or ENFILE there means accepts are failing
// too. An exhaustion is logged when it begins and when it ends (how long, how
// many probes failed), never per failed accept, and counted.
//
// limits.maxConnections is the first defence (refusals with an answer, below
// the descriptor limit); this is for what it does not cover: upstream
// connections, files, a limit set too high for LimitNOFILE.
import { closeSync, openSync, readFileSync } from 'node:fs';
import { devNull } from 'node:os';
import { createBurst } from '../log/burst.ts';
import type { Logger } from '../log/logger.ts';
import { systemScheduler, type Scheduler } from '../time/scheduler.ts';

/** A probe finding descriptors again ends the exhaustion once this long passed since the last failure. */
const QUIET_MS = 1500;
const PROBE_MS = 1000;

export interface DescriptorWatch {
  /** True while the process is out of descriptors. */
  readonly exhausted: boolean;
  stop(): void;
}

interface DescriptorWatchOptions {
  logger: Logger;
  /** Open client connections per listener, for the log line. */
  openConnections: () => Record<string, number>;
  /** Each exhaustion, once (metrics). */
  onExhausted?: () => void;
  /** The process's descriptor limit, for the log line; readDescriptorLimit(). */
  limit: number | null;
  /** Opens and closes one descriptor; throws as fs does. Default: the null device. */
  probe?: () => void;
  intervalMs?: number;
  /** The clock and timers of the probes and the quiet time (default: the system's). */
  scheduler?: Scheduler;
}

export function watchDescriptors(options: DescriptorWatchOptions): DescriptorWatch {
  const { logger } = options;
  const scheduler = options.scheduler ?? systemScheduler;
  const probe = options.probe ?? (() => closeSync(openSync(devNull, 'r')));
  let code = '';
  const burst = createBurst({
    quietMs: QUIET_MS,
    scheduler,
    onStart: () => {
      logger.error('out of file descriptors: new connections are reset until some close', {
        code,
        descriptorLimit: options.limit,
        ...prefixed(options.openConnections()),
      });
      options.onExhausted?.();
    },
    onEnd: ({ count, durationMs }) => logger.info('file descriptors available again', { failedProbes: count, durationMs }),
  });
  const timer = scheduler.setInterval(() => {
    try {
      probe();
    } catch (err) {
      const failure = (err as NodeJS.ErrnoException).code;
      if (failure === 'EMFILE' || failure === 'ENFILE') {
        code = failure;
        burst.hit();
      }
    }
  }, options.intervalMs ?? PROBE_MS);
  timer.unref();
  return {
    get exhausted() {
      return burst.active;
    },
    stop() {
      scheduler.clearTimer(timer);
      burst.close();
    },
  };
}

/** `{ api: 3 }` as `{ openConnectionsApi: 3 }`: log fields that say what they count. */
function prefixed(counts: Record<string, number>): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const [listener, count] of Object.entries(counts)) fields[`openConnections${listener[0]?.toUpperCase() ?? ''}${listener.slice(1)}`] = count;
  return fields;
}

/**
 * The process's soft limit on open descriptors (node raised it to the hard
 * limit at start), from /proc/self/limits; null where that is not readable
 * (not Linux) or says "unlimited".
 */
export function readDescriptorLimit(limitsFile = '/proc/self/limits'): number | null {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'latin1');
  } catch {
    return null;
  }
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : null;
}

/** The most limits.maxConnections derives to: within the unit's LimitNOFILE=65536 at two descriptors a connection. */
export const MAX_DERIVED_CONNECTIONS = 16_384;

/** Descriptors kept for Node itself, the listeners, files, Redis and pooled upstream connections. */
function reserve(limit: number): number {
  return Math.min(256, Math.floor(limit / 4));
}

/**
 * Descriptors `maxConnections` client connections may need on the API
 * listener: each with an upstream connection while it is answered, plus the
 * reserve. (The admin listener is loopback by default and holds a few.)
 */
export function descriptorsNeeded(maxConnections: number, limit: number): number {
  return 2 * maxConnections + reserve(limit);
}

/**
 * limits.maxConnections when the config leaves it unset: as many as fit the
 * descriptor limit (two each, after the reserve), at most 16384; 16384 where
 * the limit is not known. Under a limit of 1024 that is 384: the 385th client
 * is answered 503 instead of the process running out of descriptors.
 */
export function connectionsForDescriptors(limit: number | null): number {
  if (limit === null) return MAX_DERIVED_CONNECTIONS;
  return Math.max(1, Math.min(MAX_DERIVED_CONNECTIONS, Math.floor((limit - reserve(limit)) / 2)));
}

/**
 * At start: warns when a limits.maxConnections set in the config needs more
 * descriptors than the process may open (the unit's LimitNOFILE), then watches
 * for exhaustion.
 */
export function startDescriptorWatch(options: DescriptorWatchOptions & { maxConnections: number; configured: boolean }): DescriptorWatch {
  const { limit } = options;
  if (options.configured && limit !== null && descriptorsNeeded(options.maxConnections, limit) > limit) {
    options.logger.warn('limits.maxConnections needs more file descriptors than this process may open: raise LimitNOFILE or lower limits.maxConnections', {
      maxConnections: options.maxConnections,
      descriptorsNeeded: descriptorsNeeded(options.maxConnections, limit),
      descriptorLimit: limit,
    });
  }
  return watchDescriptors(options);
}
