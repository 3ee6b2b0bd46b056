// The request body reader: a body in chunks into the streaming parser, every
// way a read stops early, and what a read leaves on the request.
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import { readRequestJson } from '../../src/http/json-body.ts';

/** The parts of an IncomingMessage the reader uses: headers, events, pause(). */
class FakeRequest extends EventEmitter {
  headers: Record<string, string>;
  paused = false;
  constructor(headers: Record<string, string> = { 'content-type': 'application/json' }) {
    super();
    this.headers = headers;
  }
  pause(): this {
    this.paused = true;
    return this;
  }
}

const OPTIONS = { maxBytes: 64, limits: { maxDepth: 4, maxStringBytes: 32, maxMembers: 8 } };

function context(req: FakeRequest, signal: AbortSignal = new AbortController().signal): { req: IncomingMessage; bodyAbandoned: boolean; signal: AbortSignal } {
  return { req: req as unknown as IncomingMessage, bodyAbandoned: false, signal };
}

function withCode(code: string): (error: unknown) => boolean {
  return (error) => error instanceof ApiError && error.code === code;
}

describe('readRequestJson', () => {
  it('parses a body sent in chunks and leaves no listener behind', async () => {
    const req = new FakeRequest();
    const ctx = context(req);
    const read = readRequestJson(ctx, OPTIONS);
    req.emit('data', Buffer.from('{"model":"m","mess'));
    req.emit('data', Buffer.from('ages":[1,2]}'));
    req.emit('end');
    assert.deepStrictEqual(await read, { model: 'm', messages: [1, 2] });
    assert.equal(ctx.bodyAbandoned, false);
    assert.deepStrictEqual([req.listenerCount('data'), req.listenerCount('end')], [0, 0]);
  });

  it('stops at the first bad byte: invalid_json, the request paused and marked abandoned', async () => {
    const req = new FakeRequest();
    const ctx = context(req);
    const read = readRequestJson(ctx, OPTIONS);
    req.emit('data', Buffer.from('{"a":x'));
    await assert.rejects(read, withCode('invalid_json'));
    assert.equal(req.paused, true);
    assert.equal(ctx.bodyAbandoned, true);
    assert.deepStrictEqual([req.listenerCount('data'), req.listenerCount('end')], [0, 0]);
    // A chunk after the failure is not looked at.
    req.emit('data', Buffer.from('}'));
  });

  it('refuses a declared Content-Length over the limit before reading, and a body that grows past it', async () => {
    const declared = new FakeRequest({ 'content-type': 'application/json', 'content-length': '65' });
    const declaredCtx = context(declared);
    await assert.rejects(readRequestJson(declaredCtx, OPTIONS), withCode('request_too_large'));
    assert.equal(declaredCtx.bodyAbandoned, true);
    assert.equal(declared.listenerCount('data'), 0);

    const growing = new FakeRequest();
    const growingCtx = context(growing);
    const read = readRequestJson(growingCtx, OPTIONS);
    growing.emit('data', Buffer.from(`"${'a'.repeat(30)}`));
    growing.emit('data', Buffer.from(`${'a'.repeat(40)}"`));
    await assert.rejects(read, withCode('request_too_large'));
    assert.equal(growingCtx.bodyAbandoned, true);
  });

  it('fails with the signal reason when the request ends mid-body, and stops listening to the signal', async () => {
    const req = new FakeRequest();
    const controller = new AbortController();
    const ctx = context(req, controller.signal);
    const read = readRequestJson(ctx, OPTIONS);
    req.emit('data', Buffer.from('{"a":'));
    const reason = new Error('client gone');
    controller.abort(reason);
    await assert.rejects(read, (error) => error === reason);
    assert.equal(ctx.bodyAbandoned, true);
    assert.equal(req.listenerCount('data'), 0);
    // Already aborted: refused at once.
    const again = context(new FakeRequest(), controller.signal);
    await assert.rejects(readRequestJson(again, OPTIONS), (error) => error === reason);
    assert.equal(again.bodyAbandoned, true);
  });

  it('refuses a body not declared as JSON (415) without marking it abandoned', async () => {
    const ctx = context(new FakeRequest({ 'content-type': 'text/plain' }));
    await assert.rejects(readRequestJson(ctx, OPTIONS), withCode('unsupported_media_type'));
    assert.equal(ctx.bodyAbandoned, false);
  });

  it('makes no listener functions per read: every request gets the same ones', async () => {
    const first = new FakeRequest();
    const second = new FakeRequest();
    const reads = [readRequestJson(context(first), OPTIONS), readRequestJson(context(second), OPTIONS)];
    assert.equal(first.listeners('data')[0], second.listeners('data')[0]);
    assert.equal(first.listeners('end')[0], second.listeners('end')[0]);
    for (const [index, req] of [first, second].entries()) {
      req.emit('data', Buffer.from(String(index)));
      req.emit('end');
    }
    assert.deepStrictEqual(await Promise.all(reads), [0, 1]);
  });
});
