// The request context as its own abort source: listeners told once, in order,
// never after the abort; the context is its own signal.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { ClientGoneAbort, RequestContext, ShutdownAbort } from '../../src/http/request-context.ts';

function context(): RequestContext {
  return new RequestContext({} as IncomingMessage, {} as ServerResponse, '/v1/chat/completions', '127.0.0.1');
}

test('abort tells each listener once, functions and handleEvent objects alike, in the order they came; a removed one is not told', () => {
  const ctx = context();
  const told: string[] = [];
  const fn = (event: { type: string }): void => void told.push(`fn:${event.type}:${(ctx.reason as Error).name}`);
  const removed = (): void => void told.push('removed');
  const object = { handleEvent: (event: { type: string }) => void told.push(`object:${event.type}`) };
  ctx.addEventListener('abort', fn);
  ctx.addEventListener('abort', removed);
  ctx.addEventListener('abort', object);
  ctx.removeEventListener('abort', removed);
  assert.equal(ctx.aborted, false);
  assert.equal(ctx.reason, undefined);
  ctx.abort(new ClientGoneAbort());
  ctx.abort(new ShutdownAbort());
  assert.deepEqual(told, ['fn:abort:ClientGoneAbort', 'object:abort']);
  assert.equal(ctx.aborted, true);
  const reason: unknown = ctx.reason;
  assert.ok(reason instanceof ClientGoneAbort, 'the first reason stays');
  ctx.addEventListener('abort', fn);
  assert.equal(told.length, 2, 'a listener added after the abort is never told (as an AbortSignal)');
});

test('the signal is the context itself', () => {
  const ctx = context();
  assert.equal(ctx.signal, ctx);
});
