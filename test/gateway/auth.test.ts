// authenticateRequest with a host's Authenticator (hostAuthenticator): what the
// host is given per door (the key as that door reads it, or null without one; the
// client certificate only when TLS verified it), and how its answers end: a policy
// (checked), null (401), a throw or rejection (generic 500, logged).
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import type { AuthenticationRequest, Authenticator } from '../../src/api/keys.ts';
import { ApiError, AuthenticationError } from '../../src/errors/api-error.ts';
import { authenticateRequest, hostAuthenticator } from '../../src/gateway/auth.ts';
import { createLogger } from '../../src/log/logger.ts';

type Socket = Record<string, unknown>;

function requestWith(headers: IncomingHttpHeaders, socket: Socket = {}): IncomingMessage {
  return { headers, socket } as unknown as IncomingMessage;
}

function capture(answer: ReturnType<Authenticator> | ((request: AuthenticationRequest) => ReturnType<Authenticator>)) {
  const seen: AuthenticationRequest[] = [];
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const keys = hostAuthenticator((request) => {
    seen.push(request);
    return typeof answer === 'function' ? answer(request) : answer;
  }, logger);
  return { keys, seen, lines };
}

const POLICY = { id: 'team-a' };

describe('what a host authenticator is given', () => {
  test('OpenAI doors: the Bearer key; the door, the headers and the client address as given', () => {
    const { keys, seen } = capture(POLICY);
    const headers = { authorization: 'Bearer  sk-host-1 ', 'x-team': 'a' };
    const key = authenticateRequest(requestWith(headers), keys, '198.51.100.4', 'bearer', 'embeddings');
    assert.deepEqual(key, { id: 'team-a', expiresAt: null, allowedAliases: null, limits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: null }, guard: null });
    assert.deepEqual(seen, [{ apiKey: 'sk-host-1', headers, clientAddress: '198.51.100.4', clientCertificate: null, door: 'embeddings' }]);
  });

  test("Anthropic doors: x-api-key, else the Bearer token", () => {
    const { keys, seen } = capture(POLICY);
    authenticateRequest(requestWith({ 'x-api-key': 'sk-ant-host' }), keys, '::1', 'anthropic', 'messages');
    authenticateRequest(requestWith({ authorization: 'Bearer sk-bearer-host' }), keys, '::1', 'anthropic', 'count_tokens');
    assert.deepEqual(seen.map((r) => [r.apiKey, r.door]), [['sk-ant-host', 'messages'], ['sk-bearer-host', 'count_tokens']]);
  });

  test('no key header: apiKey null, and the host decides (a certificate-only host may admit it)', () => {
    const { keys, seen } = capture(POLICY);
    assert.equal((authenticateRequest(requestWith({}), keys, '::1', 'bearer', 'models') as { id: string }).id, 'team-a');
    assert.equal((authenticateRequest(requestWith({}), keys, '::1', 'anthropic', 'messages') as { id: string }).id, 'team-a');
    assert.deepEqual(seen.map((r) => r.apiKey), [null, null]);
  });

  test('a malformed Authorization header is still the client\'s 401, and the host is not asked', () => {
    const { keys, seen } = capture(POLICY);
    assert.throws(() => authenticateRequest(requestWith({ authorization: 'Basic abc' }), keys, '::1', 'bearer', 'chat'), AuthenticationError);
    assert.equal(seen.length, 0);
  });

  test('the client certificate the server let through, with whether TLS verified it; null without one', () => {
    const { keys, seen } = capture(POLICY);
    const certificate = { subject: 'CN=batch-runner\nO=Example', fingerprint256: 'AA:BB' };
    const tls = (authorized: boolean): Socket => ({ encrypted: true, authorized, getPeerX509Certificate: () => certificate });
    authenticateRequest(requestWith({}, tls(true)), keys, '::1', 'bearer', 'chat');
    authenticateRequest(requestWith({}, tls(false)), keys, '::1', 'bearer', 'chat');
    authenticateRequest(requestWith({}, { encrypted: true, authorized: true, getPeerX509Certificate: () => undefined }), keys, '::1', 'bearer', 'chat');
    authenticateRequest(requestWith({}, { encrypted: false, authorized: false, getPeerX509Certificate: () => certificate }), keys, '::1', 'bearer', 'chat');
    assert.deepEqual(seen.map((r) => r.clientCertificate), [
      { subject: 'CN=batch-runner\nO=Example', fingerprint256: 'AA:BB', verified: true },
      { subject: 'CN=batch-runner\nO=Example', fingerprint256: 'AA:BB', verified: false },
      null,
      null,
    ]);
  });
});

