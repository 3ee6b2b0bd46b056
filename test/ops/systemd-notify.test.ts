// The notifier without the real helper: the arguments and status text it
// builds, a notifier with no NOTIFY_SOCKET, and what it does when its
// (fake) helper fails or queues up. Against the real /usr/bin/systemd-notify
// and a stand-in manager: systemd-notify.system.test.ts.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import {
  MAX_STATUS_CHARS,
  SYSTEMD_NOTIFY_COMMAND,
  createSystemdNotifier,
  notifyArguments,
  statusText,
  type SpawnFunction,
} from '../../src/ops/systemd-notify.ts';

describe('notifyArguments and statusText (pure)', () => {
  test('each message becomes the systemd-notify arguments for systemd 252', () => {
    const cases: Array<[Parameters<typeof notifyArguments>[0], string[]]> = [
      [{ kind: 'ready', status: 'listening', mainPid: 42 }, ['--ready', '--status=listening', '--pid=42']],
      [{ kind: 'reloading', monotonicUsec: 123n, status: null }, ['RELOADING=1', 'MONOTONIC_USEC=123']],
      [{ kind: 'reloading', monotonicUsec: 7n, status: 'reloading' }, ['--status=reloading', 'RELOADING=1', 'MONOTONIC_USEC=7']],
      [{ kind: 'stopping', status: null }, ['STOPPING=1']],
      [{ kind: 'stopping', status: 'draining' }, ['--status=draining', 'STOPPING=1']],
      [{ kind: 'status', status: 'ok' }, ['--status=ok']],
    ];
    for (const [message, expected] of cases) assert.deepEqual(notifyArguments(message), expected, message.kind);
  });

  test('a line break cannot smuggle a field into the message; long text is cut', () => {
    assert.equal(statusText('up\nREADY=1\r\0x\x7f'), 'up READY=1  x ');
    assert.equal(statusText('é'.repeat(MAX_STATUS_CHARS + 10)), 'é'.repeat(MAX_STATUS_CHARS));
    assert.equal(statusText(''), '');
    // 255 characters, then an emoji (two UTF-16 units) across the limit: dropped whole.
    assert.equal(statusText(`${'a'.repeat(MAX_STATUS_CHARS - 1)}\u{1F600}b`), 'a'.repeat(MAX_STATUS_CHARS - 1));
    assert.equal(statusText('ok \u{1F600}'), 'ok \u{1F600}');
  });
});

describe('createSystemdNotifier without NOTIFY_SOCKET', () => {
  test('is disabled, spawns nothing and resolves skipped', async () => {
    const spawnNever: SpawnFunction = () => {
      throw new Error('must not spawn');
    };
    for (const env of [{}, { NOTIFY_SOCKET: '' }]) {
      const notifier = createSystemdNotifier({ env, spawn: spawnNever });
      assert.equal(notifier.enabled, false);
      assert.deepEqual(await notifier.ready('up'), { outcome: 'skipped' });
      assert.deepEqual(await notifier.reloading(), { outcome: 'skipped' });
      assert.deepEqual(await notifier.stopping(), { outcome: 'skipped' });
      assert.deepEqual(await notifier.status('x'), { outcome: 'skipped' });
    }
  });
});

describe('createSystemdNotifier failures of the helper itself', () => {
  test('a spawn that throws synchronously is a spawn failure', async () => {
    const notifier = createSystemdNotifier({
      env: { NOTIFY_SOCKET: '/run/nothing' },
      spawn: () => {
        throw new Error('EAGAIN');
      },
    });
    const result = await notifier.status('x');
    assert.ok(result.outcome === 'failed');
    assert.equal(result.error.code, 'notify_spawn_failed');
    assert.equal(result.error.message, `cannot start ${SYSTEMD_NOTIFY_COMMAND}: EAGAIN`);
  });

  test('the helper gets NOTIFY_SOCKET and nothing else from the environment', async () => {
    const seen: Array<{ command: string; args: readonly string[]; env: NodeJS.ProcessEnv }> = [];
    const notifier = createSystemdNotifier({
      env: { NOTIFY_SOCKET: '@notify', LISTEN_FDS: '1', SECRET: 'x' },
      pid: 77,
      spawn: (command, args, options) => {
        seen.push({ command, args, env: options.env });
        const child = fakeChild();
        setImmediate(() => child.emit('close', 0, null));
        return child;
      },
    });
    assert.deepEqual(await notifier.ready('up'), { outcome: 'sent' });
    assert.deepEqual(seen, [{ command: SYSTEMD_NOTIFY_COMMAND, args: ['--ready', '--status=up', '--pid=77'], env: { NOTIFY_SOCKET: '@notify' } }]);
  });

  test('more than 8 waiting notifications: the ninth is refused at once', async () => {
    const children: ChildProcess[] = [];
    const notifier = createSystemdNotifier({
      env: { NOTIFY_SOCKET: '@notify' },
      spawn: () => {
        const child = fakeChild();
        children.push(child);
        return child;
      },
    });
    const waiting = Array.from({ length: 8 }, (_, i) => notifier.status(`s${i}`));
    const refused = await notifier.status('one too many');
    assert.ok(refused.outcome === 'failed');
    assert.equal(refused.error.code, 'notify_queue_full');
    // Let the eight finish one after the other (each spawns after the previous closes).
    for (let i = 0; i < 8; i++) {
      while (children.length <= i) await new Promise((resolve) => setImmediate(resolve));
      children[i]!.emit('close', 0, null);
    }
    assert.deepEqual(await Promise.all(waiting), Array.from({ length: 8 }, () => ({ outcome: 'sent' })));
  });
});

function fakeChild(): ChildProcess {
  const child = new EventEmitter() as ChildProcess;
  Object.assign(child, { stderr: null, kill: () => true });
  return child;
}
