// LISTEN_FDS parsing as a table, claiming the descriptors, and listening on
// one that is not a socket. A child process started the way systemd starts a
// socket-activated service is in socket-activation.system.test.ts.
import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
import net from 'node:net';
import { describe, test } from 'node:test';
import { claimListenFds, listenFdsFromEnv, listenOnFd, SocketActivationError, type ListenFds } from '../../src/ops/socket-activation.ts';

const PID = 4242;

describe('listenFdsFromEnv', () => {
  const accepted: Array<[string, NodeJS.ProcessEnv, ListenFds]> = [
    ['no LISTEN_PID: not socket-activated', { LISTEN_FDS: '1' }, {}],
    ['empty LISTEN_PID', { LISTEN_PID: '', LISTEN_FDS: '1' }, {}],
    ['LISTEN_PID of another process: inherited, ignored', { LISTEN_PID: '4243', LISTEN_FDS: 'abc' }, {}],
    ['LISTEN_FDS unset', { LISTEN_PID: '4242' }, {}],
    ['LISTEN_FDS=0', { LISTEN_PID: '4242', LISTEN_FDS: '0' }, {}],
    ['one descriptor, no names: the API listener', { LISTEN_PID: '4242', LISTEN_FDS: '1' }, { api: 3 }],
    ['one descriptor named "unknown" (sd_listen_fds_with_names default)', { LISTEN_PID: '4242', LISTEN_FDS: '1', LISTEN_FDNAMES: 'unknown' }, { api: 3 }],
    ['one descriptor with the socket unit name (systemd default)', { LISTEN_PID: '4242', LISTEN_FDS: '1', LISTEN_FDNAMES: 'portcullis.socket' }, { api: 3 }],
    ['one descriptor named api', { LISTEN_PID: '4242', LISTEN_FDS: '1', LISTEN_FDNAMES: 'api' }, { api: 3 }],
    ['one descriptor named admin', { LISTEN_PID: '4242', LISTEN_FDS: '1', LISTEN_FDNAMES: 'admin' }, { admin: 3 }],
    ['api then admin', { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'api:admin' }, { api: 3, admin: 4 }],
    ['admin then api', { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'admin:api' }, { admin: 3, api: 4 }],
  ];
  for (const [name, env, expected] of accepted) {
    test(name, () => assert.deepEqual(listenFdsFromEnv(env, PID), expected));
  }

  const refused: Array<[string, NodeJS.ProcessEnv, string, string]> = [
    ['LISTEN_PID not a number', { LISTEN_PID: 'self', LISTEN_FDS: '1' }, 'listen_pid_invalid', "LISTEN_PID must be a process id, got 'self'"],
    ['LISTEN_PID zero', { LISTEN_PID: '0', LISTEN_FDS: '1' }, 'listen_pid_invalid', "LISTEN_PID must be a process id, got '0'"],
    ['LISTEN_PID negative', { LISTEN_PID: '-1' }, 'listen_pid_invalid', "LISTEN_PID must be a process id, got '-1'"],
    ['LISTEN_FDS=abc', { LISTEN_PID: '4242', LISTEN_FDS: 'abc' }, 'listen_fds_invalid', "LISTEN_FDS must be a count of file descriptors, got 'abc'"],
    ['LISTEN_FDS=-1', { LISTEN_PID: '4242', LISTEN_FDS: '-1' }, 'listen_fds_invalid', "LISTEN_FDS must be a count of file descriptors, got '-1'"],
    ['LISTEN_FDS=1.5', { LISTEN_PID: '4242', LISTEN_FDS: '1.5' }, 'listen_fds_invalid', "LISTEN_FDS must be a count of file descriptors, got '1.5'"],
    ['LISTEN_FDS with a newline', { LISTEN_PID: '4242', LISTEN_FDS: '1\n' }, 'listen_fds_invalid', "LISTEN_FDS must be a count of file descriptors, got '1?'"],
    [
      'three descriptors',
      { LISTEN_PID: '4242', LISTEN_FDS: '3', LISTEN_FDNAMES: 'api:admin:api' },
      'listen_fds_too_many',
      'LISTEN_FDS is 3; the gateway takes at most 2 listeners (FileDescriptorName=api and FileDescriptorName=admin)',
    ],
    [
      'fewer names than descriptors',
      { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'api' },
      'listen_fdnames_count_mismatch',
      "LISTEN_FDNAMES names 1 descriptor(s) ('api') but LISTEN_FDS is 2",
    ],
    [
      'more names than descriptors',
      { LISTEN_PID: '4242', LISTEN_FDS: '1', LISTEN_FDNAMES: 'api:admin' },
      'listen_fdnames_count_mismatch',
      "LISTEN_FDNAMES names 2 descriptor(s) ('api:admin') but LISTEN_FDS is 1",
    ],
    [
      'two descriptors without names',
      { LISTEN_PID: '4242', LISTEN_FDS: '2' },
      'listen_fds_unnamed',
      'LISTEN_FDS is 2 but LISTEN_FDNAMES is not set; name the sockets FileDescriptorName=api and FileDescriptorName=admin',
    ],
    [
      'an unknown name',
      { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'api:metrics' },
      'listen_fdname_unknown',
      "LISTEN_FDNAMES: 'metrics' is not a listener name; use FileDescriptorName=api or FileDescriptorName=admin in the socket unit",
    ],
    [
      'two default names are not told apart',
      { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'portcullis.socket:portcullis.socket' },
      'listen_fdname_unknown',
      "LISTEN_FDNAMES: 'portcullis.socket' is not a listener name; use FileDescriptorName=api or FileDescriptorName=admin in the socket unit",
    ],
    [
      'one unknown name on a single descriptor',
      { LISTEN_PID: '4242', LISTEN_FDS: '1', LISTEN_FDNAMES: 'web' },
      'listen_fdname_unknown',
      "LISTEN_FDNAMES: 'web' is not a listener name; use FileDescriptorName=api or FileDescriptorName=admin in the socket unit",
    ],
    [
      'the same name twice',
      { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'api:api' },
      'listen_fdname_duplicate',
      "LISTEN_FDNAMES: 'api' is given to more than one descriptor; the gateway takes one of each",
    ],
  ];
  for (const [name, env, code, message] of refused) {
    test(`refused: ${name}`, () => {
      assert.throws(
        () => listenFdsFromEnv(env, PID),
        (err: unknown) => err instanceof SocketActivationError && err.code === code && err.message === message,
      );
    });
  }
});

