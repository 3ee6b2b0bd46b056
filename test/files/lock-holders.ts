// Who a lock file can name, for the lock tests: a pid that no process has.
import { readFileSync } from 'node:fs';

/** Linux's default pid_max; the search starts below the real one when /proc says it. */
const DEFAULT_PID_MAX = 32_768;

function pidMax(): number {
  try {
    const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
    return Number.isSafeInteger(max) && max > 2 ? max : DEFAULT_PID_MAX;
  } catch {
    return DEFAULT_PID_MAX;
  }
}

/**
 * A pid no process has right now: the highest below pid_max that signal 0
 * finds no process for (ESRCH, as the lock judges a holder dead). Pids are
 * handed out upwards from low numbers, so one this high stays free for the
 * test's few milliseconds; no child process has to be started and reaped for it.
 */
export function pidOfNoProcess(): number {
  for (let pid = pidMax() - 1; pid > 1; pid--) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
  throw new Error('every pid is taken');
}