describe("how a host authenticator's answer ends", () => {
  test('a promise of a policy: the checked policy, asynchronously', async () => {
    const { keys } = capture(Promise.resolve({ id: 'team-b', allowedAliases: ['service-chat'] }));
    const found = authenticateRequest(requestWith({ authorization: 'Bearer k' }), keys, '::1', 'bearer', 'chat');
    assert.ok(found instanceof Promise);
    assert.deepEqual((await found).allowedAliases, ['service-chat']);
  });

  test('null, or a promise of null: 401 with the usual message', async () => {
    const unknown = { name: 'AuthenticationError', message: 'Incorrect API key provided, or the key has been revoked.' };
    assert.throws(() => authenticateRequest(requestWith({ authorization: 'Bearer k' }), capture(null).keys, '::1', 'bearer', 'chat'), unknown);
    await assert.rejects(Promise.resolve(authenticateRequest(requestWith({ authorization: 'Bearer k' }), capture(Promise.resolve(null)).keys, '::1', 'bearer', 'chat')), unknown);
  });

  test("a throw and a rejection: the generic 500, logged with the error's name only (its message may quote the key)", async () => {
    const thrown = capture((request) => {
      throw new RangeError(`SELECT * FROM keys WHERE secret = '${String(request.apiKey)}' failed: pool exhausted`);
    });
    assert.throws(() => authenticateRequest(requestWith({ authorization: 'Bearer sk-client-secret-1' }), thrown.keys, '::1', 'bearer', 'chat'), (error: unknown) => error instanceof ApiError && error.code === 'internal_error' && error.status === 500);
    const rejected = capture((request) => Promise.reject(new Error(`timeout for key ${String(request.apiKey)}`)));
    await assert.rejects(Promise.resolve(authenticateRequest(requestWith({ authorization: 'Bearer sk-client-secret-2' }), rejected.keys, '::1', 'bearer', 'chat')), { code: 'internal_error' });
    const lines = [...thrown.lines, ...rejected.lines];
    assert.deepEqual(
      lines.map((line) => [line['level'], line['msg'], line['error']]),
      [
        ['error', 'the authenticator threw; the request failed with a 500', 'RangeError'],
        ['error', 'the authenticator threw; the request failed with a 500', 'Error'],
      ],
    );
    assert.equal(JSON.stringify(lines).includes('sk-client-secret'), false);
  });

  test('a bad policy: the generic 500 and the field named, on every ask; a policy object changed in place is read afresh', () => {
    const bad = { id: 'team-c', expiresAt: 'tomorrow' };
    const { keys, lines } = capture(bad);
    for (let i = 0; i < 2; i++) {
      assert.throws(() => authenticateRequest(requestWith({ authorization: 'Bearer k' }), keys, '::1', 'bearer', 'chat'), { code: 'internal_error' });
    }
    assert.deepEqual(lines.map((line) => [line['field'], line['problem']]), [
      ['expiresAt', 'must be null or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z'],
      ['expiresAt', 'must be null or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z'],
    ]);
    // A host narrowing a policy by changing the object it keeps returning: the next request sees it.
    const mutable: { id: string; allowedAliases: string[] | null } = { id: 'team-d', allowedAliases: null };
    const host = capture(mutable);
    const ask = () => authenticateRequest(requestWith({ authorization: 'Bearer k' }), host.keys, '::1', 'bearer', 'chat') as { allowedAliases: readonly string[] | null };
    assert.equal(ask().allowedAliases, null);
    mutable.allowedAliases = ['service-chat'];
    assert.deepEqual(ask().allowedAliases, ['service-chat']);
  });
});
