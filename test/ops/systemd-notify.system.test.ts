// The notifier against the real /usr/bin/systemd-notify and a stand-in for the
// service manager: a python3 script that binds an AF_UNIX datagram socket,
// receives each message with recvmsg, closes the descriptors passed with it
// (that completes systemd-notify's BARRIER) and prints what it got; and a
// helper binary that is not there. The rest is systemd-notify.test.ts's.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, test } from 'node:test';
import type { Logger, LogFields } from '../../src/log/logger.ts';
import { SYSTEMD_NOTIFY_COMMAND, createSystemdNotifier } from '../../src/ops/systemd-notify.ts';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('notify');

const RECEIVER = `
import array, json, os, socket, sys
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
print(json.dumps({"bound": path}), flush=True)
held = []
while True:
    data, anc, flags, addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    fds = []
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(cdata[: len(cdata) - (len(cdata) % a.itemsize)])
            fds.extend(a)
    if mode == "close":
        for fd in fds:
            os.close(fd)
    else:
        held.extend(fds)
    print(json.dumps({"payload": data.decode("utf-8"), "fds": len(fds)}), flush=True)
`;
const receiverScript = path.join(tmp, 'receiver.py');
writeFileSync(receiverScript, RECEIVER);

const hasPython = spawnSync('python3', ['--version']).status === 0;
const canRunReal = existsSync(SYSTEMD_NOTIFY_COMMAND) && hasPython;
const skipReal = canRunReal ? false : 'needs /usr/bin/systemd-notify and python3';

interface Datagram {
  payload: string;
  fds: number;
}

interface Receiver {
  socketPath: string;
  /** Resolves with the next `count` datagrams (waits at most 10 s). */
  next(count: number): Promise<Datagram[]>;
  child: ChildProcess;
}

let counter = 0;
const receivers: ChildProcess[] = [];
after(() => {
  for (const child of receivers) child.kill('SIGKILL');
});

async function startReceiver(mode: 'close' | 'hold'): Promise<Receiver> {
  const socketPath = path.join(tmp, `notify-${++counter}.sock`);
  const child = spawn('python3', [receiverScript, socketPath, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  receivers.push(child);
  const lines = createInterface({ input: child.stdout! });
  const received: Datagram[] = [];
  let wake: (() => void) | null = null;
  let bound: () => void = () => {};
  const isBound = new Promise<void>((resolve) => {
    bound = resolve;
  });
  lines.on('line', (line) => {
    const value = JSON.parse(line) as { bound?: string } & Datagram;
    if (value.bound !== undefined) bound();
    else received.push({ payload: value.payload, fds: value.fds });
    wake?.();
  });
  await isBound;
  return {
    socketPath,
    child,
    async next(count) {
      const deadline = Date.now() + 10_000;
      while (received.length < count) {
        // Woken by the next line the receiver prints; the deadline only guards against a hang.
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`only ${received.length} of ${count} datagrams arrived: ${JSON.stringify(received)}`)), Math.max(0, deadline - Date.now()));
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      return received.splice(0, count);
    },
  };
}

