// The request's lifetime as the HTTP shell owns it: one abort signal (the
// client leaving, or a shutdown's deadline), close hooks that run before the
// access-log line, and that line's clientGone field.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/config/config.ts';
import { createRouter } from '../../src/http/router.ts';
import { createHttpShell } from '../../src/http/server.ts';
import { ClientGoneAbort, ShutdownAbort, type RequestContext, type RouteHandler } from '../../src/http/request-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { eventually, within } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const logs: Array<Record<string, unknown>> = [];
let seen: RequestContext | undefined;
let events: string[] = [];
const router = createRouter<RouteHandler>();
router.add('GET', '/done', async (ctx) => {
  seen = ctx;
  ctx.onClose(() => {
    events.push(`close hook, aborted=${ctx.signal.aborted}`);
    ctx.log['settled'] = true;
  });
  ctx.res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
});
router.add('GET', '/hang', async (ctx) => {
  seen = ctx;
  ctx.onShutdown = () => events.push(`onShutdown, aborted=${ctx.signal.aborted}`);
  ctx.onClose(() => events.push(`close hook, reason=${(ctx.signal.reason as Error).name}`));
  ctx.res.writeHead(200, { 'content-type': 'text/plain' });
  ctx.res.write('partial');
  await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
  events.push(`handler saw ${(ctx.signal.reason as Error).name}`);
});
// The drain's deadline runs on it; nothing else here waits on the shell's timers.
const scheduler = new ManualScheduler();
const shell = createHttpShell({
  router,
  limits: DEFAULT_LIMITS,
  scheduler,
  logger: createLogger({
    write: (l) => {
      const line = JSON.parse(l) as Record<string, unknown>;
      if (line['msg'] === 'request') events.push('access line');
      logs.push(line);
    },
  }),
});
let port = 0;
before(async () => {
  shell.server.listen(0, '127.0.0.1');
  await once(shell.server, 'listening');
  port = (shell.server.address() as AddressInfo).port;
});
after(() => {
  shell.server.closeAllConnections();
  shell.server.close();
});

function lastRequestLine(): Record<string, unknown> {
  const line = logs.filter((l) => l['msg'] === 'request').at(-1);
  assert.ok(line !== undefined);
  return line;
}

test('a completed answer: the signal stays quiet, close hooks run once before the access line, which carries what they logged', async () => {
  events = [];
  const res = await fetch(`http://127.0.0.1:${port}/done`);
  assert.equal(await res.text(), 'ok');
  await eventually(() => events.includes('access line'), 'the access line');
  assert.equal(seen?.signal.aborted, false);
  assert.deepEqual(events, ['close hook, aborted=false', 'access line']);
  assert.equal(lastRequestLine()['settled'], true);
  assert.equal(lastRequestLine()['clientGone'], undefined);
});

test('a client that leaves mid-answer aborts the signal with ClientGoneAbort; the access line says clientGone', async () => {
  events = [];
  const req = get({ host: '127.0.0.1', port, path: '/hang' });
  const res = await once(req, 'response').then(([r]) => r as import('node:http').IncomingMessage);
  await once(res, 'data');
  req.destroy();
  await eventually(() => events.length === 3, 'the close hook, the access line and the handler');
  assert.ok(seen?.signal.reason instanceof ClientGoneAbort);
  // The hooks run in the response's 'close'; the handler resumes a microtask later.
  assert.deepEqual(events, ['close hook, reason=ClientGoneAbort', 'access line', 'handler saw ClientGoneAbort']);
  assert.equal(lastRequestLine()['clientGone'], true);
  assert.equal(lastRequestLine()['completed'], false);
});

test("a drain's deadline calls onShutdown, then aborts the signal with ShutdownAbort", async () => {
  events = [];
  const req = get({ host: '127.0.0.1', port, path: '/hang' });
  req.on('error', () => {});
  const res = await once(req, 'response').then(([r]) => r as import('node:http').IncomingMessage);
  res.on('error', () => {});
  await once(res, 'data');
  const drained = shell.drain(2000);
  await scheduler.advance(1999);
  assert.deepEqual(events, []);
  await scheduler.advance(1);
  const report = await within(drained, 'the drain');
  await eventually(() => events.includes('access line'), 'the access line');
  assert.ok(seen?.signal.reason instanceof ShutdownAbort);
  assert.deepEqual(events, ['onShutdown, aborted=false', 'handler saw ShutdownAbort', 'close hook, reason=ShutdownAbort', 'access line']);
  assert.deepEqual(report, { finished: 0, endedWithError: 1, refused: 0 });
  assert.equal(lastRequestLine()['error'], 'server_shutting_down');
  assert.equal(lastRequestLine()['clientGone'], undefined);
});
