// The Anthropic adapter against a fake Anthropic: its options, the request
// Anthropic receives, complete() and stream(). Upstream errors are in
// ./anthropic-errors.test.ts, timeouts and aborts in ./anthropic-timeouts.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import type { ApiError } from '../../src/errors/api-error.ts';
import { createAnthropicProvider, messagesUrl, type AnthropicOptions } from '../../src/providers/anthropic.ts';
import { collect } from '../support/collect.ts';
import { fixtureJson, fixtureText } from '../fixtures/anthropic/fixtures.ts';
import { seededRandom } from '../upstream/seeded-random.ts';
import { API_KEY, call, json, MESSAGE_END, MESSAGE_START, pinCreated, providerFor, startEventStream, TEXT_BLOCK, useAnthropicUpstream } from './anthropic-fixtures.ts';
import { failure, rendered, tick } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

const upstream = useAnthropicUpstream();
const provider = (options: Partial<AnthropicOptions> = {}): DrivenProvider => providerFor(upstream, options);

describe('messagesUrl and options', () => {
  test('with and without trailing slashes, with a query', () => {
    assert.equal(messagesUrl('https://api.anthropic.com/v1'), 'https://api.anthropic.com/v1/messages');
    assert.equal(messagesUrl('http://h:1/v1/'), 'http://h:1/v1/messages');
    assert.equal(messagesUrl('https://h'), 'https://h/messages');
    assert.equal(messagesUrl('https://h/proxy/v1/?beta=true'), 'https://h/proxy/v1/messages?beta=true');
  });

  test('invalid options fail at creation without echoing secrets', () => {
    const bad: Array<Partial<AnthropicOptions>> = [
      { baseUrl: 'not a url' },
      { baseUrl: 'ftp://h/v1' },
      { baseUrl: 'http://h/v1#frag' },
      { baseUrl: 'http://user:pass@h/v1' },
      { timeoutMs: 0 },
      { firstByteTimeoutMs: -1 },
      { idleTimeoutMs: 1.5 },
      { maxResponseBytes: 0 },
      { maxEventBytes: 2 ** 31 },
    ];
    for (const options of bad) assert.throws(() => drive(createAnthropicProvider(options)), `${JSON.stringify(options)}`);
    assert.throws(
      () => drive(createAnthropicProvider({ apiKey: 'sk-ant-secret\nvalue' })),
      (error: Error) => error instanceof TypeError && !error.message.includes('sk-ant-secret'),
    );
    assert.throws(
      () => drive(createAnthropicProvider({ headers: { 'x-secret': 'hidden\r\nvalue' } })),
      (error: Error) => error instanceof TypeError && !error.message.includes('hidden'),
    );
    assert.throws(() => drive(createAnthropicProvider({ version: 'bad\nversion' })), TypeError);
  });

  test('defaults: no options at all is a valid provider', () => {
    const p = drive(createAnthropicProvider());
    assert.equal(typeof p.complete, 'function');
    assert.equal(typeof p.stream, 'function');
  });
});

