// NODE_TLS_REJECT_UNAUTHORIZED=0 in the gateway's environment turns off
// certificate checks for every TLS client that leaves rejectUnauthorized
// unset, Node's built-in fetch included. The node transport sets it itself,
// so its checks hold whatever the environment says (the gateway refuses the
// variable beside a provider on fetch: ../providers/provider-connections.test.ts).
// A file of its own: the variable is process-wide while the test runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createNodeTransport } from '../../src/upstream/node-transport.ts';
import { createTestPki, type TestPki } from '../tls/test-pki.ts';
import { answer, call, failure, provider, rendered, startUpstream, type TestUpstream } from './transport-fixtures.ts';

let pki: TestPki;
let upstream: TestUpstream;

before(async () => {
  pki = createTestPki();
  const server = pki.server('upstream');
  upstream = await startUpstream(answer, { cert: server.cert, key: server.key });
});

after(async () => {
  await upstream.close();
  pki.cleanup();
});

test('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn off the node transport\'s certificate checks', async () => {
  const saved = process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
  process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
  try {
    const error = await failure(provider(createNodeTransport(), upstream.baseUrl).complete(call()));
    assert.equal(rendered(error).code, 'upstream_tls_failed');
  } finally {
    if (saved === undefined) delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    else process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = saved;
  }
});
