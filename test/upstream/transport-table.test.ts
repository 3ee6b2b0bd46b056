// One table of behaviours, run against both transports (src/upstream/transport.ts)
// through the OpenAI-compatible adapter: what the upstream receives, the
// connect, first-byte, idle and total timeouts, a client abort, the bounded
// reads, a reset mid-body, refused redirects and connection reuse. Each case
// asserts the exact client error, so the two transports cannot drift apart.
// The exchange's timers run on a ManualScheduler: each timeout is asserted
// exactly (not fired 1 ms before its deadline, fired at it), whatever the load.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import { failureCauseOf } from '../../src/upstream/failure-cause.ts';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { startFakeUpstream } from '../../src/testing/fake-upstream.ts';
import { tracked } from '../support/settled.ts';
import {
  answer,
  call,
  chunkFrame,
  collect,
  completion,
  eventStream,
  failure,
  json,
  observed,
  provider,
  rendered,
  startEventStream,
  startUpstream,
  tick,
  TRANSPORTS,
  type TestUpstream,
} from './transport-fixtures.ts';

for (const t of TRANSPORTS) {
  describe(`the ${t.name} transport`, () => {
    let upstream: TestUpstream;
    before(async () => {
      upstream = await startUpstream(answer);
    });
    after(() => upstream.close());

    test('sends one POST with the exchange\'s headers and body; answers complete and stream', async () => {
      upstream.received.length = 0;
      upstream.handle = answer;
      const p = provider(t.make(), upstream.baseUrl);
      const done = await p.complete(call());
      assert.equal(done.choices[0]?.message.content, 'Hi there');
      const chunks = await collect(p.stream(call(true)));
      assert.deepEqual(chunks.map((c) => c.choices[0]?.delta.content), ['Hi', ' there']);
      assert.equal(upstream.received.length, 2);
      const [plain, streamed] = upstream.received;
      assert.equal(plain?.method, 'POST');
      assert.equal(plain?.url, '/v1/chat/completions');
      assert.equal(plain?.headers['authorization'], 'Bearer sk-upstream-secret');
      assert.equal(plain?.headers['content-type'], 'application/json');
      assert.equal(plain?.headers['accept'], 'application/json');
      assert.equal(plain?.headers['x-request-id'], 'req_table-1');
      assert.equal(plain?.headers['content-length'], String(Buffer.byteLength(plain?.text ?? '')));
      assert.deepEqual(JSON.parse(plain?.text ?? ''), { model: 'upstream-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 });
      assert.equal(streamed?.headers['accept'], 'text/event-stream');
      assert.deepEqual(JSON.parse(streamed?.text ?? '').stream_options, { include_usage: true });
    });

    test('connect timeout: a TLS handshake that never completes is 504 at connectTimeoutMs', async () => {
      // Accepts TCP and never says a word: connection setup that never ends, on loopback.
      const sockets: Socket[] = [];
      const silent = createNetServer((socket) => {
        sockets.push(socket);
        socket.on('error', () => undefined);
      });
      silent.listen(0, '127.0.0.1');
      await once(silent, 'listening');
      try {
        const scheduler = new ManualScheduler();
        const p = provider(t.make(), `https://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, { connectTimeoutMs: 150, scheduler });
        for (const [i, attempt] of [() => p.complete(call()), () => collect(p.stream(call(true)))].entries()) {
          const pending = tracked(failure(attempt()));
          await eventually(() => sockets.length === i + 1, 'the TCP connection');
          // One timer, at the earliest deadline: connect (150), before first-byte (5000) and total (600000).
          assert.deepEqual(scheduler.pending(), [150]);
          await scheduler.advance(149);
          assert.equal(pending.settled, false);
          await scheduler.advance(1);
          const error = await pending.promise;
          assert.deepEqual(rendered(error), { status: 504, code: 'upstream_timeout', message: 'The upstream provider did not accept a connection within 150 ms.' });
          assert.deepEqual(failureCauseOf(error).kind, 'timeout');
          assert.deepEqual(failureCauseOf(error).detail, 'connect');
          assert.deepEqual(scheduler.pending(), []);
        }
        assert.equal(sockets.length, 2);
      } finally {
        for (const socket of sockets) socket.destroy();
        silent.close();
      }
    });

    test('first-byte timeout: no headers at firstByteTimeoutMs is 504, and the upstream socket closes', async () => {
      upstream.handle = () => undefined;
      const scheduler = new ManualScheduler();
      const p = provider(t.make(), upstream.baseUrl, { firstByteTimeoutMs: 150, scheduler });
      for (const attempt of [() => p.complete(call()), () => collect(p.stream(call(true)))]) {
        const arrival = upstream.nextArrival();
        const pending = tracked(failure(attempt()));
        await arrival;
        await scheduler.advance(149);
        assert.equal(pending.settled, false);
        await scheduler.advance(1);
        assert.deepEqual(rendered(await pending.promise), { status: 504, code: 'upstream_timeout', message: 'The upstream provider did not deliver response headers within 150 ms.' });
        await upstream.closed();
      }
    });

    test('idle timeout: a stream that stalls after its first chunk is 504 at idleTimeoutMs, after the chunk', async () => {
      upstream.handle = (_req, res) => {
        startEventStream(res);
        res.write(chunkFrame('one'));
      };
      const scheduler = new ManualScheduler();
      const stream = provider(t.make(), upstream.baseUrl, { idleTimeoutMs: 150, scheduler }).stream(call(true))[Symbol.asyncIterator]();
      const first = (await stream.next()).value as ChatCompletionChunk;
      assert.equal(first.choices[0]?.delta.content, 'one');
      const next = tracked(failure(stream.next()));
      await scheduler.advance(149);
      assert.equal(next.settled, false);
      await scheduler.advance(1);
      assert.deepEqual(rendered(await next.promise), { status: 504, code: 'upstream_timeout', message: 'The upstream stream stalled: no data for 150 ms.' });
      await upstream.closed();
    });

    test('total timeout: a slow non-stream body is 504 at timeoutMs', async () => {
      upstream.handle = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":');
      };
      const scheduler = new ManualScheduler();
      const arrival = upstream.nextArrival();
      const pending = tracked(failure(provider(t.make(), upstream.baseUrl, { timeoutMs: 200, scheduler }).complete(call())));
      await arrival;
      await scheduler.advance(199);
      assert.equal(pending.settled, false);
      await scheduler.advance(1);
      assert.deepEqual(rendered(await pending.promise), { status: 504, code: 'upstream_timeout', message: 'The upstream provider did not deliver the whole response within 200 ms.' });
      await upstream.closed();
    });

    test('a client abort mid-stream ends the upstream request and is a client abort', async () => {
      upstream.handle = (_req, res) => {
        startEventStream(res);
        res.write(chunkFrame('one'));
      };
      const controller = new AbortController();
      const p = provider(t.make(), upstream.baseUrl);
      const error = await failure((async () => {
        for await (const _chunk of p.stream(call(true, controller.signal))) controller.abort(new Error('client left'));
      })());
      assert.ok(isClientAbort(error), String(error));
      await upstream.closed();
    });

    test('maxResponseBytes: a body over the limit, declared or chunked, is 502 bad_upstream_response', async () => {
      const big = { ...completion, padding: 'x'.repeat(400) };
      for (const declared of [true, false]) {
        upstream.handle = (_req, res) => {
          if (declared) return json(res, 200, big);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(big));
        };
        const error = await failure(provider(t.make(), upstream.baseUrl, { maxResponseBytes: 300 }).complete(call()));
        assert.deepEqual(rendered(error), { status: 502, code: 'bad_upstream_response', message: "The upstream response exceeds the gateway's limit of 300 bytes." });
      }
    });

    test('maxEventBytes: an event over the limit is 502 bad_upstream_response', async () => {
      upstream.handle = (_req, res) => {
        startEventStream(res);
        res.end(`${chunkFrame('x'.repeat(300))}data: [DONE]\n\n`);
      };
      const error = await failure(collect(provider(t.make(), upstream.baseUrl, { maxEventBytes: 200 }).stream(call(true))));
      assert.deepEqual(rendered(error), { status: 502, code: 'bad_upstream_response', message: 'The upstream provider sent a stream event larger than the gateway accepts.' });
    });

    test('a connection reset mid-body: 502 upstream_stream_truncated (stream), upstream_unreachable (non-stream)', async () => {
      // The upstream resets once the test says so: after the client has the headers (and, streaming, the first chunk).
      let cutNow: () => void = () => undefined;
      upstream.handle = async (req, res) => {
        const cut = new Promise<void>((resolve) => {
          cutNow = resolve;
        });
        if (req.headers['accept'] === 'text/event-stream') {
          startEventStream(res);
          res.write(chunkFrame('one'));
        } else {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
          res.write('{"id":"chatcmpl-cut",');
        }
        await cut;
        req.socket.resetAndDestroy();
      };
      let headers = (): void => undefined;
      const p = provider(observed(t.make(), () => headers()), upstream.baseUrl);
      const stream = p.stream(call(true))[Symbol.asyncIterator]();
      assert.equal(((await stream.next()).value as ChatCompletionChunk).choices[0]?.delta.content, 'one');
      cutNow();
      const streamed = await failure(stream.next());
      assert.deepEqual(rendered(streamed), { status: 502, code: 'upstream_stream_truncated', message: 'The upstream stream ended unexpectedly.' });
      assert.equal(failureCauseOf(streamed).kind, 'reset');
      headers = () => cutNow();
      const plain = await failure(p.complete(call()));
      assert.deepEqual(rendered(plain), { status: 502, code: 'upstream_unreachable', message: 'The connection to the upstream provider was lost while reading its response.' });
      assert.equal(failureCauseOf(plain).kind, 'reset');
    });

    test('a redirect is refused, never followed: 502 upstream_error with the status', async () => {
      const elsewhere = await startUpstream(answer);
      try {
        for (const status of [301, 302, 303, 307, 308]) {
          upstream.handle = (_req, res) => {
            res.writeHead(status, { location: `${elsewhere.baseUrl}/chat/completions`, 'content-length': '0' });
            res.end();
          };
          const p = provider(t.make(), upstream.baseUrl);
          for (const attempt of [() => p.complete(call()), () => collect(p.stream(call(true)))]) {
            const error = await failure(attempt());
            assert.deepEqual(rendered(error), { status: 502, code: 'upstream_error', message: `The upstream provider answered with an unexpected HTTP ${status}.` });
            assert.deepEqual(failureCauseOf(error), { kind: 'http', detail: String(status), address: `127.0.0.1:${upstream.port}` });
          }
        }
        assert.equal(elsewhere.received.length, 0);
      } finally {
        await elsewhere.close();
      }
    });

    test('connection reuse: sequential calls, complete and stream, go over one TCP connection', async () => {
      const own = await startUpstream(answer);
      try {
        const p = provider(t.make(), own.baseUrl);
        await p.complete(call());
        await tick();
        await p.complete(call());
        await tick();
        await collect(p.stream(call(true)));
        await tick();
        await collect(p.stream(call(true)));
        assert.equal(own.received.length, 4);
        assert.equal(own.connections, 1);
      } finally {
        await own.close();
      }
    });

    test('the interface itself: onConnected once, status and headers, the body read a chunk at a time; cancel() closes it', async () => {
      upstream.handle = (_req, res) => {
        startEventStream(res);
        res.write(chunkFrame('one'));
      };
      let connected = 0;
      const sent = t.make().send({
        url: `${upstream.baseUrl}/chat/completions`,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'req_direct' },
        body: '{"direct":true}',
        onConnected: () => connected++,
      });
      assert.equal(sent.connect, 'observed');
      const response = await sent.response;
      assert.equal(connected, 1);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(response.headers.get('x-not-there'), null);
      const bytes = await response.body.read();
      assert.equal(Buffer.from(bytes ?? []).toString('utf8'), chunkFrame('one'));
      response.body.cancel();
      await upstream.closed();
      assert.equal(upstream.received.at(-1)?.text, '{"direct":true}');
      assert.equal(upstream.received.at(-1)?.headers['x-request-id'], 'req_direct');
    });

    test('an IPv6 literal in baseUrl: [::1] is reached, with the bracketed Host', async () => {
      const v6 = await startFakeUpstream(answer, { host: '::1' });
      try {
        const p = provider(t.make(), v6.baseUrl);
        assert.equal((await p.complete(call())).choices[0]?.message.content, 'Hi there');
        assert.deepEqual(v6.received.map((r) => r.headers.host), [`[::1]:${v6.port}`]);
      } finally {
        await v6.close();
      }
    });

    test('an upstream error status is read with its message and Retry-After', async () => {
      upstream.handle = (_req, res) => json(res, 503, { error: { message: 'overloaded right now' } }, { 'retry-after': '3' });
      const error = await failure(provider(t.make(), upstream.baseUrl).complete(call()));
      assert.deepEqual(rendered(error), { status: 502, code: 'upstream_error', message: 'The upstream provider failed (HTTP 503): overloaded right now' });
      upstream.handle = (_req, res) => json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '3' });
      const limited = await failure(provider(t.make(), upstream.baseUrl).complete(call()));
      assert.deepEqual(rendered(limited).status, 429);
      assert.equal((limited as { headers: Record<string, string> }).headers['retry-after'], '3');
      upstream.handle = (_req, res) => eventStream(res);
    });
  });
}
