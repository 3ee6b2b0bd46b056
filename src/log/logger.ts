// Structured logs, one JSON object per line. Callers pass only named fields
// chosen for the purpose (ids, statuses, timings): never keys, never prompt
// or completion text, never upstream bodies. A field can still carry what a
// client typed (a key's name, a path, a model name), so every line is passed
// through the secret redaction (./secret-kinds.ts) before it is written.
import { redactSecretText } from './secret-kinds.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** A log record's fields: never undefined (a field not known is left out, or null where the record always has it). */
export type LogFields = Record<string, string | number | boolean | null>;

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** The logger the serve command owns: its level follows `log.level` across reloads. */
export interface LevelledLogger extends Logger {
  readonly level: LogLevel;
  setLevel(level: LogLevel): void;
}

interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  clock?: () => Date;
}

export function createLogger(options: LoggerOptions = {}): LevelledLogger {
  let level: LogLevel = options.level ?? 'info';
  let min = LEVEL_RANK[level];
  const write = options.write ?? batchedStdout();
  const clock = options.clock ?? (() => new Date());
  const log = (level: LogLevel, msg: string, fields?: LogFields): void => {
    if (LEVEL_RANK[level] < min) return;
    // Redacting the serialised line is redacting each string: no character of a
    // secret's alphabet is escaped in JSON, and no match can cross a quote.
    write(`${redactSecretText(JSON.stringify({ time: clock().toISOString(), level, msg, ...fields }))}\n`);
  };
  return {
    debug: (msg, fields) => log('debug', msg, fields),
    info: (msg, fields) => log('info', msg, fields),
    warn: (msg, fields) => log('warn', msg, fields),
    error: (msg, fields) => log('error', msg, fields),
    get level() {
      return level;
    },
    setLevel(next) {
      level = next;
      min = LEVEL_RANK[next];
    },
  };
}

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(LEVEL_RANK, value);
}

/**
 * stdout to a pipe or file is a synchronous write per call on Linux; under load
 * several requests finish in one event-loop turn, so their lines are joined and
 * written once, at the end of the turn. Lines are never dropped or reordered,
 * and a process exiting normally flushes first ('exit' runs synchronously).
 */
function batchedStdout(): (line: string) => void {
  return batchLines((text) => process.stdout.write(text));
}

/** A line sink made by batchLines: flush() writes what is pending now. */
export interface BatchedLines {
  (line: string): void;
  flush(): void;
}

/**
 * Wraps a line sink (stdout, a pipe) so that the lines of one event-loop turn
 * reach it in one call, at the end of the turn. For a `write` option that is a
 * stream write: each call is a system call, a few percent of the gateway's CPU
 * per request when made once per access-log line. With `flushOnExit` (the
 * process's owner, the CLI) lines still pending when the process exits
 * normally are written first; a library-made sink adds no process listener and
 * its owner calls flush() when it closes.
 */
export function batchLines(write: (text: string) => void, options: { flushOnExit?: boolean } = {}): BatchedLines {
  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join('');
    pending = [];
    write(text);
  };
  if (options.flushOnExit !== false) process.once('exit', flush);
  const sink = (line: string): void => {
    pending.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return Object.assign(sink, { flush });
}
