// The trail doors record to. This first form writes each event to the log
// stream as one `audit` line; the hash-chained file (and the shared Redis
// chain) build on it.
import type { Logger } from '../log/logger.ts';
import type { AuditEvent, AuditTrail } from './audit-event.ts';

interface AuditTrailOptions {
  logger: Logger;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
}

export function createAuditTrail(options: AuditTrailOptions): AuditTrail {
  const clock = options.clock ?? Date.now;
  return {
    async record(event) {
      options.logger.info('audit', { audit: JSON.stringify({ time: new Date(clock()).toISOString(), ...event }) });
    },
  };
}

export type { AuditEvent, AuditTrail };
