// The exchange's own costs, through both transports: one deadline timer per
// exchange however many reads a stream takes (re-armed with refresh() as the
// idle deadline moves), one listener on the caller's signal, the transport
// aborted through the function send() hands back, and the node transport's
// body read without Readable's async iterator.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Timer } from '../../src/time/scheduler.ts';
import { openExchangeStream } from '../../src/upstream/upstream-stream.ts';
import { abortListeners } from '../providers/provider-fixtures.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { answer, call, chunkFrame, failure, provider, startEventStream, startUpstream, TRANSPORTS, type TestUpstream } from './transport-fixtures.ts';

/** A ManualScheduler that counts the timers made and the most pending at once. */
class CountingScheduler extends ManualScheduler {
  made = 0;
  mostPending = 0;

  override setTimeout(callback: () => void, ms: number): Timer {
    this.made++;
    const timer = super.setTimeout(callback, ms);
    this.mostPending = Math.max(this.mostPending, this.pending().length);
    return timer;
  }
}

const READS = 20;

for (const t of TRANSPORTS) {
  describe(`the exchange over the ${t.name} transport`, () => {
    let upstream: TestUpstream;
    let held: ServerResponse | undefined;
    before(async () => {
      upstream = await startUpstream((_req, res) => {
        startEventStream(res);
        held = res;
      });
    });
    after(() => upstream.close());

    test(`a stream of ${READS} reads: one deadline timer, made at most twice and refreshed per read; one listener on the caller's signal`, async () => {
      const scheduler = new CountingScheduler();
      const signal = new AbortController().signal;
      const p = provider(t.make(), upstream.baseUrl, { scheduler, idleTimeoutMs: 1000, timeoutMs: 60_000 });
      if (p.provider.kind !== 'http') assert.fail('an HTTP provider');
      const stream = openExchangeStream(p.provider, call(true, signal));
      assert.equal(abortListeners(signal), 1);
      held = undefined;
      const arrival = upstream.nextArrival();
      const first = stream.next();
      await arrival;
      await eventually(() => held !== undefined, 'the response started');
      const contents: string[] = [];
      let pending = first;
      for (let i = 0; i < READS; i++) {
        (held as ServerResponse | undefined)?.write(chunkFrame(`c${i}`));
        // Written only once the previous read was handed over: one event per read.
        let batch = await pending;
        while (batch !== null && batch.length === 0) batch = await stream.next();
        assert.ok(batch !== null);
        for (const chunk of batch) contents.push(chunk.choices[0]?.delta.content ?? '');
        // The idle deadline is the one timer, whole again after each read.
        assert.deepEqual(scheduler.pending(), [1000]);
        assert.equal(abortListeners(signal), 1);
        await scheduler.advance(10);
        pending = stream.next();
      }
      (held as ServerResponse | undefined)?.end('data: [DONE]\n\n');
      // [DONE] is a read with no chunk; the body's end is the next.
      let end = await pending;
      while (end !== null && end.length === 0) end = await stream.next();
      assert.equal(end, null);
      assert.deepEqual(contents, Array.from({ length: READS }, (_, i) => `c${i}`));
      assert.equal(scheduler.mostPending, 1, 'never more than one timer pending');
      // One at the start (first-byte before total), one for the first idle deadline.
      assert.equal(scheduler.made, 2);
      assert.deepEqual(scheduler.pending(), []);
      assert.equal(abortListeners(signal), 0);
    });

    test("send()'s abort function ends the request with the reason: before the headers, and during a body read", async () => {
      const transport = t.make();
      const request = { url: `${upstream.baseUrl}/chat/completions`, headers: { 'content-type': 'application/json' }, body: '{}', onConnected: () => undefined };
      const reason = new Error('the exchange gave up');

      upstream.handle = () => undefined;
      const arrival = upstream.nextArrival();
      const early = transport.send(request);
      await arrival;
      early.abort(reason);
      assert.equal(await failure(early.response), reason);
      await upstream.closed();

      upstream.handle = (_req, res) => {
        startEventStream(res);
        res.write(chunkFrame('one'));
      };
      const late = transport.send(request);
      const response = await late.response;
      assert.ok((await response.body.read()) !== undefined);
      const read = response.body.read();
      late.abort(reason);
      assert.equal(await failure(read), reason);
      await upstream.closed();
    });
  });
}

describe('the node transport body', () => {
  test("is read through 'data' events, never Readable's async iterator", async () => {
    const upstream = await startUpstream((req, res) => {
      if (req.headers['accept'] !== 'text/event-stream') return answer(req, res);
      startEventStream(res);
      res.end(`${chunkFrame('a')}${chunkFrame('b')}data: [DONE]\n\n`);
    });
    const proto = http.IncomingMessage.prototype as unknown as Record<symbol, unknown>;
    const iterator = proto[Symbol.asyncIterator];
    proto[Symbol.asyncIterator] = () => assert.fail("the body was read through Readable's async iterator");
    try {
      const node = TRANSPORTS.find((c) => c.name === 'node');
      const p = provider(node?.make() ?? assert.fail('the node transport'), upstream.baseUrl);
      const chunks = [];
      for await (const chunk of p.stream(call(true))) chunks.push(chunk.choices[0]?.delta.content);
      assert.deepEqual(chunks, ['a', 'b']);
      assert.equal((await p.complete(call())).object, 'chat.completion');
    } finally {
      proto[Symbol.asyncIterator] = iterator;
      await upstream.close();
    }
  });
});
