// Readiness, reload and stop notifications to systemd (sd_notify(3)).
//
// Node has no AF_UNIX datagram sockets, so the messages go through
// /usr/bin/systemd-notify, spawned once per message. Without --no-block it
// sends BARRIER=1 after the message and waits (up to 5 s) until the manager
// has closed the file descriptor passed with it, that is until the manager
// has processed the message. That removes the classic race in which the
// helper exits before the manager looks up which unit its PID belongs to.
//
// The helper is a child of the gateway and, without CAP_SYS_ADMIN, sends under
// its own PID, so the unit needs NotifyAccess=all (deploy/portcullis.service).
//
// A notification is advisory: a failure never throws into the server. Every
// method resolves with a result (and logs a failure when given a logger); the
// child is killed when it outlives `timeoutMs`.
import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../log/logger.ts';

export const SYSTEMD_NOTIFY_COMMAND = '/usr/bin/systemd-notify';
/** systemd-notify waits 5 s for its barrier; a little more lets its own error show. */
const DEFAULT_NOTIFY_TIMEOUT_MS = 6000;
/** STATUS= is shown by `systemctl status`; longer text is cut. */
export const MAX_STATUS_CHARS = 256;
const MAX_STDERR_BYTES = 1024;
/** Messages are rare (start, reload, stop); more pending than this means the helper hangs. */
const MAX_PENDING = 8;

type SystemdNotifyErrorCode = 'notify_spawn_failed' | 'notify_failed' | 'notify_timeout' | 'notify_queue_full';

class SystemdNotifyError extends Error {
  override name = 'SystemdNotifyError';
  readonly code: SystemdNotifyErrorCode;
  constructor(code: SystemdNotifyErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

const NotifyOutcome = { Sent: 'sent', Skipped: 'skipped', Failed: 'failed' } as const;

/** `skipped`: NOTIFY_SOCKET is not set (not started by systemd, or Type= is not notify). */
type NotifyResult =
  | { outcome: typeof NotifyOutcome.Sent }
  | { outcome: typeof NotifyOutcome.Skipped }
  | { outcome: typeof NotifyOutcome.Failed; error: SystemdNotifyError };

type NotifyMessage =
  | { kind: 'ready'; status: string; mainPid: number }
  | { kind: 'reloading'; monotonicUsec: bigint; status: string | null }
  | { kind: 'stopping'; status: string | null }
  | { kind: 'status'; status: string };

/**
 * STATUS= is one line of a newline-separated message: a line break in it
 * would smuggle in another field (READY=1), so control characters become
 * spaces, and the text is bounded.
 */
export function statusText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length && out.length < MAX_STATUS_CHARS; i++) {
    const code = text.charCodeAt(i);
    out += code < 0x20 || code === 0x7f ? ' ' : text[i];
  }
  // A cut between the halves of a surrogate pair would leave half a character.
  const last = out.charCodeAt(out.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? out.slice(0, -1) : out;
}

/**
 * The systemd-notify arguments for one message (systemd 252 flags: --ready,
 * --status=TEXT, --pid=PID; other fields as VARIABLE=VALUE arguments).
 *
 * READY=1 carries MAINPID= (--pid): a no-op when the gateway is the unit's
 * main process, and the right main PID when it was started through a wrapper.
 * RELOADING=1 carries MONOTONIC_USEC=, which systemd 252 ignores and
 * Type=notify-reload (systemd 253 and later) requires.
 */
export function notifyArguments(message: NotifyMessage): string[] {
  switch (message.kind) {
    case 'ready':
      return ['--ready', `--status=${statusText(message.status)}`, `--pid=${message.mainPid}`];
    case 'reloading':
      return [
        ...(message.status === null ? [] : [`--status=${statusText(message.status)}`]),
        'RELOADING=1',
        `MONOTONIC_USEC=${message.monotonicUsec}`,
      ];
    case 'stopping':
      return [...(message.status === null ? [] : [`--status=${statusText(message.status)}`]), 'STOPPING=1'];
    case 'status':
      return [`--status=${statusText(message.status)}`];
  }
}

export type SpawnFunction = (
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; stdio: ['ignore', 'ignore', 'pipe'] },
) => ChildProcess;

