import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { normalizeChunk, normalizeCompletion } from '../../src/chat/completion-response.ts';
import type { ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import {
  chatCompletionsUrl,
  createOpenAICompatibleProvider,
  type OpenAICompatibleOptions,
} from '../../src/providers/openai-compatible.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import type { ChatProvider, UpstreamCall } from '../../src/upstream/provider.ts';
import { seededRandom } from '../upstream/seeded-random.ts';

// ---- the fake upstream -------------------------------------------------------

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

const API_KEY = 'sk-upstream-secret-123';

function provider(options: Partial<OpenAICompatibleOptions> = {}): ChatProvider {
  return createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, ...options });
}

const baseRequest: ChatRequest = {
  model: 'upstream-model',
  messages: [{ role: 'user', content: 'Hello' }],
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

/** The ApiError's rendering, for exact assertions. */
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

/**
 * An upstream of its own on a port no connection pool has seen, recording the
 * client port of every request. Tests about connection reuse use one: after a
 * server closes pooled connections, when the pool opens the next one is
 * undici's business and differs between Node lines (Node 24's opens a new one
 * per request for a few ticks after the server closed an idle one).
 */
async function ownUpstream(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ baseUrl: string; ports: Array<number | undefined>; close(): Promise<void> }> {
  const ports: Array<number | undefined> = [];
  const own = createServer((req, res) => {
    ports.push(req.socket.remotePort);
    req.resume();
    handle(req, res);
  });
  own.listen(0, '127.0.0.1');
  await once(own, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(own.address() as AddressInfo).port}/v1`,
    ports,
    async close() {
      own.closeAllConnections();
      own.close();
      await once(own, 'close');
    },
  };
}

function completionBody(): Record<string, unknown> {
  return {
    id: 'chatcmpl-up1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model-2024',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  };
}

function chunkBodies(): Array<Record<string, unknown>> {
  const base = { id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1700000001, model: 'upstream-model-2024' };
  return [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'héllo ' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: 'wörld 😀\nnext line' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
  ];
}

/** An upstream event stream: mixed line ends, a keep-alive comment, [DONE]. */
function streamText(): string {
  const events = chunkBodies().map((chunk, i) => (i % 2 === 0 ? `data: ${JSON.stringify(chunk)}\n\n` : `data: ${JSON.stringify(chunk)}\r\n\r\n`));
  return `: keep-alive\n\n${events.join('')}data: [DONE]\n\n`;
}

// ---- tests -------------------------------------------------------------------

describe('chatCompletionsUrl and options', () => {
  test('with and without trailing slashes', () => {
    assert.equal(chatCompletionsUrl('http://h:1/v1'), 'http://h:1/v1/chat/completions');
    assert.equal(chatCompletionsUrl('http://h:1/v1/'), 'http://h:1/v1/chat/completions');
    assert.equal(chatCompletionsUrl('http://h:1/v1//'), 'http://h:1/v1/chat/completions');
    assert.equal(chatCompletionsUrl('https://h'), 'https://h/chat/completions');
    assert.equal(chatCompletionsUrl('https://h/'), 'https://h/chat/completions');
    assert.equal(chatCompletionsUrl('https://h/openai/?api-version=2024-10-21'), 'https://h/openai/chat/completions?api-version=2024-10-21');
  });

  test('invalid options fail at creation without echoing secrets', () => {
    const bad: Array<Partial<OpenAICompatibleOptions>> = [
      { baseUrl: 'not a url' },
      { baseUrl: 'ftp://h/v1' },
      { baseUrl: 'http://h/v1#frag' },
      { baseUrl: 'http://user:pass@h/v1' },
      { timeoutMs: 0 },
      { firstByteTimeoutMs: -1 },
      { maxResponseBytes: 1.5 },
      { timeoutMs: 2 ** 31 },
    ];
    for (const options of bad) {
      assert.throws(() => createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', ...options }), `${JSON.stringify(options)}`);
    }
    assert.throws(
      () => createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', apiKey: 'sk-secret\nvalue' }),
      (error: Error) => error instanceof TypeError && !error.message.includes('sk-secret'),
    );
    assert.throws(
      () => createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', headers: { 'x-secret': 'hidden\r\nvalue' } }),
      (error: Error) => error instanceof TypeError && !error.message.includes('hidden'),
    );
  });
});

describe('the request the upstream receives', () => {
  test('non-stream: path, headers, body', async () => {
    upstream = (_req, res) => json(res, 200, completionBody());
    const p = provider({ baseUrl: `http://127.0.0.1:${port}/v1/`, headers: { 'X-Org': 'acme', 'Content-Type': 'text/plain', 'X-Request-Id': 'spoof' } });
    await p.complete(call());
    assert.equal(seen.length, 1);
    const [request] = seen;
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/v1/chat/completions');
    assert.equal(request?.headers['content-type'], 'application/json');
    assert.equal(request?.headers['accept'], 'application/json');
    assert.equal(request?.headers['authorization'], `Bearer ${API_KEY}`);
    assert.equal(request?.headers['x-request-id'], 'req_abc-123');
    assert.equal(request?.headers['x-org'], 'acme');
    assert.equal(request?.body, JSON.stringify(baseRequest));
  });

  test('stream: accept event-stream, stream_options include_usage always sent', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n\n');
    };
    await collect(provider().stream(call({ stream: true })));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.headers['accept'], 'text/event-stream');
    assert.equal(seen[0]?.body, JSON.stringify({ ...baseRequest, stream: true, stream_options: { include_usage: true } }));
  });

  test('stream: a client stream_options is overridden to include usage', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n\n');
    };
    await collect(provider().stream(call({ stream: true, stream_options: { include_usage: false } })));
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { ...baseRequest, stream: true, stream_options: { include_usage: true } });
  });

  test('no apiKey: no authorization header, unless configured as an extra header', async () => {
    upstream = (_req, res) => json(res, 200, completionBody());
    await createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1` }).complete(call());
    assert.equal(seen[0]?.headers['authorization'], undefined);
    await createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, headers: { 'api-key': 'azure-style' } }).complete(call());
    assert.equal(seen[1]?.headers['authorization'], undefined);
    assert.equal(seen[1]?.headers['api-key'], 'azure-style');
  });
  test('apiKeyHeader: the key alone in that header, never also as Bearer; the query kept', async () => {
    upstream = (_req, res) => json(res, 200, completionBody());
    const base = `http://127.0.0.1:${port}/openai/deployments/gpt-4o?api-version=2024-10-21`;
    await createOpenAICompatibleProvider({ baseUrl: base, apiKey: API_KEY, apiKeyHeader: 'api-key' }).complete(call());
    assert.equal(seen[0]?.url, '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
    assert.equal(seen[0]?.headers['api-key'], API_KEY);
    assert.equal(seen[0]?.headers['authorization'], undefined);
    await createOpenAICompatibleProvider({ baseUrl: base, apiKey: API_KEY, apiKeyHeader: 'Authorization' }).complete(call());
    assert.equal(seen[1]?.headers['authorization'], `Bearer ${API_KEY}`);
    assert.equal(seen[1]?.headers['api-key'], undefined);
  });

  test('an invalid apiKeyHeader fails at creation without echoing the key', () => {
    assert.throws(
      () => createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', apiKey: 'sk-secret', apiKeyHeader: 'api key' }),
      (error: Error) => error instanceof TypeError && /apiKeyHeader/.test(error.message) && !error.message.includes('sk-secret'),
    );
  });
});

