// The OpenAI-compatible adapter's reading of upstream HTTP errors: each status
// and body becomes an exact client error, for complete() and stream() alike,
// naming no address, port or key; redirects are refused, never followed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiError } from '../../src/errors/api-error.ts';
import type { OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { collect } from '../support/collect.ts';
import type { DrivenProvider } from '../support/drive-provider.ts';
import { API_KEY, call, completionBody, json, providerFor } from './openai-compatible-fixtures.ts';
import { assertNoSecrets, failure, rendered, useFakeUpstream } from './provider-fixtures.ts';

const upstream = useFakeUpstream();
const provider = (options: Partial<OpenAICompatibleOptions> = {}): DrivenProvider => providerFor(upstream, options);

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
        upstream.handle = (_req, res) => json(res, c.status, c.body ?? '', c.headers ?? {});
        const p = provider();
        const error =
          mode === 'complete' ? await failure(p.complete(call())) : await failure(collect(p.stream(call({ stream: true }))));
        assert.deepEqual(rendered(error), c.expected);
        assertNoSecrets(error, [String(upstream.port), API_KEY]);
      });
    }
  }

  test('a redirect is not followed', async () => {
    upstream.handle = (req, res) => {
      if (req.url === '/elsewhere') json(res, 200, completionBody());
      else {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      }
    };
    const error = await failure(provider().complete(call()));
    assert.equal((error as ApiError).status, 502);
    assert.equal((error as ApiError).message, 'The upstream provider answered with an unexpected HTTP 302.');
    assert.equal(upstream.received.length, 1);
  });

  // fetch runs with redirect: 'error' (cheaper than 'manual'); its refusal
  // must still read as the upstream's unexpected status, whichever redirect it
  // was. fetch does not hand over a refused redirect's body, so its message is
  // not quoted (it was with 'manual').
  for (const status of [301, 303, 307, 308]) {
    test(`a ${status} redirect is not followed, plain or streamed`, async () => {
      upstream.handle = (_req, res) => {
        res.writeHead(status, { location: `http://127.0.0.1:${upstream.port}/v1/chat/completions`, 'content-type': 'application/json' });
        res.end('{"error":{"message":"moved"}}');
      };
      for (const error of [await failure(provider().complete(call())), await failure(collect(provider().stream(call({ stream: true }))))]) {
        assert.deepEqual(rendered(error), {
          status: 502,
          body: { error: { message: `The upstream provider answered with an unexpected HTTP ${status}.`, type: 'upstream_error', param: null, code: 'upstream_error' } },
          headers: {},
        });
      }
      assert.equal(upstream.received.length, 2);
    });
  }

  test('a 3xx that is not a redirect status is read like any unexpected status, with the upstream\'s message', async () => {
    upstream.handle = (_req, res) => json(res, 300, { error: { message: 'moved' } }, { location: '/elsewhere' });
    const error = await failure(provider().complete(call()));
    assert.equal((error as ApiError).status, 502);
    assert.equal((error as ApiError).message, 'The upstream provider answered with an unexpected HTTP 300: moved');
  });
});

