// A host's logger as the gateway calls it. The gateway logs from places where
// a throw has no caller to go to (a response's 'close' listener writes the
// access line), so a host logger that throws there would end the host's
// process. Each call is guarded instead: the record is lost, the gateway keeps
// serving, and the host learns of it on stderr (its logger being what broke),
// once at the first failure and with the count when the gateway closes. The
// record's fields are never written there: they are what the host's logger
// was meant to filter and route.
import type { Logger, LogLevel } from './logger.ts';
import { redactSecretText } from './secret-kinds.ts';

export interface GuardedLogger extends Logger {
  /** How many calls threw so far. */
  readonly failures: number;
  /** Writes the count of lost records when there were any since the first report (at close). */
  reportFailures(): void;
}

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

function describe(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : typeof err;
  return redactSecretText(text);
}

/** `logger` with every method guarded; `report` writes a line for the host's operator (default stderr). */
export function guardLogger(logger: Logger, report: (line: string) => void = (line) => void process.stderr.write(line)): GuardedLogger {
  let failures = 0;
  let reported = 0;
  const tell = (line: string): void => {
    try {
      report(line);
    } catch {
      // Nowhere left to tell it.
    }
  };
  const guarded = (level: LogLevel) => (msg: string, fields?: Parameters<Logger['info']>[1]): void => {
    try {
      logger[level](msg, fields);
    } catch (err) {
      failures++;
      if (failures === 1) {
        reported = 1;
        tell(`portcullis: the host's logger threw on a record at level ${level} ("${redactSecretText(msg)}"): ${describe(err)}; the gateway keeps serving, and records its logger throws on are lost (counted at close)\n`);
      }
    }
  };
  const methods = Object.fromEntries(LEVELS.map((level) => [level, guarded(level)])) as unknown as Logger;
  return {
    ...methods,
    get failures() {
      return failures;
    },
    reportFailures() {
      if (failures === 0 || failures === reported) return;
      reported = failures;
      tell(`portcullis: the host's logger threw on ${failures} record${failures === 1 ? '' : 's'} in all; they were not logged\n`);
    },
  };
}