describe('complete()', () => {
  test('returns the normalised completion, model as the upstream gave it', async () => {
    upstream = (_req, res) => json(res, 200, completionBody());
    const completion = await provider().complete(call());
    assert.deepEqual(completion, normalizeCompletion(completionBody()));
    assert.equal(completion.model, 'upstream-model-2024');
    assert.equal(completion.choices[0]?.message.content, 'Hi there');
    assert.equal(completion.usage?.total_tokens, 7);
  });

  test('a chunked body without content-length', async () => {
    upstream = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify(completionBody());
      res.write(text.slice(0, 10));
      await tick();
      res.end(text.slice(10));
    };
    assert.deepEqual(await provider().complete(call()), normalizeCompletion(completionBody()));
  });

  test('non-JSON body is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => json(res, 200, '<html>oops</html>');
    assert.deepEqual(rendered(await failure(provider().complete(call()))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a response that is not valid JSON.', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
  });

  test('JSON of the wrong shape is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => json(res, 200, { choices: 5 });
    const error = await failure(provider().complete(call()));
    assert.equal(rendered(error).status, 502);
    assert.equal((error as ApiError).code, 'bad_upstream_response');
  });

  test('a body over maxResponseBytes is refused, declared or not', async () => {
    const big = JSON.stringify({ ...completionBody(), padding: 'x'.repeat(5000) });
    const expected = {
      status: 502,
      body: { error: { message: "The upstream response exceeds the gateway's limit of 1000 bytes.", type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    };
    upstream = (_req, res) => json(res, 200, big);
    assert.deepEqual(rendered(await failure(provider({ maxResponseBytes: 1000 }).complete(call()))), expected);

    upstream = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10; i++) {
        res.write('x'.repeat(500));
        await tick();
      }
      res.end();
    };
    assert.deepEqual(rendered(await failure(provider({ maxResponseBytes: 1000 }).complete(call()))), expected);
  });

  test('connection lost mid-body is 502 upstream_unreachable', async () => {
    upstream = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":');
      await tick();
      res.destroy();
    };
    const error = await failure(provider().complete(call()));
    assert.deepEqual(rendered(error).body, {
      error: {
        message: 'The connection to the upstream provider was lost while reading its response.',
        type: 'upstream_error',
        param: null,
        code: 'upstream_unreachable',
      },
    });
  });
});

