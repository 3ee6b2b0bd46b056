// The `portcullis` command run in this process (runCli, as main.ts runs it)
// with its output captured: for tests of what a command prints, its exit code
// and the files it writes. A child process costs about half a second of CPU;
// the compiled bin as a process (./serve-process.ts, SERVER_MAIN) is kept for
// what only a process shows: signals, pipes, stdin, the exit itself.
import { PassThrough } from 'node:stream';
import type { AuditTrail } from '../../src/audit/audit-event.ts';
import { runCli } from '../../src/cli/main.ts';
import { sink } from '../support/collect.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The working directory the command resolves paths from. */
  cwd: string;
  /** The command's whole environment (nothing of this process's). */
  env?: NodeJS.ProcessEnv;
  /** What the command reads on stdin (admin set-password); empty when absent, never this process's stdin. */
  input?: string;
  /** A trail to record into instead of the command's own chain. */
  audit?: AuditTrail;
}

/** Runs `portcullis ARGS...` in-process: the exit code and everything written to stdout and stderr. */
export async function portcullis(args: readonly string[], options: CliOptions): Promise<CliResult> {
  const stdout = sink();
  const stderr = sink();
  const stdin = new PassThrough();
  stdin.end(options.input ?? '');
  const code = await runCli(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: options.env ?? {},
    cwd: options.cwd,
    stdin,
    ...(options.audit === undefined ? {} : { audit: options.audit }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
