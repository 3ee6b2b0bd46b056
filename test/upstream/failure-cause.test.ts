// What went wrong on the wire, from the error chains Node's fetch produces
// (TypeError "fetch failed" with the socket's, resolver's or TLS's error in
// `cause`), and the upstream address without path, query or credentials.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { classifyNetworkError, failureCauseOf, FailureKind, noteFailureCause, upstreamAddress } from '../../src/upstream/failure-cause.ts';

/** The shape fetch rejects with: TypeError('fetch failed', { cause }). */
function fetchFailed(code: string, nested = false): TypeError {
  const socket = Object.assign(new Error(`${code} details with 10.0.0.1:8000`), { code });
  const cause = nested ? Object.assign(new Error('wrapper'), { code: 'UND_ERR_WRAPPED', cause: socket }) : socket;
  return new TypeError('fetch failed', { cause });
}

describe('classifyNetworkError', () => {
  test('a proxy tunnel error: its refusal status, else its ERR_PROXY_ code, before the socket code it wraps', () => {
    const refused = Object.assign(new Error('refused by the proxy'), { code: 'ERR_PROXY_REFUSED', proxyStatus: 407 });
    assert.deepEqual(classifyNetworkError(refused), { kind: FailureKind.Proxy, detail: 'status_407' });
    const unreachable = Object.assign(new Error('proxy unreachable'), { code: 'ERR_PROXY_UNREACHABLE', cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) });
    assert.deepEqual(classifyNetworkError(unreachable), { kind: FailureKind.Proxy, detail: 'ERR_PROXY_UNREACHABLE' });
    assert.deepEqual(classifyNetworkError(new TypeError('wrapped', { cause: Object.assign(new Error('y'), { code: 'ERR_PROXY_CLOSED', proxyStatus: 'x' }) })), {
      kind: FailureKind.Proxy,
      detail: 'ERR_PROXY_CLOSED',
    });
  });

  const cases: Array<[code: string, kind: string, detail: string]> = [
    ['ECONNREFUSED', 'refused', 'ECONNREFUSED'],
    ['ECONNRESET', 'reset', 'ECONNRESET'],
    ['UND_ERR_SOCKET', 'reset', 'UND_ERR_SOCKET'],
    ['EPIPE', 'reset', 'EPIPE'],
    ['ENOTFOUND', 'dns', 'ENOTFOUND'],
    ['EAI_AGAIN', 'dns', 'EAI_AGAIN'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls', 'DEPTH_ZERO_SELF_SIGNED_CERT'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'tls', 'SELF_SIGNED_CERT_IN_CHAIN'],
    ['CERT_HAS_EXPIRED', 'tls', 'CERT_HAS_EXPIRED'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls', 'ERR_TLS_CERT_ALTNAME_INVALID'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'tls', 'ERR_SSL_WRONG_VERSION_NUMBER'],
    ['EPROTO', 'tls', 'EPROTO'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout', 'connect'],
    ['ETIMEDOUT', 'timeout', 'connect'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout', 'first_byte'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout', 'idle'],
    ['EHOSTUNREACH', 'network', 'EHOSTUNREACH'],
  ];
  for (const [code, kind, detail] of cases) {
    test(`${code} is ${kind} (${detail})`, () => {
      assert.deepEqual(classifyNetworkError(fetchFailed(code)), { kind, detail });
      // One more level down, under a wrapper with a code of its own.
      assert.deepEqual(classifyNetworkError(fetchFailed(code, true)), { kind, detail });
    });
  }

  test('no code anywhere in the chain: undefined; lower-case codes are ours, not the socket’s', () => {
    assert.equal(classifyNetworkError(new TypeError('fetch failed')), undefined);
    assert.equal(classifyNetworkError(undefined), undefined);
    assert.equal(classifyNetworkError('ECONNREFUSED'), undefined);
    assert.equal(classifyNetworkError(new UpstreamError('upstream_unreachable')), undefined);
  });

  test('a chain deeper than five levels is not followed to its end', () => {
    let error: unknown = Object.assign(new Error('deep'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 5; i++) error = new Error('wrap', { cause: error });
    assert.equal(classifyNetworkError(error), undefined);
  });
});

describe('upstreamAddress', () => {
  test('host and port only: no path, query or credentials; default ports written out', () => {
    assert.equal(upstreamAddress('http://127.0.0.1:8000/v1/chat/completions'), '127.0.0.1:8000');
    assert.equal(upstreamAddress('https://user:secret@example.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21&key=sk-x'), 'example.openai.azure.com:443');
    assert.equal(upstreamAddress('http://llm.internal/v1'), 'llm.internal:80');
    assert.equal(upstreamAddress('http://[::1]:9000/v1'), '[::1]:9000');
    assert.equal(upstreamAddress('not a url'), null);
  });
});

describe('failureCauseOf', () => {
  test('a noted cause wins; otherwise the error’s cause chain; otherwise Other with the code', () => {
    const noted = new UpstreamError('upstream_timeout');
    noteFailureCause(noted, { kind: FailureKind.Timeout, detail: 'total', address: 'a:1' });
    assert.deepEqual(failureCauseOf(noted), { kind: 'timeout', detail: 'total', address: 'a:1' });
    const unreachable = new UpstreamError('upstream_unreachable', undefined, { cause: fetchFailed('ECONNREFUSED') });
    assert.deepEqual(failureCauseOf(unreachable), { kind: 'refused', detail: 'ECONNREFUSED', address: null });
    assert.deepEqual(failureCauseOf(new UpstreamError('upstream_error')), { kind: 'other', detail: 'upstream_error', address: null });
    assert.deepEqual(failureCauseOf(new Error('bug')), { kind: 'other', detail: 'unknown', address: null });
    assert.deepEqual(failureCauseOf(undefined), { kind: 'other', detail: 'unknown', address: null });
  });
});
