import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { createAnthropicProvider, messagesUrl, type AnthropicOptions } from '../../src/providers/anthropic.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import type { ChatProvider, UpstreamCall } from '../../src/upstream/provider.ts';
import { fixtureJson, fixtureText } from '../fixtures/anthropic/fixtures.ts';
import { refuseLikeAnthropic } from './anthropic-constraints.ts';
import { seededRandom } from '../upstream/seeded-random.ts';

// ---- the fake Anthropic upstream ---------------------------------------------

interface SeenRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

type Upstream = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

let server: Server;
let port = 0;
let upstream: Upstream = (_req, res) => {
  res.end();
};
let seen: SeenRequest[] = [];
/** Resolves when the upstream's side of the current exchange closes. */
let upstreamClosed: Promise<void> = Promise.resolve();

before(async () => {
  server = createServer(async (req, res) => {
    upstreamClosed = once(res, 'close').then(() => undefined);
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = Buffer.concat(parts).toString('utf8');
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    // Every request is held to Anthropic's documented constraints first.
    if (refuseLikeAnthropic(res, body)) return;
    try {
      await upstream(req, res, body);
    } catch {
      res.destroy();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

beforeEach(() => {
  seen = [];
});

const API_KEY = 'sk-ant-upstream-secret-123';

function provider(options: Partial<AnthropicOptions> = {}): ChatProvider {
  return createAnthropicProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, ...options });
}

const baseRequest: ChatRequest = {
  model: 'claude-sonnet-4-5',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello' },
  ],
  max_tokens: 64,
};

function call(request: Partial<ChatRequest> = {}, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  return { request: { ...baseRequest, ...request }, requestId: 'req_abc-123', signal };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

async function collect(iterable: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

/** Chunks with the clock-dependent `created` pinned, after checking that every
 * chunk of the stream carries the same one. */
function pinCreated(chunks: ChatCompletionChunk[], created = 1700000000): ChatCompletionChunk[] {
  const first = chunks[0]?.created;
  for (const chunk of chunks) assert.equal(chunk.created, first);
  return chunks.map((chunk) => ({ ...chunk, created }));
}

function rendered(error: unknown): { status: number; body: unknown; headers: Record<string, string> } {
  assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
  return { status: error.status, body: error.toBody(), headers: error.headers };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

function assertNoSecrets(error: unknown): void {
  const text = JSON.stringify(error instanceof ApiError ? error.toBody() : String(error));
  assert.ok(!text.includes('127.0.0.1'), text);
  assert.ok(!text.includes(String(port)), text);
  assert.ok(!text.includes(API_KEY), text);
}


const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const MESSAGE_START =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n';
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';
const TEXT_BLOCK =
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n' +
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
const MESSAGE_END =
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n' +
  'event: message_stop\ndata: {"type":"message_stop"}\n\n';

// ---- tests -------------------------------------------------------------------

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
    for (const options of bad) assert.throws(() => createAnthropicProvider(options), `${JSON.stringify(options)}`);
    assert.throws(
      () => createAnthropicProvider({ apiKey: 'sk-ant-secret\nvalue' }),
      (error: Error) => error instanceof TypeError && !error.message.includes('sk-ant-secret'),
    );
    assert.throws(
      () => createAnthropicProvider({ headers: { 'x-secret': 'hidden\r\nvalue' } }),
      (error: Error) => error instanceof TypeError && !error.message.includes('hidden'),
    );
    assert.throws(() => createAnthropicProvider({ version: 'bad\nversion' }), TypeError);
  });

  test('defaults: no options at all is a valid provider', () => {
    const p = createAnthropicProvider();
    assert.equal(typeof p.complete, 'function');
    assert.equal(typeof p.stream, 'function');
  });
});

describe('the request Anthropic receives', () => {
  test('non-stream: path, headers, translated body without stream', async () => {
    upstream = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    const p = provider({
      baseUrl: `http://127.0.0.1:${port}/v1/`,
      headers: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'Content-Type': 'text/plain', 'X-Request-Id': 'spoof', 'x-api-key': 'overridden' },
    });
    await p.complete(call());
    assert.equal(seen.length, 1);
    const [request] = seen;
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
      request?.body,
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
        system: [{ type: 'text', text: 'Be brief.' }],
      }),
    );
  });

  test('stream: accept event-stream, the fixture request translated exactly, stream true', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-text-tool.sse'));
    };
    await collect(provider().stream(call(fixtureJson<ChatRequest>('request.openai.json'))));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.headers['accept'], 'text/event-stream');
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), fixtureJson('request.anthropic.json'));
  });

  test('stream is forced on for stream() and off for complete(), whatever the request says', async () => {
    upstream = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    await provider().complete(call({ stream: true }));
    assert.equal('stream' in JSON.parse(seen[0]?.body ?? ''), false);
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(MESSAGE_START + MESSAGE_END);
    };
    await collect(provider().stream(call({ stream: false })));
    assert.equal(JSON.parse(seen[1]?.body ?? '').stream, true);
  });

  test('anthropic-version: the version option, else a configured header, else 2023-06-01; no key, no x-api-key', async () => {
    upstream = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    await provider({ version: '2024-01-01', headers: { 'anthropic-version': '2022-01-01' } }).complete(call());
    await provider({ headers: { 'anthropic-version': '2022-01-01' } }).complete(call());
    await createAnthropicProvider({ baseUrl: `http://127.0.0.1:${port}/v1` }).complete(call());
    assert.deepEqual(
      seen.map((s) => s.headers['anthropic-version']),
      ['2024-01-01', '2022-01-01', '2023-06-01'],
    );
    assert.equal(seen[2]?.headers['x-api-key'], undefined);
  });

  test('a request Anthropic cannot take is a 400 and never reaches the upstream', async () => {
    const p = provider();
    const error = await failure(p.complete(call({ temperature: 1.5 })));
    assert.equal(rendered(error).status, 400);
    assert.equal((error as ApiError).param, 'temperature');
    const streamError = await failure(collect(p.stream(call({ response_format: { type: 'json_object' } }))));
    assert.equal(rendered(streamError).status, 400);
    assert.equal((streamError as ApiError).param, 'response_format.type');
    assert.equal(seen.length, 0);
  });
});

