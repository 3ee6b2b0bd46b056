// The OpenAI-compatible adapter against a fake upstream: its options, the
// request the upstream receives, complete() and stream(). Upstream errors are
// in ./openai-compatible-errors.test.ts, timeouts, aborts and connections in
// ./openai-compatible-timeouts.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeChunk, normalizeCompletion } from '../../src/chat/completion-response.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import type { ApiError } from '../../src/errors/api-error.ts';
import { chatCompletionsUrl, createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { collect } from '../support/collect.ts';
import { seededRandom } from '../upstream/seeded-random.ts';
import { API_KEY, baseRequest, call, chunkBodies, completionBody, json, providerFor, startEventStream, streamText } from './openai-compatible-fixtures.ts';
import { failure, rendered, tick, useFakeUpstream } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

const upstream = useFakeUpstream();
const provider = (options: Partial<OpenAICompatibleOptions> = {}): DrivenProvider => providerFor(upstream, options);

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
      assert.throws(() => drive(createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', ...options })), `${JSON.stringify(options)}`);
    }
    assert.throws(
      () => drive(createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', apiKey: 'sk-secret\nvalue' })),
      (error: Error) => error instanceof TypeError && !error.message.includes('sk-secret'),
    );
    assert.throws(
      () => drive(createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', headers: { 'x-secret': 'hidden\r\nvalue' } })),
      (error: Error) => error instanceof TypeError && !error.message.includes('hidden'),
    );
  });
});

describe('the request the upstream receives', () => {
  test('non-stream: path, headers, body', async () => {
    upstream.handle = (_req, res) => json(res, 200, completionBody());
    const p = provider({ baseUrl: `http://127.0.0.1:${upstream.port}/v1/`, headers: { 'X-Org': 'acme', 'Content-Type': 'text/plain', 'X-Request-Id': 'spoof' } });
    await p.complete(call());
    assert.equal(upstream.received.length, 1);
    const [request] = upstream.received;
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/v1/chat/completions');
    assert.equal(request?.headers['content-type'], 'application/json');
    assert.equal(request?.headers['accept'], 'application/json');
    assert.equal(request?.headers['authorization'], `Bearer ${API_KEY}`);
    assert.equal(request?.headers['x-request-id'], 'req_abc-123');
    assert.equal(request?.headers['x-org'], 'acme');
    assert.equal(request?.text, JSON.stringify(baseRequest));
  });

  test('stream: accept event-stream, stream_options include_usage always sent', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n\n');
    };
    await collect(provider().stream(call({ stream: true })));
    assert.equal(upstream.received.length, 1);
    assert.equal(upstream.received[0]?.headers['accept'], 'text/event-stream');
    assert.equal(upstream.received[0]?.text, JSON.stringify({ ...baseRequest, stream: true, stream_options: { include_usage: true } }));
  });

  test('stream: a client stream_options is overridden to include usage', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n\n');
    };
    await collect(provider().stream(call({ stream: true, stream_options: { include_usage: false } })));
    assert.deepEqual(JSON.parse(upstream.received[0]?.text ?? ''), { ...baseRequest, stream: true, stream_options: { include_usage: true } });
  });

  test('no apiKey: no authorization header, unless configured as an extra header', async () => {
    upstream.handle = (_req, res) => json(res, 200, completionBody());
    await drive(createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${upstream.port}/v1` })).complete(call());
    assert.equal(upstream.received[0]?.headers['authorization'], undefined);
    await drive(createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${upstream.port}/v1`, headers: { 'api-key': 'azure-style' } })).complete(call());
    assert.equal(upstream.received[1]?.headers['authorization'], undefined);
    assert.equal(upstream.received[1]?.headers['api-key'], 'azure-style');
  });
  test('apiKeyHeader: the key alone in that header, never also as Bearer; the query kept', async () => {
    upstream.handle = (_req, res) => json(res, 200, completionBody());
    const base = `http://127.0.0.1:${upstream.port}/openai/deployments/gpt-4o?api-version=2024-10-21`;
    await drive(createOpenAICompatibleProvider({ baseUrl: base, apiKey: API_KEY, apiKeyHeader: 'api-key' })).complete(call());
    assert.equal(upstream.received[0]?.url, '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
    assert.equal(upstream.received[0]?.headers['api-key'], API_KEY);
    assert.equal(upstream.received[0]?.headers['authorization'], undefined);
    await drive(createOpenAICompatibleProvider({ baseUrl: base, apiKey: API_KEY, apiKeyHeader: 'Authorization' })).complete(call());
    assert.equal(upstream.received[1]?.headers['authorization'], `Bearer ${API_KEY}`);
    assert.equal(upstream.received[1]?.headers['api-key'], undefined);
  });

  test('an invalid apiKeyHeader fails at creation without echoing the key', () => {
    assert.throws(
      () => drive(createOpenAICompatibleProvider({ baseUrl: 'http://h/v1', apiKey: 'sk-secret', apiKeyHeader: 'api key' })),
      (error: Error) => error instanceof TypeError && /apiKeyHeader/.test(error.message) && !error.message.includes('sk-secret'),
    );
  });
});

