import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import {
  ClientAbortError,
  isClientAbort,
  isNetworkTimeout,
  MAX_UPSTREAM_MESSAGE_CHARS,
  readUpstreamErrorDetail,
  truncateMessage,
  upstreamConnectTimeoutError,
  upstreamHttpError,
  UpstreamRateLimitError,
  upstreamStreamError,
  upstreamStreamStalledError,
  UpstreamSchemaMismatchError,
} from '../../src/upstream/upstream-errors.ts';

function rendered(error: ApiError): { status: number; body: unknown; headers: Record<string, string> } {
  return { status: error.status, body: error.toBody(), headers: error.headers };
}

describe('readUpstreamErrorDetail', () => {
  const cases: Array<[string, unknown, ReturnType<typeof readUpstreamErrorDetail>]> = [
    [
      'OpenAI shape',
      { error: { message: 'bad temp', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
      { message: 'bad temp', param: 'temperature', code: 'invalid_value' },
    ],
    ['OpenAI shape, nulls', { error: { message: 'm', param: null, code: null } }, { message: 'm', param: null, code: null }],
    ['llama.cpp numeric code', { error: { code: 400, message: 'ctx', type: 'invalid_request_error' } }, { message: 'ctx', param: null, code: null }],
    ['Ollama string error', { error: 'model not loaded' }, { message: 'model not loaded', param: null, code: null }],
    [
      'vLLM top-level',
      { object: 'error', message: 'too long', type: 'BadRequestError', param: null, code: 400 },
      { message: 'too long', param: null, code: null },
    ],
    ['FastAPI detail', { detail: 'Not Found' }, { message: 'Not Found', param: null, code: null }],
    ['error object without message', { error: { code: 'x' } }, undefined],
    ['blank message', { error: { message: '   ' } }, undefined],
    ['empty param and code dropped', { error: { message: 'm', param: '', code: '' } }, { message: 'm', param: null, code: null }],
    ['array', [{ error: 'x' }], undefined],
    ['string', 'error', undefined],
    ['null', null, undefined],
    ['number message', { message: 5 }, undefined],
  ];
  for (const [name, body, expected] of cases) {
    test(name, () => {
      assert.deepEqual(readUpstreamErrorDetail(body), expected);
    });
  }
});

describe('truncateMessage', () => {
  test('short messages are unchanged', () => {
    const text = 'a'.repeat(MAX_UPSTREAM_MESSAGE_CHARS);
    assert.equal(truncateMessage(text), text);
  });
  test('long messages end with an ellipsis at 500 characters', () => {
    const out = truncateMessage('b'.repeat(2000));
    assert.equal(out.length, 500);
    assert.equal(out, 'b'.repeat(499) + '…');
  });
  test('a surrogate pair is not cut in half', () => {
    assert.equal(truncateMessage('a'.repeat(498) + '😀'.repeat(10)), 'a'.repeat(498) + '…');
    assert.equal(truncateMessage('a'.repeat(497) + '😀'.repeat(10)), 'a'.repeat(497) + '😀…');
  });
});

describe('upstreamHttpError', () => {
  const openAiDetail = { message: "'temperature' must be at most 2", param: 'temperature', code: 'invalid_value' };

  test('400 with a detail passes the upstream words on as 400', () => {
    assert.deepEqual(rendered(upstreamHttpError(400, openAiDetail, null, null)), {
      status: 400,
      body: { error: { message: "'temperature' must be at most 2", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
      headers: {},
    });
  });

  test('422 and 413 are the client request too', () => {
    for (const status of [413, 422]) {
      const error = upstreamHttpError(status, { message: 'too long', param: null, code: null }, null, null);
      assert.deepEqual(rendered(error).body, { error: { message: 'too long', type: 'invalid_request_error', param: null, code: null } });
      assert.equal(error.status, 400);
    }
  });

  test('400 without a detail', () => {
    assert.deepEqual(upstreamHttpError(400, undefined, null, null).toBody(), {
      error: {
        message: 'The upstream provider rejected the request (HTTP 400) without saying why.',
        type: 'invalid_request_error',
        param: null,
        code: 'upstream_rejected_request',
      },
    });
  });

  test('401 and 403 blame the gateway credentials, never the client key', () => {
    for (const status of [401, 403]) {
      const error = upstreamHttpError(status, { message: 'Incorrect API key provided: sk-abc***', param: null, code: 'invalid_api_key' }, null, null);
      assert.deepEqual(rendered(error), {
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
    }
  });

  test('404 is the gateway misconfiguration, and does not repeat the upstream words', () => {
    const error = upstreamHttpError(404, { message: 'The model `internal-model-7b` does not exist', param: null, code: 'model_not_found' }, null, null);
    assert.deepEqual(rendered(error), {
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
    });
  });

  test('408 is a timeout', () => {
    assert.deepEqual(rendered(upstreamHttpError(408, undefined, null, null)), {
      status: 504,
      body: { error: { message: 'The upstream provider timed out (HTTP 408).', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
  });

  test('429 keeps retry-after, defaults it to 1, passes retry-after-ms', () => {
    const body = {
      error: {
        message: 'The upstream provider is rate limiting requests; retry after a pause.',
        type: 'rate_limit_error',
        param: null,
        code: 'rate_limit_exceeded',
      },
    };
    assert.deepEqual(rendered(upstreamHttpError(429, openAiDetail, '12', null)), { status: 429, body, headers: { 'retry-after': '12' } });
    assert.deepEqual(rendered(upstreamHttpError(429, undefined, null, null)), { status: 429, body, headers: { 'retry-after': '1' } });
    assert.deepEqual(rendered(upstreamHttpError(429, undefined, 'later', '250')), {
      status: 429,
      body,
      headers: { 'retry-after': '1', 'retry-after-ms': '250' },
    });
    assert.deepEqual(rendered(upstreamHttpError(429, undefined, '2', 'x')).headers, { 'retry-after': '2' });
  });

  test('5xx is 502 upstream_error with the upstream message when there is one', () => {
    assert.deepEqual(upstreamHttpError(500, { message: 'CUDA out of memory', param: null, code: null }, null, null).toBody(), {
      error: { message: 'The upstream provider failed (HTTP 500): CUDA out of memory', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
    const unavailable = upstreamHttpError(503, undefined, '5', null);
    assert.equal(unavailable.status, 502);
    assert.equal(unavailable.message, 'The upstream provider failed (HTTP 503).');
    assert.deepEqual(unavailable.headers, {});
  });

  test('any other status is 502 upstream_error', () => {
    for (const status of [302, 402, 405, 409, 418]) {
      const error = upstreamHttpError(status, undefined, null, null);
      assert.equal(error.status, 502);
      assert.equal(error.code, 'upstream_error');
      assert.equal(error.message, `The upstream provider answered with an unexpected HTTP ${status}.`);
    }
  });
});

describe('upstreamStreamError', () => {
  test('message from an OpenAI error object', () => {
    assert.deepEqual(upstreamStreamError({ message: 'overloaded', type: 'server_error' }).toBody(), {
      error: { message: 'overloaded', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
  });
  test('message from a string error', () => {
    assert.equal(upstreamStreamError('boom').message, 'boom');
  });
  test('no usable message', () => {
    assert.equal(upstreamStreamError({ code: 1 }).message, 'The upstream provider reported an error during the stream.');
  });
  test('long messages are truncated', () => {
    assert.equal(upstreamStreamError({ message: 'x'.repeat(5000) }).message.length, 500);
  });
});

describe('isClientAbort', () => {
  test('recognises ClientAbortError only', () => {
    const reason = new Error('client left');
    const error = new ClientAbortError(reason);
    assert.equal(isClientAbort(error), true);
    assert.equal(error.name, 'AbortError');
    assert.equal(error.code, 'client_aborted');
    assert.equal(error.cause, reason);
    assert.equal(isClientAbort(new DOMException('aborted', 'AbortError')), false);
    assert.equal(isClientAbort(new Error('x')), false);
  });
});

describe('isNetworkTimeout', () => {
  function coded(code: string, message = 'x'): Error {
    return Object.assign(new Error(message), { code });
  }
  test('fetch failed caused by an undici headers timeout', () => {
    assert.equal(isNetworkTimeout(new TypeError('fetch failed', { cause: coded('UND_ERR_HEADERS_TIMEOUT') })), true);
  });
  test('body timeout and connect timeout, nested twice', () => {
    assert.equal(isNetworkTimeout(new TypeError('terminated', { cause: new Error('x', { cause: coded('UND_ERR_BODY_TIMEOUT') }) })), true);
    assert.equal(isNetworkTimeout(coded('UND_ERR_CONNECT_TIMEOUT')), true);
    assert.equal(isNetworkTimeout(coded('ETIMEDOUT')), true);
  });
  test('other failures are not timeouts', () => {
    assert.equal(isNetworkTimeout(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') })), false);
    assert.equal(isNetworkTimeout(new Error('x')), false);
    assert.equal(isNetworkTimeout('ETIMEDOUT'), false);
    assert.equal(isNetworkTimeout(null), false);
  });
  test('a cause chain that loops ends', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    assert.equal(isNetworkTimeout(a), false);
  });
});

describe('UpstreamRateLimitError.upstreamHint', () => {
  test('keeps what the upstream sent, before the client-facing stand-in', () => {
    const silent = upstreamHttpError(429, undefined, null, null);
    assert.ok(silent instanceof UpstreamRateLimitError);
    assert.deepEqual(silent.headers, { 'retry-after': '1' });
    assert.deepEqual(silent.upstreamHint, { retryAfter: null, retryAfterMs: null });

    const said = upstreamHttpError(429, undefined, 'Tue, 11 Jun 2024 12:00:30 GMT', '1500');
    assert.ok(said instanceof UpstreamRateLimitError);
    assert.deepEqual(said.upstreamHint, { retryAfter: 'Tue, 11 Jun 2024 12:00:30 GMT', retryAfterMs: '1500' });
  });

  test('an oversized header is dropped from the hint', () => {
    const error = upstreamHttpError(429, undefined, '9'.repeat(65), null) as UpstreamRateLimitError;
    assert.deepEqual(error.upstreamHint, { retryAfter: null, retryAfterMs: null });
  });

  test('constructed directly, the hint is the headers given', () => {
    assert.deepEqual(new UpstreamRateLimitError('7', null).upstreamHint, { retryAfter: '7', retryAfterMs: null });
  });
});

describe('connect and idle timeout errors', () => {
  test('504 upstream_timeout with the limit in the message', () => {
    assert.deepEqual(rendered(upstreamConnectTimeoutError(2000)), {
      status: 504,
      body: { error: { message: 'The upstream provider did not accept a connection within 2000 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
    assert.deepEqual(rendered(upstreamStreamStalledError(60000)), {
      status: 504,
      body: { error: { message: 'The upstream stream stalled: no data for 60000 ms.', type: 'server_error', param: null, code: 'upstream_timeout' } },
      headers: {},
    });
  });
});

describe('UpstreamSchemaMismatchError', () => {
  test('502 upstream_schema_mismatch naming the path and what is wrong there', () => {
    const error = new UpstreamSchemaMismatchError({ path: '$.items[2].qty', message: '$.items[2].qty: expected integer, got string "two"' });
    assert.equal(error.path, '$.items[2].qty');
    assert.deepEqual(rendered(error), {
      status: 502,
      body: { error: { message: 'The upstream\'s answer does not match the response_format json_schema: $.items[2].qty: expected integer, got string "two"', type: 'upstream_error', param: null, code: 'upstream_schema_mismatch' } },
      headers: {},
    });
  });

  test('a long message (deep paths, long keys) is bounded like an upstream\'s own', () => {
    const path = `$${'.property_with_a_long_name'.repeat(40)}`;
    const error = new UpstreamSchemaMismatchError({ path, message: `${path}: expected integer, got null` });
    assert.equal(error.message.length, MAX_UPSTREAM_MESSAGE_CHARS);
    assert.ok(error.message.startsWith("The upstream's answer does not match the response_format json_schema: $.property_with_a_long_name."));
    assert.ok(error.message.endsWith('…'));
    assert.equal(error.path, path);
  });
});
