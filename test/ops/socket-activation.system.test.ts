// For real: a child process started the way systemd starts a
// socket-activated service (a listening socket as fd 3, LISTEN_PID set to the
// child's own PID by `sh -c '... exec'`) answers HTTP on the socket it
// inherited. The parsing of LISTEN_FDS is in socket-activation.test.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('sockact');

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
