// The Anthropic adapter's reading of Anthropic's error bodies: each status
// becomes an exact client error, for complete() and stream() alike, naming no
// address, port or key; a redirect is refused; an unreachable upstream is 502.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiError } from '../../src/errors/api-error.ts';
import { createAnthropicProvider, type AnthropicOptions } from '../../src/providers/anthropic.ts';
import { collect } from '../support/collect.ts';
import { refusedPort } from '../upstream/refused-port.ts';
import { API_KEY, call, json, providerFor, useAnthropicUpstream } from './anthropic-fixtures.ts';
import { assertNoSecrets, failure, rendered } from './provider-fixtures.ts';
import { drive, type DrivenProvider } from '../support/drive-provider.ts';

const upstream = useAnthropicUpstream();
const provider = (options: Partial<AnthropicOptions> = {}): DrivenProvider => providerFor(upstream, options);

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
        upstream.handle = (_req, res) => json(res, c.status, c.body ?? '', c.headers ?? {});
        const p = provider();
        const error = mode === 'complete' ? await failure(p.complete(call())) : await failure(collect(p.stream(call())));
        assert.deepEqual(rendered(error), c.expected);
        assertNoSecrets(error, [String(upstream.port), API_KEY]);
      });
    }
  }

  test('a redirect is not followed', async () => {
    upstream.handle = (_req, res) => {
      res.writeHead(307, { location: '/elsewhere' });
      res.end();
    };
    const error = await failure(provider().complete(call()));
    assert.equal((error as ApiError).message, 'The upstream provider answered with an unexpected HTTP 307.');
    assert.equal(upstream.received.length, 1);
  });
});


test('connection refused is 502 upstream_unreachable', async () => {
  const port = await refusedPort();
  const p = drive(createAnthropicProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY }));
  for (const attempt of [p.complete(call()), collect(p.stream(call()))]) {
    const error = await failure(attempt);
    assert.deepEqual(rendered(error), {
      status: 502,
      body: { error: { message: 'The upstream provider could not be reached.', type: 'upstream_error', param: null, code: 'upstream_unreachable' } },
      headers: {},
    });
    assertNoSecrets(error, [`:${port}`, API_KEY]);
  }
});