interface SystemdNotifierOptions {
  /** Only NOTIFY_SOCKET is read; the helper gets that variable and nothing else. */
  env: NodeJS.ProcessEnv;
  spawn?: SpawnFunction;
  logger?: Logger;
  /** Defaults to /usr/bin/systemd-notify. */
  command?: string;
  timeoutMs?: number;
  /** PID sent as MAINPID= with READY=1; defaults to process.pid. */
  pid?: number;
  /** CLOCK_MONOTONIC in microseconds; process.hrtime reads that clock on Linux. */
  monotonicUsec?: () => bigint;
}

interface SystemdNotifier {
  /** True when NOTIFY_SOCKET is set; otherwise every call resolves `skipped` at once. */
  readonly enabled: boolean;
  /** READY=1 with a status line: after start (listeners bound) and after each reload. */
  ready(status: string): Promise<NotifyResult>;
  /** RELOADING=1 on SIGHUP; follow it with ready() whether the reload worked or not. */
  reloading(status?: string): Promise<NotifyResult>;
  /** STOPPING=1 on SIGTERM, before the drain. */
  stopping(status?: string): Promise<NotifyResult>;
  status(text: string): Promise<NotifyResult>;
}

export function createSystemdNotifier(options: SystemdNotifierOptions): SystemdNotifier {
  const socket = options.env['NOTIFY_SOCKET'];
  const enabled = socket !== undefined && socket !== '';
  const spawn = options.spawn ?? (nodeSpawn as SpawnFunction);
  const command = options.command ?? SYSTEMD_NOTIFY_COMMAND;
  const timeoutMs = options.timeoutMs ?? DEFAULT_NOTIFY_TIMEOUT_MS;
  const pid = options.pid ?? process.pid;
  const monotonicUsec = options.monotonicUsec ?? (() => process.hrtime.bigint() / 1000n);

  // One helper at a time, so the manager sees messages in the order they were
  // made (READY=1 before a STOPPING=1 that follows at once).
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;

  const send = (message: NotifyMessage): Promise<NotifyResult> => {
    if (!enabled) return Promise.resolve({ outcome: NotifyOutcome.Skipped });
    if (pending >= MAX_PENDING) {
      return Promise.resolve(report(message, new SystemdNotifyError('notify_queue_full', `${pending} notifications are still waiting for ${command}`)));
    }
    pending++;
    const result = queue.then(() => runHelper(message)).finally(() => {
      pending--;
    });
    queue = result;
    return result;
  };

  const runHelper = (message: NotifyMessage): Promise<NotifyResult> =>
    new Promise((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (error: SystemdNotifyError | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(error === null ? { outcome: NotifyOutcome.Sent } : report(message, error));
      };
      let child: ChildProcess;
      try {
        child = spawn(command, notifyArguments(message), { env: { NOTIFY_SOCKET: socket }, stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (err) {
        finish(new SystemdNotifyError('notify_spawn_failed', `cannot start ${command}: ${(err as Error).message}`, { cause: err }));
        return;
      }
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        finish(new SystemdNotifyError('notify_timeout', `${command} did not finish within ${timeoutMs} ms; killed`));
      }, timeoutMs);
      let stderr = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.slice(0, MAX_STDERR_BYTES - stderr.length);
      });
      child.on('error', (err) => {
        finish(new SystemdNotifyError('notify_spawn_failed', `cannot start ${command}: ${err.message}`, { cause: err }));
      });
      child.on('close', (code, signal) => {
        if (code === 0) return finish(null);
        const why = firstLine(stderr) || (signal === null ? `exit status ${code}` : `signal ${signal}`);
        finish(new SystemdNotifyError('notify_failed', `${command} failed: ${why}`));
      });
    });

  const report = (message: NotifyMessage, error: SystemdNotifyError): NotifyResult => {
    options.logger?.warn('systemd notification failed', { notification: message.kind, code: error.code, error: error.message });
    return { outcome: NotifyOutcome.Failed, error };
  };

  return {
    enabled,
    ready: (status) => send({ kind: 'ready', status, mainPid: pid }),
    reloading: (status) => send({ kind: 'reloading', monotonicUsec: monotonicUsec(), status: status ?? null }),
    stopping: (status) => send({ kind: 'stopping', status: status ?? null }),
    status: (text) => send({ kind: 'status', status: text }),
  };
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return (end === -1 ? text : text.slice(0, end)).trim();
}