describe('the request Anthropic receives', () => {
  test('non-stream: path, headers, translated body without stream', async () => {
    upstream.handle = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    const p = provider({
      baseUrl: `http://127.0.0.1:${upstream.port}/v1/`,
      headers: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'Content-Type': 'text/plain', 'X-Request-Id': 'spoof', 'x-api-key': 'overridden' },
    });
    await p.complete(call());
    assert.equal(upstream.received.length, 1);
    const [request] = upstream.received;
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/v1/messages');
    assert.equal(request?.headers['content-type'], 'application/json');
    assert.equal(request?.headers['accept'], 'application/json');
    assert.equal(request?.headers['x-api-key'], API_KEY);
    assert.equal(request?.headers['anthropic-version'], '2023-06-01');
    assert.equal(request?.headers['anthropic-beta'], 'prompt-caching-2024-07-31');
    assert.equal(request?.headers['x-request-id'], 'req_abc-123');
    assert.equal(request?.headers['authorization'], undefined);
    assert.equal(
      request?.text,
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
        system: [{ type: 'text', text: 'Be brief.' }],
      }),
    );
  });

  test('stream: accept event-stream, the fixture request translated exactly, stream true', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-text-tool.sse'));
    };
    await collect(provider().stream(call(fixtureJson<ChatRequest>('request.openai.json'))));
    assert.equal(upstream.received.length, 1);
    assert.equal(upstream.received[0]?.headers['accept'], 'text/event-stream');
    assert.deepEqual(JSON.parse(upstream.received[0]?.text ?? ''), fixtureJson('request.anthropic.json'));
  });

  test('stream is forced on for stream() and off for complete(), whatever the request says', async () => {
    upstream.handle = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    await provider().complete(call({ stream: true }));
    assert.equal('stream' in JSON.parse(upstream.received[0]?.text ?? ''), false);
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(MESSAGE_START + MESSAGE_END);
    };
    await collect(provider().stream(call({ stream: false })));
    assert.equal(JSON.parse(upstream.received[1]?.text ?? '').stream, true);
  });

  test('anthropic-version: the version option, else a configured header, else 2023-06-01; no key, no x-api-key', async () => {
    upstream.handle = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    await provider({ version: '2024-01-01', headers: { 'anthropic-version': '2022-01-01' } }).complete(call());
    await provider({ headers: { 'anthropic-version': '2022-01-01' } }).complete(call());
    await drive(createAnthropicProvider({ baseUrl: `http://127.0.0.1:${upstream.port}/v1` })).complete(call());
    assert.deepEqual(
      upstream.received.map((s) => s.headers['anthropic-version']),
      ['2024-01-01', '2022-01-01', '2023-06-01'],
    );
    assert.equal(upstream.received[2]?.headers['x-api-key'], undefined);
  });

  test('a request Anthropic cannot take is a 400 and never reaches the upstream', async () => {
    const p = provider();
    const error = await failure(p.complete(call({ temperature: 1.5 })));
    assert.equal(rendered(error).status, 400);
    assert.equal((error as ApiError).param, 'temperature');
    const streamError = await failure(collect(p.stream(call({ response_format: { type: 'json_object' } }))));
    assert.equal(rendered(streamError).status, 400);
    assert.equal((streamError as ApiError).param, 'response_format.type');
    assert.equal(upstream.received.length, 0);
  });
});

describe('complete()', () => {
  test('the fixture message becomes the OpenAI completion', async () => {
    upstream.handle = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    const completion = await provider().complete(call());
    assert.deepEqual({ ...completion, created: 1700000000 }, fixtureJson('response.openai.json'));
    assert.ok(Math.abs(completion.created - Date.now() / 1000) < 5);
  });

  test('non-JSON and malformed bodies are 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => json(res, 200, '<html>oops</html>');
    assert.deepEqual(rendered(await failure(provider().complete(call()))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a response that is not valid JSON.', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
    upstream.handle = (_req, res) => json(res, 200, { id: 'msg_1', content: 'Hi' });
    assert.deepEqual(rendered(await failure(provider().complete(call()))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a malformed response (at content).', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
  });

  test('a body over maxResponseBytes is refused, declared or not', async () => {
    upstream.handle = (_req, res) => json(res, 200, { ...fixtureJson<object>('response.anthropic.json'), padding: 'x'.repeat(5000) });
    assert.equal((await failure(provider({ maxResponseBytes: 1000 }).complete(call())) as ApiError).message, "The upstream response exceeds the gateway's limit of 1000 bytes.");
    upstream.handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10 && !res.destroyed; i++) {
        res.write('x'.repeat(500));
        await tick();
      }
      res.end();
    };
    assert.equal((await failure(provider({ maxResponseBytes: 1000 }).complete(call())) as ApiError).message, "The upstream response exceeds the gateway's limit of 1000 bytes.");
    await upstream.closed();
  });

  test('connection lost mid-body is 502 upstream_unreachable', async () => {
    upstream.handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":');
      await tick();
      res.destroy();
    };
    assert.equal((await failure(provider().complete(call())) as ApiError).code, 'upstream_unreachable');
  });
});

