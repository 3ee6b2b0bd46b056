// limits.maxConnections on a real listener: the connections under the cap are
// served and keep being served; one beyond it gets exactly the 503 bytes and
// is closed, even when it sends a large body at once; the refusals are logged
// once per burst and counted; a freed slot or a raised cap (a reload) lets the
// next one in; beyond the refusal margin node drops connections without a
// word and they are still counted; a TLS listener closes without an answer.
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { after, test } from 'node:test';
import { DEFAULT_LIMITS, type ServerLimits } from '../../src/config/config.ts';
import { loadListenerTls } from '../../src/config/tls-files.ts';
import { sendJson } from '../../src/http/respond.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell, type HttpShell } from '../../src/http/server.ts';
import { type RouteHandler } from '../../src/http/request-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createTestPki } from '../tls/test-pki.ts';

const REFUSAL =
  'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 146\r\nretry-after: 1\r\nconnection: close\r\n\r\n' +
  '{"error":{"message":"The gateway has too many open connections; retry shortly.","type":"server_error","param":null,"code":"too_many_connections"}}';
const OK_REQUEST = 'GET /ok HTTP/1.1\r\nHost: x\r\n\r\n';

interface Started {
  shell: HttpShell;
  port: number;
  logs: Record<string, unknown>[];
  refused: () => number;
}

const shells: HttpShell[] = [];
const pki = createTestPki();
after(async () => {
  for (const shell of shells) {
    shell.server.closeAllConnections();
    await new Promise<void>((resolve) => shell.server.close(() => resolve()));
  }
  pki.cleanup();
});

async function start(limits: Partial<ServerLimits>, withTls = false): Promise<Started> {
  const router = createRouter<RouteHandler>();
  router.add('GET', '/ok', async (ctx) => sendJson(ctx.res, 200, { ok: true }));
  const logs: Record<string, unknown>[] = [];
  let refused = 0;
  const pair = pki.server('limit');
  const shell = createHttpShell({
    router,
    limits: { ...DEFAULT_LIMITS, ...limits },
    logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
    onConnectionRefused: () => refused++,
    refusalQuietMs: 300,
    ...(withTls
      ? { tls: loadListenerTls(null, 'listen.tls', { certFile: pair.certFile, keyFile: pair.keyFile, clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' }, {}) }
      : {}),
  });
  shells.push(shell);
  await new Promise<void>((resolve) => shell.server.listen(0, '127.0.0.1', resolve));
  return { shell, port: (shell.server.address() as AddressInfo).port, logs, refused: () => refused };
}

/** A raw connection: everything it received, and when it closed. */
interface Raw {
  socket: net.Socket;
  text(): string;
  /** Resolves once the received text holds `count` answers (counted by their status lines). */
  answers(count: number): Promise<string>;
  closed: Promise<string>;
}

/** `holdOpen`: the client does not close its side when the server closes its own. */
function connect(port: number, send = '', holdOpen = false): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: holdOpen });
    let text = '';
    const waiting: Array<() => void> = [];
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (const wake of waiting.splice(0)) wake();
    });
    // A reset after the answer is read is the server closing; what was received is what counts.
    socket.on('error', () => {});
    const closed = new Promise<string>((r) => socket.on('close', () => r(text)));
    socket.once('connect', () => {
      if (send !== '') socket.write(send);
      resolve({
        socket,
        text: () => text,
        async answers(count) {
          while ((text.match(/HTTP\/1\.1 /g) ?? []).length < count || !text.endsWith('}')) {
            if (socket.destroyed) throw new Error(`closed after ${JSON.stringify(text)}`);
            await new Promise<void>((r) => waiting.push(r));
          }
          return text;
        },
        closed,
      });
    });
    socket.once('error', reject);
  });
}

/** A connection that got its first answer and stays open (keep-alive). */
async function served(port: number): Promise<Raw> {
  const raw = await connect(port, OK_REQUEST);
  assert.match(await raw.answers(1), /^HTTP\/1\.1 200 OK\r\n/);
  return raw;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `timed out waiting for ${what}`);
}