describe('complete()', () => {
  test('the fixture message becomes the OpenAI completion', async () => {
    upstream = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    const completion = await provider().complete(call());
    assert.deepEqual({ ...completion, created: 1700000000 }, fixtureJson('response.openai.json'));
    assert.ok(Math.abs(completion.created - Date.now() / 1000) < 5);
  });

  test('non-JSON and malformed bodies are 502 bad_upstream_response', async () => {
    upstream = (_req, res) => json(res, 200, '<html>oops</html>');
    assert.deepEqual(rendered(await failure(provider().complete(call()))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a response that is not valid JSON.', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
    upstream = (_req, res) => json(res, 200, { id: 'msg_1', content: 'Hi' });
    assert.deepEqual(rendered(await failure(provider().complete(call()))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a malformed response (at content).', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
  });

  test('a body over maxResponseBytes is refused, declared or not', async () => {
    upstream = (_req, res) => json(res, 200, { ...fixtureJson<object>('response.anthropic.json'), padding: 'x'.repeat(5000) });
    assert.equal((await failure(provider({ maxResponseBytes: 1000 }).complete(call())) as ApiError).message, "The upstream response exceeds the gateway's limit of 1000 bytes.");
    upstream = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10 && !res.destroyed; i++) {
        res.write('x'.repeat(500));
        await tick();
      }
      res.end();
    };
    assert.equal((await failure(provider({ maxResponseBytes: 1000 }).complete(call())) as ApiError).message, "The upstream response exceeds the gateway's limit of 1000 bytes.");
    await upstreamClosed;
  });

  test('connection lost mid-body is 502 upstream_unreachable', async () => {
    upstream = async (_req, res) => {
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
      upstream = async (_req, res) => {
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
    upstream = async (_req, res) => {
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
    upstream = (_req, res) => {
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
    await upstreamClosed;
  });

  test('an error event: the chunks before it, then 502 with Anthropic message', async () => {
    upstream = (_req, res) => {
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
    upstream = (_req, res) => {
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

  test('a connection reset mid-stream is 502 upstream_stream_truncated', async () => {
    upstream = async (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
      await sleep(20);
      res.destroy();
    };
    assert.equal((await failure(collect(provider().stream(call()))) as ApiError).code, 'upstream_stream_truncated');
  });

  test('a 200 that is not an event stream is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    const error = await failure(collect(provider().stream(call())));
    assert.equal((error as ApiError).message, 'The upstream provider did not answer with an event stream.');
  });

  test('an event over maxEventBytes is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(`${MESSAGE_START}event: content_block_delta\ndata: "${'x'.repeat(3000)}"\n\n`);
    };
    const error = await failure(collect(provider({ maxEventBytes: 1024 }).stream(call())));
    assert.equal((error as ApiError).message, 'The upstream provider sent a stream event larger than the gateway accepts.');
  });

  test('leaving the loop early aborts the upstream request', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
    };
    for await (const chunk of provider().stream(call())) {
      assert.equal(chunk.id, 'msg_x');
      break;
    }
    await upstreamClosed;
  });
});

describe('upstream HTTP errors (Anthropic error bodies)', () => {
  const anthropicError = (type: string, message: string): unknown => ({ type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });
  interface Case {
    name: string;
    status: number;
    body?: unknown;
    headers?: Record<string, string>;
    expected: { status: number; body: unknown; headers: Record<string, string> };
  }
  const authFailed = (status: number): Case['expected'] => ({
    status: 502,
    body: {
      error: {
        message: `The upstream provider refused the gateway's credentials (HTTP ${status}). This is a gateway configuration problem, not a problem with your API key.`,
        type: 'upstream_error',
        param: null,
        code: 'upstream_auth_failed',
      },
    },
    headers: {},
  });
  const cases: Case[] = [
    {
      name: '400 invalid_request_error passes Anthropic message on',
      status: 400,
      body: anthropicError('invalid_request_error', 'messages.1.content.0.image.source.url: Unable to download the file.'),
      expected: {
        status: 400,
        body: { error: { message: 'messages.1.content.0.image.source.url: Unable to download the file.', type: 'invalid_request_error', param: null, code: null } },
        headers: {},
      },
    },
    {
      name: '413 request_too_large is the client request too',
      status: 413,
      body: anthropicError('request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
      expected: {
        status: 400,
        body: { error: { message: 'Request exceeds the maximum allowed number of bytes.', type: 'invalid_request_error', param: null, code: null } },
        headers: {},
      },
    },
    { name: '401 authentication_error', status: 401, body: anthropicError('authentication_error', `invalid x-api-key ${API_KEY}`), expected: authFailed(401) },
    { name: '403 permission_error', status: 403, body: anthropicError('permission_error', 'Your API key does not have permission.'), expected: authFailed(403) },
    {
      name: '404 not_found_error (unknown model)',
      status: 404,
      body: anthropicError('not_found_error', 'model: claude-nope'),
      expected: {
        status: 502,
        body: {
          error: {
            message:
              'The upstream provider does not serve the model or endpoint the gateway is configured to use (HTTP 404). This is a gateway configuration problem.',
            type: 'upstream_error',
            param: null,
            code: 'upstream_not_found',
          },
        },
        headers: {},
      },
    },
    {
      name: '429 rate_limit_error with retry-after',
      status: 429,
      body: anthropicError('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
      headers: { 'retry-after': '17' },
      expected: {
        status: 429,
        body: { error: { message: 'The upstream provider is rate limiting requests; retry after a pause.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } },
        headers: { 'retry-after': '17' },
      },
    },
    {
      name: '500 api_error',
      status: 500,
      body: anthropicError('api_error', 'Internal server error'),
      expected: {
        status: 502,
        body: { error: { message: 'The upstream provider failed (HTTP 500): Internal server error', type: 'upstream_error', param: null, code: 'upstream_error' } },
        headers: {},
      },
    },
    {
      name: '529 overloaded_error is a 5xx like 503',
      status: 529,
      body: anthropicError('overloaded_error', 'Overloaded'),
      expected: {
        status: 502,
        body: { error: { message: 'The upstream provider failed (HTTP 529): Overloaded', type: 'upstream_error', param: null, code: 'upstream_error' } },
        headers: {},
      },
    },
  ];

  for (const c of cases) {
    for (const mode of ['complete', 'stream'] as const) {
      test(`${c.name} (${mode})`, async () => {
        upstream = (_req, res) => json(res, c.status, c.body ?? '', c.headers ?? {});
        const p = provider();
        const error = mode === 'complete' ? await failure(p.complete(call())) : await failure(collect(p.stream(call())));
        assert.deepEqual(rendered(error), c.expected);
        assertNoSecrets(error);
      });
    }
  }

  test('a redirect is not followed', async () => {
    upstream = (_req, res) => {
      res.writeHead(307, { location: '/elsewhere' });
      res.end();
    };
    const error = await failure(provider().complete(call()));
    assert.equal((error as ApiError).message, 'The upstream provider answered with an unexpected HTTP 307.');
    assert.equal(seen.length, 1);
  });
});

describe('network failures, timeouts and aborts', () => {
  test('connection refused is 502 upstream_unreachable', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const deadPort = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const p = createAnthropicProvider({ baseUrl: `http://127.0.0.1:${deadPort}/v1`, apiKey: API_KEY });
    for (const attempt of [p.complete(call()), collect(p.stream(call()))]) {
      const error = await failure(attempt);
      assert.deepEqual(rendered(error), {
        status: 502,
        body: { error: { message: 'The upstream provider could not be reached.', type: 'upstream_error', param: null, code: 'upstream_unreachable' } },
        headers: {},
      });
      assertNoSecrets(error);
    }
  });

  test('no headers within firstByteTimeoutMs is 504, and the socket is closed', async () => {
    upstream = () => {};
    const error = await failure(provider({ firstByteTimeoutMs: 100 }).stream(call())[Symbol.asyncIterator]().next());
    assert.deepEqual(rendered(error), {
      status: 504,
      body: { error: { message: 'The upstream provider did not deliver response headers within 100 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstreamClosed;
  });

  test('a stream that stalls between events for idleTimeoutMs is 504, after the chunks it had', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
      // then nothing
    };
    const got: ChatCompletionChunk[] = [];
    const started = performance.now();
    const error = await failure(
      (async () => {
        for await (const chunk of provider({ idleTimeoutMs: 120 }).stream(call())) got.push(chunk);
      })(),
    );
    assert.ok(performance.now() - started < 2000);
    assert.equal(got.length, 1);
    assert.deepEqual(rendered(error), {
      status: 504,
      body: { error: { message: 'The upstream stream stalled: no data for 120 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstreamClosed;
  });

  test('headers then no event at all within idleTimeoutMs is the same 504', async () => {
    upstream = (_req, res) => startEventStream(res);
    const error = await failure(collect(provider({ idleTimeoutMs: 100 }).stream(call())));
    assert.equal((error as ApiError).message, 'The upstream stream stalled: no data for 100 ms.');
    await upstreamClosed;
  });

  test('pings and keep-alive comments keep a slow stream alive', async () => {
    upstream = async (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
      for (let i = 0; i < 6; i++) {
        await sleep(40);
        res.write(i % 2 === 0 ? PING : ': keep-alive\n\n');
      }
      res.end(TEXT_BLOCK + MESSAGE_END);
    };
    const chunks = await collect(provider({ idleTimeoutMs: 100 }).stream(call()));
    assert.equal(chunks.length, 4);
  });

  test('a slow consumer is backpressure, not an idle upstream', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(MESSAGE_START + TEXT_BLOCK + MESSAGE_END);
    };
    const got: ChatCompletionChunk[] = [];
    for await (const chunk of provider({ idleTimeoutMs: 50 }).stream(call())) {
      got.push(chunk);
      await sleep(80);
    }
    assert.equal(got.length, 4);
  });

  test('the total timeout covers a stream that keeps pinging', async () => {
    let pinging: Promise<void> = Promise.resolve();
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
      pinging = (async () => {
        for (let i = 0; i < 50 && !res.destroyed; i++) {
          await sleep(20);
          res.write(PING);
        }
        res.end();
      })();
    };
    const error = await failure(collect(provider({ idleTimeoutMs: 100, timeoutMs: 250 }).stream(call())));
    assert.equal((error as ApiError).message, 'The upstream provider did not deliver the whole response within 250 ms.');
    await upstreamClosed;
    // Its last sleep must not count as a timer left behind by a later test.
    await pinging;
  });

  test('call.signal aborting mid-stream aborts the upstream and throws a client abort', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call({}, controller.signal))) {
          got.push(chunk);
          controller.abort(reason);
        }
      })(),
    );
    assert.equal(got.length, 1);
    assert.equal(isClientAbort(error), true);
    assert.equal((error as Error).cause, reason);
    await upstreamClosed;
  });

  test('call.signal aborting before the headers aborts the upstream (complete)', async () => {
    const controller = new AbortController();
    upstream = () => {
      controller.abort();
    };
    assert.equal(isClientAbort(await failure(provider().complete(call({}, controller.signal)))), true);
    await upstreamClosed;
  });

  test('an already aborted signal never reaches the upstream', async () => {
    const controller = new AbortController();
    controller.abort();
    const p = provider();
    assert.equal(isClientAbort(await failure(p.complete(call({}, controller.signal)))), true);
    assert.equal(isClientAbort(await failure(collect(p.stream(call({}, controller.signal))))), true);
    assert.equal(seen.length, 0);
  });

  test('no timers or abort listeners are left behind', async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    let listening = 0;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      listening++;
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      listening--;
      remove(...args);
    };
    const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const p = provider({ timeoutMs: 60_000, firstByteTimeoutMs: 60_000, idleTimeoutMs: 60_000 });

    upstream = (_req, res) => json(res, 200, fixtureJson('response.anthropic.json'));
    await p.complete(call({}, signal));
    upstream = (_req, res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    await failure(p.complete(call({}, signal)));
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-text-tool.sse'));
    };
    await collect(p.stream(call({}, signal)));
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(fixtureText('stream-error.sse'));
    };
    await failure(collect(p.stream(call({}, signal))));
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(MESSAGE_START);
    };
    for await (const chunk of p.stream(call({}, signal))) {
      assert.equal(chunk.id, 'msg_x');
      break;
    }
    await upstreamClosed;
    assert.equal(timers(), before);
    assert.equal(listening, 0);
  });
});

describe('connect timeout', () => {
  test('a connection that never completes is 504 within connectTimeoutMs, well before the first-byte timeout', async () => {
    // Accepts TCP and never answers: a TLS handshake to it hangs, on 127.0.0.1.
    const sockets: Socket[] = [];
    const tcp = createNetServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    tcp.listen(0, '127.0.0.1');
    await once(tcp, 'listening');
    try {
      const p = createAnthropicProvider({ baseUrl: `https://127.0.0.1:${(tcp.address() as AddressInfo).port}/v1`, connectTimeoutMs: 150, firstByteTimeoutMs: 5000 });
      for (const attempt of [() => p.complete(call()), () => collect(p.stream(call({ stream: true })))]) {
        const started = performance.now();
        const error = await failure(attempt());
        const elapsed = performance.now() - started;
        assert.ok(elapsed >= 140 && elapsed < 1500, String(elapsed));
        assert.deepEqual(rendered(error), {
          status: 504,
          body: { error: { message: 'The upstream provider did not accept a connection within 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
          headers: {},
        });
      }
      assert.equal(sockets.length, 2);
    } finally {
      for (const socket of sockets) socket.destroy();
      tcp.close();
      await once(tcp, 'close');
    }
  });

  test('connectTimeoutMs is validated', () => {
    for (const connectTimeoutMs of [0, -1, 1.5, 2 ** 31]) {
      assert.throws(() => createAnthropicProvider({ connectTimeoutMs }), RangeError);
    }
  });
});