function captureLogger(): { logger: Logger; lines: Array<{ level: string; msg: string; fields: LogFields | undefined }> } {
  const lines: Array<{ level: string; msg: string; fields: LogFields | undefined }> = [];
  const at = (level: string) => (msg: string, fields?: LogFields) => lines.push({ level, msg, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const BARRIER: Datagram = { payload: 'BARRIER=1', fds: 1 };

describe('createSystemdNotifier with the real systemd-notify', { skip: skipReal }, () => {
  test('READY=1, RELOADING=1, STOPPING=1 and STATUS= arrive exactly, each followed by its barrier', async () => {
    const receiver = await startReceiver('close');
    const { logger, lines } = captureLogger();
    const notifier = createSystemdNotifier({ env: { NOTIFY_SOCKET: receiver.socketPath }, logger, monotonicUsec: () => 123456789n });
    assert.equal(notifier.enabled, true);

    assert.deepEqual(await notifier.ready('listening on http://127.0.0.1:8080/v1'), { outcome: 'sent' });
    assert.deepEqual(await receiver.next(2), [
      { payload: `READY=1\nSTATUS=listening on http://127.0.0.1:8080/v1\nMAINPID=${process.pid}`, fds: 0 },
      BARRIER,
    ]);

    assert.deepEqual(await notifier.reloading('reloading configuration'), { outcome: 'sent' });
    assert.deepEqual(await receiver.next(2), [{ payload: 'STATUS=reloading configuration\nRELOADING=1\nMONOTONIC_USEC=123456789', fds: 0 }, BARRIER]);

    assert.deepEqual(await notifier.stopping(), { outcome: 'sent' });
    assert.deepEqual(await receiver.next(2), [{ payload: 'STOPPING=1', fds: 0 }, BARRIER]);

    assert.deepEqual(await notifier.status('config rejected:\nREADY=1'), { outcome: 'sent' });
    assert.deepEqual(await receiver.next(2), [{ payload: 'STATUS=config rejected: READY=1', fds: 0 }, BARRIER]);
    assert.deepEqual(lines, []);
  });

  test('messages made back to back reach the manager in order', async () => {
    const receiver = await startReceiver('close');
    const notifier = createSystemdNotifier({ env: { NOTIFY_SOCKET: receiver.socketPath } });
    const results = await Promise.all([notifier.ready('up'), notifier.stopping('draining'), notifier.status('drained')]);
    assert.deepEqual(results, [{ outcome: 'sent' }, { outcome: 'sent' }, { outcome: 'sent' }]);
    assert.deepEqual(await receiver.next(6), [
      { payload: `READY=1\nSTATUS=up\nMAINPID=${process.pid}`, fds: 0 },
      BARRIER,
      { payload: 'STATUS=draining\nSTOPPING=1', fds: 0 },
      BARRIER,
      { payload: 'STATUS=drained', fds: 0 },
      BARRIER,
    ]);
  });

  test('no manager at the socket path: a failed result and a warning, no throw', async () => {
    const { logger, lines } = captureLogger();
    const missing = path.join(tmp, 'nobody-listens.sock');
    const notifier = createSystemdNotifier({ env: { NOTIFY_SOCKET: missing }, logger });
    const result = await notifier.ready('up');
    assert.equal(result.outcome, 'failed');
    assert.ok(result.outcome === 'failed');
    assert.equal(result.error.code, 'notify_failed');
    assert.equal(result.error.message, `${SYSTEMD_NOTIFY_COMMAND} failed: Failed to notify init system: No such file or directory`);
    assert.deepEqual(lines, [
      { level: 'warn', msg: 'systemd notification failed', fields: { notification: 'ready', code: 'notify_failed', error: result.error.message } },
    ]);
  });

  test('a manager that never completes the barrier: the helper is killed at the timeout', async () => {
    const receiver = await startReceiver('hold');
    const notifier = createSystemdNotifier({ env: { NOTIFY_SOCKET: receiver.socketPath }, timeoutMs: 300 });
    const result = await notifier.stopping();
    assert.ok(result.outcome === 'failed');
    assert.equal(result.error.code, 'notify_timeout');
    assert.equal(result.error.message, `${SYSTEMD_NOTIFY_COMMAND} did not finish within 300 ms; killed`);
    // The message itself got through; only the wait for the manager was cut.
    assert.deepEqual(await receiver.next(2), [{ payload: 'STOPPING=1', fds: 0 }, BARRIER]);
  });
});

describe('createSystemdNotifier failures of the helper itself', () => {
  test('a missing helper binary is a spawn failure, not an exception', async () => {
    const notifier = createSystemdNotifier({ env: { NOTIFY_SOCKET: '/run/nothing' }, command: path.join(tmp, 'no-such-notify') });
    const result = await notifier.ready('up');
    assert.ok(result.outcome === 'failed');
    assert.equal(result.error.code, 'notify_spawn_failed');
    assert.match(result.error.message, /^cannot start .*no-such-notify: spawn .*ENOENT$/);
  });
});
