// The requests to the OpenID provider (src/oidc/provider-fetch.ts): a provider
// that cannot be reached is told with the reason the operator has to act on,
// not only built-in fetch's "fetch failed".
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { fetchFromProvider, ProviderFetchError, reachProblem } from '../../src/oidc/provider-fetch.ts';

/** A loopback port nothing listens on (listened on once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

test('a provider nobody listens for: the message names the URL and the refused connection', async () => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}/.well-known/openid-configuration`;
  const error = await fetchFromProvider(url, { timeoutMs: 5000, maxBytes: 1024 }).then(
    () => assert.fail('answered'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ProviderFetchError);
  assert.equal(error.message, `${url} could not be reached: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`);
});

test('reachProblem: the cause, its code when the message lacks it, and the bare message without a cause', () => {
  const coded = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  assert.equal(reachProblem(new TypeError('fetch failed', { cause: coded })), 'fetch failed: self-signed certificate in certificate chain (SELF_SIGNED_CERT_IN_CHAIN)');
  // Several addresses tried (localhost: ::1 and 127.0.0.1): an AggregateError with no message, only a code.
  const aggregate = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
  assert.equal(reachProblem(new TypeError('fetch failed', { cause: aggregate })), 'fetch failed: ECONNREFUSED');
  assert.equal(reachProblem(new TypeError('fetch failed')), 'fetch failed');
  assert.equal(reachProblem('not an error'), 'not an error');
});