describe('stream()', () => {
  test('yields normalised chunks until [DONE], split at seeded random points', async () => {
    const text = streamText();
    const bytes = Buffer.from(text, 'utf8');
    const expected = chunkBodies().map((chunk) => normalizeChunk(chunk));
    const random = seededRandom(20240611);
    for (let round = 0; round < 12; round++) {
      upstream = async (_req, res) => {
        startEventStream(res);
        let offset = 0;
        while (offset < bytes.length) {
          const size = 1 + Math.floor(random() * 40);
          res.write(bytes.subarray(offset, offset + size));
          offset += size;
          await tick();
        }
        res.end();
      };
      assert.deepEqual(await collect(provider().stream(call({ stream: true }))), expected, `round ${round}`);
    }
    assert.equal(expected[1]?.choices[0]?.delta.content, 'héllo ');
    assert.equal(expected[2]?.choices[0]?.delta.content, 'wörld 😀\nnext line');
    assert.equal(expected[4]?.usage?.total_tokens, 7);
  });

  test('a frame without choices or usage (Azure\'s prompt_filter_results) is skipped; a usage-only frame is not', async () => {
    const azureFirst = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] };
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(`data: ${JSON.stringify(azureFirst)}\n\n${streamText()}`);
    };
    assert.deepEqual(await collect(provider().stream(call({ stream: true }))), chunkBodies().map((chunk) => normalizeChunk(chunk)));
    assert.ok(chunkBodies().some((chunk) => Array.isArray(chunk['choices']) && chunk['choices'].length === 0 && chunk['usage'] !== undefined));
  });

  test('byte by byte', async () => {
    const bytes = Buffer.from(streamText(), 'utf8');
    upstream = async (_req, res) => {
      startEventStream(res);
      for (let i = 0; i < bytes.length; i++) {
        res.write(bytes.subarray(i, i + 1));
        if (i % 16 === 0) await tick();
      }
      res.end();
    };
    assert.deepEqual(await collect(provider().stream(call({ stream: true }))), chunkBodies().map((chunk) => normalizeChunk(chunk)));
  });

  test('a stream that ends without [DONE] is 502 upstream_stream_truncated after the chunks it had', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call({ stream: true }))) got.push(chunk);
      })(),
    );
    assert.equal(got.length, 1);
    assert.deepEqual(rendered(error), {
      status: 502,
      body: { error: { message: 'The upstream stream ended unexpectedly.', type: 'upstream_error', param: null, code: 'upstream_stream_truncated' } },
      headers: {},
    });
  });

  test('[DONE] without its blank line is not a clean end', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n');
    };
    assert.equal((rendered(await failure(collect(provider().stream(call({ stream: true }))))).body as { error: { code: string } }).error.code, 'upstream_stream_truncated');
  });

  test('a connection reset mid-stream is 502 upstream_stream_truncated', async () => {
    upstream = async (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
      await tick();
      res.destroy();
    };
    const error = await failure(collect(provider().stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'upstream_stream_truncated');
    assert.equal((error as ApiError).status, 502);
  });

  test('an error frame is 502 upstream_error with the upstream message', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
      res.end('data: {"error":{"message":"The server is overloaded","type":"server_error","code":"server_is_overloaded"}}\n\ndata: [DONE]\n\n');
    };
    const error = await failure(collect(provider().stream(call({ stream: true }))));
    assert.deepEqual(rendered(error), {
      status: 502,
      body: { error: { message: 'The server is overloaded', type: 'upstream_error', param: null, code: 'upstream_error' } },
      headers: {},
    });
  });

  test('an `event: error` frame without an error key is an error too', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end('event: error\ndata: {"message":"quota gone"}\n\ndata: [DONE]\n\n');
    };
    assert.equal((await failure(collect(provider().stream(call({ stream: true }))))  as ApiError).message, 'quota gone');
  });

  test('malformed JSON in a data line is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end('data: {"id": nope}\n\ndata: [DONE]\n\n');
    };
    const error = await failure(collect(provider().stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'bad_upstream_response');
    assert.equal((error as ApiError).message, 'The upstream provider returned a response that is not valid JSON.');
  });

  test('an event over maxEventBytes is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(`data: "${'x'.repeat(3000)}"\n\ndata: [DONE]\n\n`);
    };
    const error = await failure(collect(provider({ maxEventBytes: 1024 }).stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'bad_upstream_response');
    assert.equal((error as ApiError).message, 'The upstream provider sent a stream event larger than the gateway accepts.');
  });

  test('a 200 that is not an event stream is 502 bad_upstream_response', async () => {
    upstream = (_req, res) => json(res, 200, completionBody());
    const error = await failure(collect(provider().stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'bad_upstream_response');
    assert.equal((error as ApiError).message, 'The upstream provider did not answer with an event stream.');
  });

  test('leaving the loop early aborts the upstream request', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
      // ...and never finishes on its own.
    };
    for await (const chunk of provider().stream(call({ stream: true }))) {
      assert.equal(chunk.id, 'chatcmpl-s1');
      break;
    }
    await upstreamClosed;
  });
});