describe('claimListenFds', () => {
  test('returns the descriptors and unsets the three variables', () => {
    const env: NodeJS.ProcessEnv = { LISTEN_PID: '4242', LISTEN_FDS: '2', LISTEN_FDNAMES: 'api:admin', NOTIFY_SOCKET: '/run/n' };
    assert.deepEqual(claimListenFds(env, PID), { api: 3, admin: 4 });
    assert.deepEqual(env, { NOTIFY_SOCKET: '/run/n' });
  });

  test('unsets them also when they are malformed, and still throws', () => {
    const env: NodeJS.ProcessEnv = { LISTEN_PID: '4242', LISTEN_FDS: 'abc', LISTEN_FDNAMES: 'api' };
    assert.throws(() => claimListenFds(env, PID), SocketActivationError);
    assert.deepEqual(env, {});
  });
});

describe('listenOnFd', () => {
  test('a descriptor that is not a socket rejects with EINVAL, not a crash', async () => {
    const server = net.createServer();
    const devNull = openSync('/dev/null', 'r');
    try {
      await assert.rejects(listenOnFd(server, devNull), (err: unknown) => (err as NodeJS.ErrnoException).code === 'EINVAL');
      assert.equal(server.listening, false);
    } finally {
      closeSync(devNull);
    }
  });
});