describe('complete()', () => {
  test('returns the normalised completion, model as the upstream gave it', async () => {
    upstream.handle = (_req, res) => json(res, 200, completionBody());
    const completion = await provider().complete(call());
    assert.deepEqual(completion, normalizeCompletion(completionBody()));
    assert.equal(completion.model, 'upstream-model-2024');
    assert.equal(completion.choices[0]?.message.content, 'Hi there');
    assert.equal(completion.usage?.total_tokens, 7);
  });

  test('a chunked body without content-length', async () => {
    upstream.handle = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify(completionBody());
      res.write(text.slice(0, 10));
      await tick();
      res.end(text.slice(10));
    };
    assert.deepEqual(await provider().complete(call()), normalizeCompletion(completionBody()));
  });

  test('non-JSON body is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => json(res, 200, '<html>oops</html>');
    assert.deepEqual(rendered(await failure(provider().complete(call()))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a response that is not valid JSON.', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
  });

  test('JSON of the wrong shape is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => json(res, 200, { choices: 5 });
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
    upstream.handle = (_req, res) => json(res, 200, big);
    assert.deepEqual(rendered(await failure(provider({ maxResponseBytes: 1000 }).complete(call()))), expected);

    upstream.handle = async (_req, res) => {
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
    upstream.handle = async (_req, res) => {
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
      upstream.handle = async (_req, res) => {
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
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(`data: ${JSON.stringify(azureFirst)}\n\n${streamText()}`);
    };
    assert.deepEqual(await collect(provider().stream(call({ stream: true }))), chunkBodies().map((chunk) => normalizeChunk(chunk)));
    assert.ok(chunkBodies().some((chunk) => Array.isArray(chunk['choices']) && chunk['choices'].length === 0 && chunk['usage'] !== undefined));
  });

  test('byte by byte', async () => {
    const bytes = Buffer.from(streamText(), 'utf8');
    upstream.handle = async (_req, res) => {
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
    upstream.handle = (_req, res) => {
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
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end('data: [DONE]\n');
    };
    assert.equal((rendered(await failure(collect(provider().stream(call({ stream: true }))))).body as { error: { code: string } }).error.code, 'upstream_stream_truncated');
  });

  test('a connection reset mid-stream is 502 upstream_stream_truncated', async () => {
    upstream.handle = async (_req, res) => {
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
    upstream.handle = (_req, res) => {
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
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end('event: error\ndata: {"message":"quota gone"}\n\ndata: [DONE]\n\n');
    };
    assert.equal((await failure(collect(provider().stream(call({ stream: true }))))  as ApiError).message, 'quota gone');
  });

  test('malformed JSON in a data line is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end('data: {"id": nope}\n\ndata: [DONE]\n\n');
    };
    const error = await failure(collect(provider().stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'bad_upstream_response');
    assert.equal((error as ApiError).message, 'The upstream provider returned a response that is not valid JSON.');
  });

  test('an event over maxEventBytes is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end(`data: "${'x'.repeat(3000)}"\n\ndata: [DONE]\n\n`);
    };
    const error = await failure(collect(provider({ maxEventBytes: 1024 }).stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'bad_upstream_response');
    assert.equal((error as ApiError).message, 'The upstream provider sent a stream event larger than the gateway accepts.');
  });

  test('a 200 that is not an event stream is 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => json(res, 200, completionBody());
    const error = await failure(collect(provider().stream(call({ stream: true }))));
    assert.equal((error as ApiError).code, 'bad_upstream_response');
    assert.equal((error as ApiError).message, 'The upstream provider did not answer with an event stream.');
  });

  test('leaving the loop early aborts the upstream request', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.write(`data: ${JSON.stringify(chunkBodies()[0])}\n\n`);
      // ...and never finishes on its own.
    };
    for await (const chunk of provider().stream(call({ stream: true }))) {
      assert.equal(chunk.id, 'chatcmpl-s1');
      break;
    }
    await upstream.closed();
  });
});

