// The request core on a host's own node:http server: the access line's time to
// first byte on a plain ServerResponse, and a drain that ends what is still
// undelivered after the grace by destroying that answer's connection only,
// never the host's server or its other connections.
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createRouter } from '../../src/http/router.ts';
import { createRequestCore } from '../../src/http/request-core.ts';
import type { RouteHandler } from '../../src/http/request-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { eventually, within } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const scheduler = new ManualScheduler();
const logs: Record<string, unknown>[] = [];
const router = createRouter<RouteHandler>();
router.add('GET', '/timed', async (ctx) => {
  await scheduler.advance(3);
  ctx.res.writeHead(200, { 'content-type': 'text/plain' });
  await scheduler.advance(4);
  ctx.res.end('done');
});
router.add('GET', '/big', async (ctx) => {
  ctx.res.writeHead(200, { 'content-type': 'application/octet-stream' });
  ctx.res.write('start');
  // At the deadline: more than a client that reads nothing can take in.
  ctx.onShutdown = () => ctx.res.end(Buffer.alloc(64 * 1024 * 1024));
});
const core = createRequestCore({
  router,
  scheduler,
  writeStallTimeoutMs: 600_000,
  logger: createLogger({ write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
});
const host = http.createServer((req, res) => {
  if (req.url === '/host') {
    res.end('host');
    return;
  }
  void core.handle(req, res, req.url ?? '/', null, 'host');
});
let port = 0;
before(async () => {
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  port = (host.address() as AddressInfo).port;
});
after(async () => {
  host.closeAllConnections();
  await new Promise<void>((resolve) => host.close(() => resolve()));
});

function get(path: string, agent: http.Agent): Promise<{ text: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ text, reused: req.reusedSocket }));
    });
    req.on('error', reject);
  });
}

test("time to first byte on a host's plain ServerResponse: when the headers went out, on the core's clock", async () => {
  const agent = new http.Agent({ keepAlive: false });
  assert.equal((await get('/timed', agent)).text, 'done');
  await eventually(() => logs.some((l) => l['path'] === '/timed'), 'the access line');
  const line = logs.find((l) => l['path'] === '/timed');
  assert.equal(line?.['ttfbMs'], 3);
  assert.equal(line?.['totalMs'], 7);
  assert.equal(line?.['status'], 200);
});

test("a drain on a host's server: an answer undelivered after the grace loses its connection; the host's server and its idle connections stay", async () => {
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
  assert.deepEqual(await get('/host', keepAlive), { text: 'host', reused: false });
  // A client that asks and then reads nothing.
  const stuck = net.connect(port, '127.0.0.1');
  stuck.on('error', () => {});
  await new Promise((resolve) => stuck.once('connect', resolve));
  stuck.write('GET /big HTTP/1.1\r\nhost: x\r\n\r\n');
  await new Promise((resolve) => stuck.once('data', resolve));
  stuck.pause();
  const closed = new Promise((resolve) => stuck.once('close', resolve));
  const drained = core.drain(1000, null);
  await scheduler.advance(1000);
  assert.equal(core.inFlight, 1, 'the answer is still being delivered');
  await scheduler.advance(2000);
  assert.deepEqual(await within(drained, 'the drain'), { finished: 0, endedWithError: 1, refused: 0 });
  // Reading again, the client finds its connection gone (kept, it would get the rest and stay open).
  stuck.resume();
  await within(closed, 'the stuck connection to close');
  const line = logs.find((l) => l['path'] === '/big');
  assert.equal(line?.['completed'], false);
  assert.equal(line?.['error'], 'server_shutting_down');
  assert.equal(host.listening, true);
  // The kept-alive connection to the host's own route was not touched.
  assert.deepEqual(await get('/host', keepAlive), { text: 'host', reused: true });
  keepAlive.destroy();
});
