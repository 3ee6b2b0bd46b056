// Servers a test process starts for itself (redis-server, tinyproxy) must not
// outlive it. At a normal exit the 'exit' handler kills them; but a test
// process that is killed (a file over its timeout, Ctrl-C, SIGKILL) runs no
// handler, and a server left behind holds its port and memory until the
// machine restarts. So a watchdog shell, one per test process, is told the
// pid of each server on a pipe and kills those still alive when the pipe
// closes, which the kernel does however this process ends.
import { spawn, type ChildProcess } from 'node:child_process';

/** Reads "+ pid" and "- pid" lines; at end of input, SIGKILLs the pids added and not removed. */
const WATCHDOG_SCRIPT = `
alive=''
while read -r op pid; do
  case $op in
    +) alive="$alive $pid" ;;
    -) rest=''; for p in $alive; do [ "$p" = "$pid" ] || rest="$rest $p"; done; alive=$rest ;;
  esac
done
[ -z "$alive" ] || kill -KILL $alive 2>/dev/null
exit 0
`;

const children = new Set<ChildProcess>();
let watchdog: ChildProcess | undefined;

function tell(line: string): void {
  if (watchdog === undefined) {
    watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'] });
    // It must not keep this process alive: it is there for when this process is gone.
    unrefChild(watchdog);
    watchdog.stdin?.on('error', () => undefined);
    process.once('exit', () => {
      for (const child of children) child.kill('SIGKILL');
    });
  }
  watchdog.stdin?.write(line);
}

/** Kills `child` when this process ends, normally or not, unless it has exited by then. */
export function killWithThisProcess(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  children.add(child);
  tell(`+ ${pid}\n`);
  child.once('exit', () => {
    children.delete(child);
    tell(`- ${pid}\n`);
  });
}

/** `child` and its pipes no longer keep this process running: a server shared by a process's files ends with it. */
export function unrefChild(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
}
