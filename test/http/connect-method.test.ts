// Regression, "CONNECT leaves no trace": node closes a CONNECT's socket
// without a word unless someone listens. Both listeners (the API and the
// admin one, with its security headers) answer it 405 method_not_allowed in
// the envelope with an Allow header, close the connection after the answer,
// and log an access line like every other refused method.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';

let gw: AdminGateway;
before(async () => {
  gw = await startAdminGateway();
});
after(() => gw.close());

/** Sends `send` on a new connection; what came back once the server closed it. */
function exchange(origin: string, send: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: hostname }, () => socket.write(send));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (text += c));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no close after 10 s; got ${JSON.stringify(text)}`)));
  });
}

function parse(answer: string): { status: string; headers: Map<string, string>; body: unknown } {
  const end = answer.indexOf('\r\n\r\n');
  const [statusLine = '', ...fields] = answer.slice(0, end).split('\r\n');
  const headers = new Map(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
  return { status: statusLine, headers, body: JSON.parse(answer.slice(end + 4)) };
}

const TUNNEL_REFUSED = {
  error: {
    message: 'Method CONNECT is not allowed on api.openai.com:443: the gateway opens no tunnels.',
    type: 'invalid_request_error',
    param: null,
    code: 'method_not_allowed',
  },
};

for (const listener of ['api', 'admin'] as const) {
  test(`${listener} listener: CONNECT host:port is answered 405 with an empty Allow, the connection closed, and logged`, async () => {
    const origin = listener === 'api' ? gw.apiUrl : gw.adminUrl;
    // Bytes a client would tunnel after the CONNECT are read and dropped, never parsed as a request.
    const answer = await exchange(origin, 'CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n');
    const { status, headers, body } = parse(answer);
    assert.equal(status, 'HTTP/1.1 405 Method Not Allowed');
    assert.equal(headers.get('allow'), '');
    assert.equal(headers.get('connection'), 'close');
    assert.equal(headers.get('content-type'), 'application/json');
    assert.deepEqual(body, TUNNEL_REFUSED);
    assert.equal((answer.match(/HTTP\/1\.1 /g) ?? []).length, 1, answer);
    if (listener === 'admin') assert.equal(headers.get('x-frame-options'), 'DENY');
    const requestId = headers.get('x-request-id');
    assert.ok(requestId !== undefined && requestId !== '');
    await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['requestId'] === requestId), 'the access line');
    const line = gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId) ?? {};
    assert.deepEqual([line['method'], line['path'], line['status'], line['error'], line['completed']], ['CONNECT', 'api.openai.com:443', 405, 'method_not_allowed', true]);
  });
}

test('api listener: CONNECT naming a path it serves gets that path\'s methods in Allow, as other refused methods do', async () => {
  const answer = await exchange(gw.apiUrl, 'CONNECT /v1/models HTTP/1.1\r\nHost: x\r\n\r\n');
  const { status, headers, body } = parse(answer);
  assert.equal(status, 'HTTP/1.1 405 Method Not Allowed');
  assert.equal(headers.get('allow'), 'GET, HEAD');
  assert.deepEqual(body, {
    error: { message: 'Method CONNECT is not allowed on /v1/models; allowed: GET, HEAD.', type: 'invalid_request_error', param: null, code: 'method_not_allowed' },
  });
});