test('beyond maxConnections: the exact 503 bytes, then closed; those open keep being served; one log line per burst', async () => {
  const s = await start({ maxConnections: 2 });
  const first = await served(s.port);
  const second = await served(s.port);
  assert.equal(s.shell.openConnections, 2);

  const refusedTexts = await Promise.all([1, 2, 3].map(async () => (await connect(s.port)).closed));
  assert.deepEqual(refusedTexts, [REFUSAL, REFUSAL, REFUSAL]);
  assert.equal(s.refused(), 3);
  assert.equal(s.shell.openConnections, 2);

  // The connections under the cap are untouched.
  first.socket.write(OK_REQUEST);
  assert.match(await first.answers(2), /\r\n\r\n\{"ok":true\}HTTP\/1\.1 200 OK\r\n/);
  second.socket.write(OK_REQUEST);
  await second.answers(2);

  const started = s.logs.filter((l) => l['msg'] === 'connection limit reached: new connections are refused with 503 too_many_connections');
  assert.deepEqual(started.map((l) => [l['level'], l['listener'], l['maxConnections']]), [['warn', 'api', 2]]);
  await until(() => s.logs.some((l) => l['msg'] === 'connection limit: no more refusals'), 'the end of the burst');
  const ended = s.logs.filter((l) => l['msg'] === 'connection limit: no more refusals');
  assert.equal(ended.length, 1);
  assert.equal(ended[0]?.['refused'], 3);
  assert.equal(ended[0]?.['listener'], 'api');
  // A refused connection never became a request: no access-log line for it.
  assert.equal(s.logs.filter((l) => l['msg'] === 'request').length, 4);

  // A slot freed is a slot for the next connection.
  first.socket.destroy();
  await until(() => s.shell.openConnections === 1, 'the first connection to close');
  const third = await served(s.port);
  assert.equal(s.shell.openConnections, 2);
  second.socket.destroy();
  third.socket.destroy();
});

test('a refused client that sends its whole request at once still reads the 503, not a reset', async () => {
  const s = await start({ maxConnections: 1 });
  const holder = await served(s.port);
  const body = 'x'.repeat(256 * 1024);
  const refused = await connect(s.port, `POST /ok HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  assert.equal(await refused.closed, REFUSAL);
  holder.socket.destroy();
});

test('a reload that raises maxConnections lets the next connection in at once', async () => {
  const s = await start({ maxConnections: 1 });
  const holder = await served(s.port);
  assert.equal(await (await connect(s.port)).closed, REFUSAL);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 2 });
  const next = await served(s.port);
  assert.equal(s.shell.openConnections, 2);
  s.shell.applyLimits({ ...DEFAULT_LIMITS, maxConnections: 1 });
  // Lowering it keeps those open; the next one is refused.
  next.socket.write(OK_REQUEST);
  await next.answers(2);
  assert.equal(await (await connect(s.port)).closed, REFUSAL);
  holder.socket.destroy();
  next.socket.destroy();
});

test('beyond the refusal margin (16 over a small cap) node drops the connection without an answer; still counted', async () => {
  const s = await start({ maxConnections: 1 });
  const holder = await served(s.port);
  // Refused connections that never close their side stay open for up to a second: they fill the margin.
  const lingering = await Promise.all(Array.from({ length: 16 }, () => connect(s.port, '', true)));
  await until(() => lingering.every((raw) => raw.text() === REFUSAL), `the 16 refusals: ${JSON.stringify(lingering.map((raw) => raw.text().length))}`);
  const dropped = await connect(s.port);
  assert.equal(await dropped.closed, '');
  await until(() => s.refused() === 17, 'the dropped connection to be counted');
  holder.socket.write(OK_REQUEST);
  await holder.answers(2);
  for (const raw of lingering) raw.socket.destroy();
  holder.socket.destroy();
});

test('a TLS listener beyond maxConnections closes the connection before any handshake; the open one is served', async () => {
  const s = await start({ maxConnections: 1 }, true);
  const holder = tls.connect({ port: s.port, host: '127.0.0.1', ca: pki.ca, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => holder.once('secureConnect', resolve).once('error', reject));
  const failure = await new Promise<Error>((resolve, reject) => {
    const refused = tls.connect({ port: s.port, host: '127.0.0.1', ca: pki.ca, servername: 'localhost' });
    refused.once('secureConnect', () => reject(new Error('the refused connection completed a handshake')));
    refused.once('error', resolve);
  });
  assert.match(String((failure as NodeJS.ErrnoException).code), /^(ECONNRESET|EPIPE)$/);
  assert.equal(s.refused(), 1);
  let text = '';
  holder.setEncoding('latin1');
  holder.on('data', (chunk: string) => (text += chunk));
  holder.write(OK_REQUEST);
  await until(() => text.endsWith('{"ok":true}'), 'the answer on the open TLS connection');
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  holder.destroy();
});

test('a TLS client that never finishes its handshake is closed after headersTimeoutMs, freeing its place (it was held open: an HTTP 400 was written into the handshake)', async () => {
  const s = await start({ maxConnections: 1, headersTimeoutMs: 1000, requestTimeoutMs: 1000 }, true);
  const started = Date.now();
  const stalled = await connect(s.port);
  assert.equal(s.shell.openConnections, 1);
  assert.equal(await stalled.closed, '');
  assert.ok(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms`);
  await until(() => s.shell.openConnections === 0, 'the place to be freed');
  // A handshake that failed is no HTTP answer: no access line (and no HTTP bytes written into the handshake).
  assert.deepEqual(s.logs.filter((l) => l['msg'] === 'request'), []);
});
