// The one upstream failure that needs a process: a self-signed TLS upstream,
// its certificate made with openssl. Through the real gateway, as the others
// in ./upstream-failures.test.ts: one "upstream failed" warn line naming the
// target, the address, the cause (tls) and the TLS error code; the access line
// names the target; no secret, path or query string is logged.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { tempDir } from '../support/temp-dir.ts';
import { postChat, request, startGateway, type TestGateway } from './harness.ts';

const SECRET = 'sk-upstream-secret';
const hi = (model: string) => ({ model, messages: [{ role: 'user', content: 'Hi' }] });

/** A self-signed certificate for 127.0.0.1, made with openssl. */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = tempDir('upstream-failures-tls');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) };
}

let gw: TestGateway;
let tlsPort: number;
let tlsServer: https.Server;

before(async () => {
  tlsServer = https.createServer(selfSigned(), (_req, res) => res.end('{}'));
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsServer.address() as AddressInfo).port;
  gw = await startGateway({
    configValue: {
      providers: {
        tls: { type: 'openai', baseUrl: `https://127.0.0.1:${tlsPort}/v1`, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } },
      },
      aliases: { 'service-tls': { provider: 'tls', model: 'm' } },
      auto: { default: 'service-tls' },
    },
  });
});

after(async () => {
  await gw.close();
  tlsServer.closeAllConnections();
  tlsServer.close();
});

async function accessLine(requestId: string): Promise<Record<string, unknown>> {
  const find = () => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

test('a self-signed certificate: upstream_tls_failed, tls, with the TLS error code', async () => {
  const res = await postChat(gw, hi('service-tls'), { 'x-request-id': 'uf-tls' });
  const line = await accessLine('uf-tls');
  assert.equal(res.status, 502);
  assert.deepEqual(res.json(), {
    error: {
      message: 'The TLS connection to the upstream provider failed. This is a gateway configuration problem.',
      type: 'upstream_error',
      param: null,
      code: 'upstream_tls_failed',
    },
  });
  const warns = gw.logs.filter((l) => l['msg'] === 'upstream failed').map(({ time: _time, ...rest }) => rest);
  assert.deepEqual(warns, [
    {
      level: 'warn',
      msg: 'upstream failed',
      requestId: 'uf-tls',
      target: 'tls/m',
      upstream: `127.0.0.1:${tlsPort}`,
      cause: 'tls',
      detail: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      code: 'upstream_tls_failed',
      attempt: 1,
      outcome: 'fallback',
      suppressed: 0,
    },
  ]);
  assert.equal(line['target'], 'tls/m');
});

test('no upstream path, query, key or header, and no client query string, in any line', async () => {
  await request(gw.baseUrl, 'POST', '/v1/chat/completions?api_key=query-secret', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'x-request-id': 'uf-query' },
    body: JSON.stringify(hi('service-tls')),
  });
  await accessLine('uf-query');
  const all = JSON.stringify(gw.logs);
  for (const secret of [SECRET, gw.key, 'query-secret', 'Bearer', 'chat/completions?']) {
    assert.equal(all.includes(secret), false, secret);
  }
  for (const line of gw.logs.filter((l) => l['msg'] === 'upstream failed')) {
    assert.equal(JSON.stringify(line).includes('/v1'), false, JSON.stringify(line));
  }
});