describe('upstream HTTP errors', () => {
  interface Case {
    name: string;
    status: number;
    body?: unknown;
    headers?: Record<string, string>;
    expected: { status: number; body: unknown; headers: Record<string, string> };
  }
  const cases: Case[] = [
    {
      name: '400 with an OpenAI error body',
      status: 400,
      body: { error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
      expected: {
        status: 400,
        body: { error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
        headers: {},
      },
    },
    {
      name: '422 vLLM-style',
      status: 422,
      body: { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', param: null, code: 422 },
      expected: { status: 400, body: { error: { message: 'max_tokens is too large', type: 'invalid_request_error', param: null, code: null } }, headers: {} },
    },
    {
      name: '400 with a non-JSON body',
      status: 400,
      body: 'Bad Request at http://internal-host:8000/v1',
      expected: {
        status: 400,
        body: {
          error: {
            message: 'The upstream provider rejected the request (HTTP 400) without saying why.',
            type: 'invalid_request_error',
            param: null,
            code: 'upstream_rejected_request',
          },
        },
        headers: {},
      },
    },
    {
      name: '404 model missing upstream',
      status: 404,
      body: { error: { message: 'The model `upstream-model` does not exist', type: 'invalid_request_error', param: null, code: 'model_not_found' } },
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
      name: '401 upstream refused the gateway key',
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
      expected: {
        status: 502,
        body: {
          error: {
            message: "The upstream provider refused the gateway's credentials (HTTP 401). This is a gateway configuration problem, not a problem with your API key.",
            type: 'upstream_error',
            param: null,
            code: 'upstream_auth_failed',
          },
        },
        headers: {},
      },
    },
    {
      name: '403',
      status: 403,
      expected: {
        status: 502,
        body: {
          error: {
            message: "The upstream provider refused the gateway's credentials (HTTP 403). This is a gateway configuration problem, not a problem with your API key.",
            type: 'upstream_error',
            param: null,
            code: 'upstream_auth_failed',
          },
        },
        headers: {},
      },
    },
    {
      name: '429 with retry-after',
      status: 429,
      body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
      headers: { 'retry-after': '20', 'retry-after-ms': '19500' },
      expected: {
        status: 429,
        body: { error: { message: 'The upstream provider is rate limiting requests; retry after a pause.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } },
        headers: { 'retry-after': '20', 'retry-after-ms': '19500' },
      },
    },
    {
      name: '429 without retry-after',
      status: 429,
      expected: {
        status: 429,
        body: { error: { message: 'The upstream provider is rate limiting requests; retry after a pause.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } },
        headers: { 'retry-after': '1' },
      },
    },
    {
      name: '500 with an error message',
      status: 500,
      body: { error: { message: 'CUDA error: out of memory', type: 'server_error' } },
      expected: {
        status: 502,
        body: { error: { message: 'The upstream provider failed (HTTP 500): CUDA error: out of memory', type: 'upstream_error', param: null, code: 'upstream_error' } },
        headers: {},
      },
    },
    {
      name: '503 with an HTML body',
      status: 503,
      body: '<html>503 Service Unavailable</html>',
      expected: {
        status: 502,
        body: { error: { message: 'The upstream provider failed (HTTP 503).', type: 'upstream_error', param: null, code: 'upstream_error' } },
        headers: {},
      },
    },
    {
      name: '502 with a very long message is truncated',
      status: 502,
      body: { error: { message: 'y'.repeat(3000) } },
      expected: {
        status: 502,
        body: {
          error: { message: `The upstream provider failed (HTTP 502): ${'y'.repeat(499)}…`, type: 'upstream_error', param: null, code: 'upstream_error' },
        },
        headers: {},
      },
    },
  ];

  for (const c of cases) {
    for (const mode of ['complete', 'stream'] as const) {
      test(`${c.name} (${mode})`, async () => {
        upstream = (_req, res) => json(res, c.status, c.body ?? '', c.headers ?? {});
        const p = provider();
        const error =
          mode === 'complete' ? await failure(p.complete(call())) : await failure(collect(p.stream(call({ stream: true }))));
        assert.deepEqual(rendered(error), c.expected);
        assertNoSecrets(error);
      });
    }
  }

  test('a redirect is not followed', async () => {
    upstream = (req, res) => {
      if (req.url === '/elsewhere') json(res, 200, completionBody());
      else {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      }
    };
    const error = await failure(provider().complete(call()));
    assert.equal((error as ApiError).status, 502);
    assert.equal((error as ApiError).message, 'The upstream provider answered with an unexpected HTTP 302.');
    assert.equal(seen.length, 1);
  });

  // fetch runs with redirect: 'error' (cheaper than 'manual'); its refusal
  // must still read as the upstream's unexpected status, whichever redirect it
  // was. fetch does not hand over a refused redirect's body, so its message is
  // not quoted (it was with 'manual').
  for (const status of [301, 303, 307, 308]) {
    test(`a ${status} redirect is not followed, plain or streamed`, async () => {
      upstream = (_req, res) => {
        res.writeHead(status, { location: `http://127.0.0.1:${port}/v1/chat/completions`, 'content-type': 'application/json' });
        res.end('{"error":{"message":"moved"}}');
      };
      for (const error of [await failure(provider().complete(call())), await failure(collect(provider().stream(call({ stream: true }))))]) {
        assert.deepEqual(rendered(error), {
          status: 502,
          body: { error: { message: `The upstream provider answered with an unexpected HTTP ${status}.`, type: 'upstream_error', param: null, code: 'upstream_error' } },
          headers: {},
        });
      }
      assert.equal(seen.length, 2);
    });
  }

  test('a 3xx that is not a redirect status is read like any unexpected status, with the upstream\'s message', async () => {
    upstream = (_req, res) => json(res, 300, { error: { message: 'moved' } }, { location: '/elsewhere' });
    const error = await failure(provider().complete(call()));
    assert.equal((error as ApiError).status, 502);
    assert.equal((error as ApiError).message, 'The upstream provider answered with an unexpected HTTP 300: moved');
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
    const p = createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${deadPort}/v1`, apiKey: API_KEY });
    for (const attempt of [p.complete(call()), collect(p.stream(call({ stream: true })))]) {
      const error = await failure(attempt);
      assert.deepEqual(rendered(error), {
        status: 502,
        body: { error: { message: 'The upstream provider could not be reached.', type: 'upstream_error', param: null, code: 'upstream_unreachable' } },
        headers: {},
      });
      assertNoSecrets(error);
    }
  });

  test('an upstream that sends no headers within firstByteTimeoutMs is 504, and the socket is closed', async () => {
    upstream = () => {
      // never answers
    };
    const started = performance.now();
    const error = await failure(provider({ firstByteTimeoutMs: 150 }).complete(call()));
    assert.ok(performance.now() - started < 2000);
    assert.deepEqual(rendered(error), {
      status: 504,
      body: { error: { message: 'The upstream provider did not deliver response headers within 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstreamClosed;
  });

  test('first-byte timeout on a stream', async () => {
    upstream = () => {};
    const error = await failure(collect(provider({ firstByteTimeoutMs: 100 }).stream(call({ stream: true }))));
    assert.equal((error as ApiError).status, 504);
    assert.equal((error as ApiError).code, 'upstream_timeout');
    await upstreamClosed;
  });

  test('the first-byte timer stops once headers arrive; the total timeout still applies', async () => {
    upstream = async (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
      // then hangs
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider({ firstByteTimeoutMs: 50, timeoutMs: 300 }).stream(call({ stream: true }))) got.push(chunk);
      })(),
    );
    assert.equal(got.length, 1);
    assert.deepEqual(rendered(error), {
      status: 504,
      body: { error: { message: 'The upstream provider did not deliver the whole response within 300 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstreamClosed;
  });

  test('the total timeout covers a slow non-stream body', async () => {
    upstream = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":');
    };
    const error = await failure(provider({ timeoutMs: 200 }).complete(call()));
    assert.equal((error as ApiError).status, 504);
    await upstreamClosed;
  });

  test('call.signal aborting mid-stream aborts the upstream and throws a client abort', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
    };
    const got: ChatCompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().stream(call({ stream: true }, controller.signal))) {
          got.push(chunk);
          controller.abort(reason);
        }
      })(),
    );
    assert.equal(got.length, 1);
    assert.equal(isClientAbort(error), true);
    assert.equal((error as Error).cause, reason);
    assert.equal(error instanceof ApiError, false);
    await upstreamClosed;
  });

  test('call.signal aborting before the headers aborts the upstream', async () => {
    const controller = new AbortController();
    upstream = () => {
      controller.abort();
    };
    const error = await failure(provider().complete(call({}, controller.signal)));
    assert.equal(isClientAbort(error), true);
    await upstreamClosed;
  });

  test('an already aborted signal never reaches the upstream', async () => {
    const controller = new AbortController();
    controller.abort();
    const p = provider();
    assert.equal(isClientAbort(await failure(p.complete(call({}, controller.signal)))), true);
    assert.equal(isClientAbort(await failure(collect(p.stream(call({ stream: true }, controller.signal))))), true);
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
    const p = provider({ timeoutMs: 60_000, firstByteTimeoutMs: 60_000 });

    upstream = (_req, res) => json(res, 200, completionBody());
    await p.complete(call({}, signal));
    upstream = (_req, res) => json(res, 500, {});
    await failure(p.complete(call({}, signal)));
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(streamText());
    };
    await collect(p.stream(call({ stream: true }, signal)));
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
    };
    for await (const chunk of p.stream(call({ stream: true }, signal))) {
      assert.equal(chunk.id, 'chatcmpl-s1');
      break;
    }
    await upstreamClosed;
    assert.equal(timers(), before);
    assert.equal(listening, 0);
  });
});

describe('idle timeout on streams', () => {
  test('a stream that stalls after its first chunk is 504 upstream_timeout, and the socket is closed', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
      // ...and then nothing, not even a keep-alive.
    };
    const got: ChatCompletionChunk[] = [];
    const started = performance.now();
    const error = await failure(
      (async () => {
        for await (const chunk of provider({ idleTimeoutMs: 150 }).stream(call({ stream: true }))) got.push(chunk);
      })(),
    );
    const elapsed = performance.now() - started;
    assert.equal(got.length, 1);
    assert.ok(elapsed >= 140 && elapsed < 2000, String(elapsed));
    assert.deepEqual(rendered(error), {
      status: 504,
      body: { error: { message: 'The upstream stream stalled: no data for 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    await upstreamClosed;
  });

  test('headers then silence: the idle timer starts with the body', async () => {
    upstream = (_req, res) => startEventStream(res);
    const error = await failure(collect(provider({ idleTimeoutMs: 100, firstByteTimeoutMs: 5000 }).stream(call({ stream: true }))));
    assert.equal((error as ApiError).message, 'The upstream stream stalled: no data for 100 ms.');
    await upstreamClosed;
  });

  test('keep-alive comments keep a slow stream alive', async () => {
    upstream = async (_req, res) => {
      startEventStream(res);
      for (let i = 0; i < 6; i++) {
        res.write(': keep-alive\n\n');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      res.end(streamText());
    };
    const chunks = await collect(provider({ idleTimeoutMs: 150 }).stream(call({ stream: true })));
    assert.deepEqual(chunks, chunkBodies().map((chunk) => normalizeChunk(chunk)));
  });

  test('a slow consumer is not an idle upstream', async () => {
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(streamText());
    };
    const got: ChatCompletionChunk[] = [];
    for await (const chunk of provider({ idleTimeoutMs: 60 }).stream(call({ stream: true }))) {
      got.push(chunk);
      if (got.length <= 2) await new Promise((resolve) => setTimeout(resolve, 150));
    }
    assert.equal(got.length, chunkBodies().length);
  });

  test('idleTimeoutMs is validated', () => {
    for (const idleTimeoutMs of [0, -1, 1.5, 2 ** 31]) {
      assert.throws(() => createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', idleTimeoutMs }), RangeError);
    }
  });
});

describe('connect timeout', () => {
  /** Accepts TCP connections and never says a word: a TLS handshake to it hangs,
   * which is connection setup that never completes, on 127.0.0.1. */
  async function silentTcpServer(): Promise<{ port: number; sockets: Socket[]; close(): Promise<void> }> {
    const sockets: Socket[] = [];
    const tcp = createNetServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    tcp.listen(0, '127.0.0.1');
    await once(tcp, 'listening');
    return {
      port: (tcp.address() as AddressInfo).port,
      sockets,
      async close() {
        for (const socket of sockets) socket.destroy();
        tcp.close();
        await once(tcp, 'close');
      },
    };
  }

  test('a connection that never completes is 504 within connectTimeoutMs, well before the first-byte timeout', async () => {
    const silent = await silentTcpServer();
    try {
      const p = createOpenAICompatibleProvider({
        baseUrl: `https://127.0.0.1:${silent.port}/v1`,
        connectTimeoutMs: 150,
        firstByteTimeoutMs: 5000,
      });
      for (const attempt of [() => p.complete(call()), () => collect(p.stream(call({ stream: true })))]) {
        const started = performance.now();
        const error = await failure(attempt());
        const elapsed = performance.now() - started;
        assert.ok(elapsed >= 140 && elapsed < 1500, String(elapsed));
        assert.deepEqual(rendered(error), {
          status: 504,
          body: {
            error: { message: 'The upstream provider did not accept a connection within 150 ms.', type: 'server_error', param: null, code: 'upstream_timeout' },
          },
          headers: {},
        });
      }
      assert.equal(silent.sockets.length, 2);
    } finally {
      await silent.close();
    }
  });

  test('a slow first byte on a fresh or a pooled connection is not a connect timeout', async () => {
    // The first call connects (its own upstream is new to the pool); the
    // second goes over the first's socket.
    const slow = await ownUpstream((_req, res) => {
      setTimeout(() => json(res, 200, completionBody()), 250);
    });
    try {
      const p = createOpenAICompatibleProvider({ baseUrl: slow.baseUrl, apiKey: API_KEY, connectTimeoutMs: 80, firstByteTimeoutMs: 5000 });
      assert.deepEqual(await p.complete(call()), normalizeCompletion(completionBody()));
      await tick();
      assert.deepEqual(await p.complete(call()), normalizeCompletion(completionBody()));
      assert.equal(slow.ports.length, 2);
      assert.equal(typeof slow.ports[0], 'number');
      assert.equal(slow.ports[1], slow.ports[0], 'the second call reused the first call\'s connection');
    } finally {
      await slow.close();
    }
  });

  test('connectTimeoutMs is validated', () => {
    for (const connectTimeoutMs of [0, -1, 1.5, 2 ** 31]) {
      assert.throws(() => createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', connectTimeoutMs }), RangeError);
    }
  });

  test('no timers left behind with every timeout configured', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const p = provider({ connectTimeoutMs: 60_000, idleTimeoutMs: 60_000, firstByteTimeoutMs: 60_000, timeoutMs: 60_000 });
    upstream = (_req, res) => json(res, 200, completionBody());
    await p.complete(call());
    upstream = (_req, res) => {
      startEventStream(res);
      res.end(streamText());
    };
    await collect(p.stream(call({ stream: true })));
    upstream = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
    };
    for await (const chunk of p.stream(call({ stream: true }))) {
      assert.equal(chunk.id, 'chatcmpl-s1');
      break;
    }
    await upstreamClosed;
    assert.equal(timers(), before);
  });
});

describe('connection reuse', () => {
  // fetch keeps connections alive by default; undici frees a connection for
  // the next request on the tick after the body ended, hence the tick between calls.
  test('sequential calls reuse one upstream socket (complete and stream)', async () => {
    const own = await ownUpstream((req, res) => {
      if (req.headers['accept'] === 'text/event-stream') {
        startEventStream(res);
        res.end(streamText());
      } else json(res, 200, completionBody());
    });
    try {
      const p = createOpenAICompatibleProvider({ baseUrl: own.baseUrl, apiKey: API_KEY });
      await p.complete(call());
      await tick();
      await p.complete(call());
      await tick();
      await collect(p.stream(call({ stream: true })));
      await tick();
      await collect(p.stream(call({ stream: true })));
      await tick();
      await p.complete(call());
      assert.equal(own.ports.length, 5);
      assert.deepEqual(new Set(own.ports).size, 1, String(own.ports));
    } finally {
      await own.close();
    }
  });
});