describe('stream()', () => {
  const expected = fixtureJson<ChatCompletionChunk[]>('stream-text-tool.openai.json');

  test('the fixture stream, split at seeded random points', async () => {
    const bytes = Buffer.from(fixtureText('stream-text-tool.sse'), 'utf8');
    const random = seededRandom(20240612);
    for (let round = 0; round < 12; round++) {
      upstream.handle = async (_req, res) => {
        startEventStream(res);
        let offset = 0;
        while (offset < bytes.length) {
          const size = 1 + Math.floor(random() * 60);
          res.write(bytes.subarray(offset, offset + size));
          offset += size;
          await tick();
        }
        res.end();
      };
      assert.deepEqual(pinCreated(await collect(provider().stream(call()))), expected, `round ${round}`);
    }
  });

  test('byte by byte', async () => {
    const bytes = Buffer.from(fixtureText('stream-text-tool.sse'), 'utf8');
    upstream.handle = async (_req, res) => {
      startEventStream(res);
      for (let i = 0; i < bytes.length; i++) {
        res.write(bytes.subarray(i, i + 1));
        if (i % 16 === 0) await tick();
      }
      res.end();
    };
    assert.deepEqual(pinCreated(await collect(provider().stream(call()))), expected);
  });

  test('reading stops at message_stop: whatever follows is not read', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START + TEXT_BLOCK + MESSAGE_END + 'event: error\ndata: {"type":"error","error":{"message":"late"}}\n\n');
      // ...and the connection stays open.
    };
    const chunks = await collect(provider().stream(call()));
    assert.deepEqual(
      chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason, c.usage]),
      [
        [{ role: 'assistant', content: '' }, null, undefined],
        [{ content: 'Hi' }, null, undefined],
        [{}, 'stop', undefined],
        [undefined, undefined, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } }],
      ],
    );
    await upstream.closed();
  });

  test('an error event: the chunks before it, then 502 with Anthropic message', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-error.sse'));
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call())) got.push(chunk);
      })(),
    );
    assert.deepEqual(pinCreated(got), fixtureJson('stream-error.openai.json'));
    assert.deepEqual(rendered(error), {
      status: 502,
      body: { error: { message: 'Overloaded', type: 'upstream_error', param: null, code: 'upstream_error' } },
      headers: {},
    });
  });

  test('a stream that ends without message_stop is 502 upstream_stream_truncated after the chunks it had', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(MESSAGE_START + TEXT_BLOCK);
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call())) got.push(chunk);
      })(),
    );
    assert.equal(got.length, 2);
    assert.deepEqual(rendered(error), {
      status: 502,
      body: { error: { message: 'The upstream stream ended unexpectedly.', type: 'upstream_error', param: null, code: 'upstream_stream_truncated' } },
      headers: {},
    });
  });

  test('a connection reset mid-stream is 502 upstream_stream_truncated, after the chunk it had', async () => {
    let cutNow: () => void = () => undefined;
    upstream.handle = async (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
      await new Promise<void>((resolve) => {
        cutNow = resolve;
      });
      res.destroy();
    };
    const stream = provider().stream(call())[Symbol.asyncIterator]();
    assert.equal(((await stream.next()).value as ChatCompletionChunk).id, 'msg_x');
    cutNow();
    assert.equal((await failure(stream.next()) as ApiError).code, 'upstream_stream_truncated');
  });

  test('a 200 that is not an event stream is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    const error = await failure(collect(provider().stream(call())));
    assert.equal((error as ApiError).message, 'The upstream provider did not answer with an event stream.');
  });

  test('an event over maxEventBytes is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(`${MESSAGE_START}event: content_block_delta\ndata: "${'x'.repeat(3000)}"\n\n`);
    };
    const error = await failure(collect(provider({ maxEventBytes: 1024 }).stream(call())));
    assert.equal((error as ApiError).message, 'The upstream provider sent a stream event larger than the gateway accepts.');
  });

  test('leaving the loop early aborts the upstream request', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
    };
    for await (const chunk of provider().stream(call())) {
      assert.equal(chunk.id, 'msg_x');
      break;
    }
    await upstream.closed();
  });
});

