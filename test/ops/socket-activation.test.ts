// LISTEN_FDS parsing as a table, then for real: a child process started the
// way systemd starts a socket-activated service (a listening socket as fd 3,
// LISTEN_PID set to the child's own PID by `sh -c '... exec'`) answers HTTP
// on the socket it inherited.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, test } from 'node:test';
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

const tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-sockact-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

// Run with the test's own loader flags (tsx when the sources are run, none
// for the compiled tests), importing the module under test by URL.
const MODULE_URL = new URL(`../../src/ops/socket-activation${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;
const FIXTURE = `
import http from 'node:http';
const { claimListenFds, listenOnFd } = await import(process.argv[2]);
const fds = claimListenFds(process.env, process.pid);
const left = { LISTEN_PID: process.env.LISTEN_PID ?? null, LISTEN_FDS: process.env.LISTEN_FDS ?? null, LISTEN_FDNAMES: process.env.LISTEN_FDNAMES ?? null };
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ pid: process.pid, fds, left, path: req.url }));
});
const address = await listenOnFd(server, fds.api);
process.stdout.write(JSON.stringify({ address, pid: process.pid }) + '\\n');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
const fixturePath = path.join(tmp, 'socket-activated-server.mjs');
writeFileSync(fixturePath, FIXTURE);

test('a child started like systemd starts a socket-activated service answers on the inherited socket', async () => {
  const listener = net.createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as net.AddressInfo;
  const fd = (listener as unknown as { _handle: { fd: number } })._handle.fd;
  assert.ok(fd > 2, `listening fd ${fd}`);

  // `exec` keeps the shell's PID, so $$ is the PID the gateway will see.
  const child = spawn(
    '/bin/sh',
    ['-c', 'LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=api exec "$0" "$@"', process.execPath, ...process.execArgv, fixturePath, MODULE_URL],
    { stdio: ['ignore', 'pipe', 'inherit', fd], env: { PATH: process.env['PATH'] ?? '' } },
  );
  after(() => {
    child.kill('SIGKILL');
  });
  // The child holds its own copy now; closing ours leaves it the only acceptor.
  listener.close();

  const firstLine = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
  });
  const started = JSON.parse(firstLine) as { address: net.AddressInfo; pid: number };
  assert.equal(started.pid, child.pid);
  assert.deepEqual(started.address, { address: '127.0.0.1', family: 'IPv4', port });

  const answer = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/through-fd-3', agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      })
      .on('error', reject);
  });
  assert.equal(answer.status, 200);
  assert.deepEqual(JSON.parse(answer.body), {
    pid: child.pid,
    fds: { api: 3 },
    left: { LISTEN_PID: null, LISTEN_FDS: null, LISTEN_FDNAMES: null },
    path: '/through-fd-3',
  });

  child.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
});
