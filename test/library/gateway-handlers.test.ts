// An embedded gateway served by the host's own node:http server: handle()
// under a basePath beside the host's routes (next() for what is not the
// gateway's), admin() as a second request function, and close() draining
// what came through them without closing the host's server.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Gateway } from '../../src/api/gateway.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { DEMO } from './demo-config.ts';

const root = memoryTempDir('library-handlers');

async function embedded(basePath: string): Promise<{ gateway: Gateway; key: string }> {
  const dataDir = path.join(freshDir(root), 'data');
  const state = openFileBackend(dataDir, { watch: false });
  const created = await state.keys.create('library');
  await state.close();
  const logger = createLogger({ level: 'error', write: () => undefined });
  return { gateway: await createGateway({ config: { ...DEMO, dataDir }, logger, env: {}, basePath }), key: created.key };
}

/** The host: /host/ping is its own, /llm/... the gateway's (next() answers the host's 404), /admin/... the admin handler's. */
async function host(gateway: Gateway, seen: string[]): Promise<{ server: http.Server; url: string }> {
  const admin = gateway.admin();
  const server = http.createServer((req, res) => {
    if (req.url === '/host/ping') {
      res.end('pong');
      return;
    }
    if (req.url?.startsWith('/admin/') === true) {
      req.url = req.url.slice('/admin'.length);
      admin(req, res);
      return;
    }
    gateway.handle(req, res, () => {
      seen.push(`next ${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('the host has no such page');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('an embedded gateway on the host server', () => {
  test('handle() serves the API under basePath; other paths go to next(); admin() answers its routes; close() leaves the host serving', async () => {
    const { gateway, key } = await embedded('/llm');
    const seen: string[] = [];
    const { server, url } = await host(gateway, seen);
    try {
      const chat = await fetch(`${url}/llm/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content: 'hello' }] }),
      });
      assert.equal(chat.status, 200);
      assert.equal(((await chat.json()) as { object: string }).object, 'chat.completion');
      assert.equal((await fetch(`${url}/llm/healthz`)).status, 200);

      const outside = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}' });
      assert.deepEqual([outside.status, await outside.text()], [404, 'the host has no such page']);
      assert.equal(await (await fetch(`${url}/host/ping`)).text(), 'pong');
      assert.deepEqual(seen, ['next POST /v1/chat/completions']);

      const session = await fetch(`${url}/admin/api/session`);
      assert.equal(session.status, 401);
      assert.equal(session.headers.get('x-frame-options'), 'DENY');

      assert.deepEqual(await gateway.close(), { finished: 0, endedWithError: 0, refused: 0 });
      // The gateway refuses from now on; the host's server and routes are the host's.
      const late = await fetch(`${url}/llm/healthz`);
      assert.equal(late.status, 503);
      assert.equal(await (await fetch(`${url}/host/ping`)).text(), 'pong');
      assert.throws(() => gateway.admin(), { message: 'admin() after close(): make a new gateway' });
      await assert.rejects(gateway.listen({ port: 0 }), { message: 'listen() after close(): make a new gateway' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('an embedded gateway with a host\'s ports', () => {
  test('authenticate decides each request; the audit sink gets the reload records the chain took', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const asked: Array<{ apiKey: string | null; door: string }> = [];
    const records: Array<{ seq: number; action: string; actor: { kind: string; id: string }; source: string; target: string | null }> = [];
    const gateway = await createGateway({
      config: { ...DEMO, dataDir },
      logger: createLogger({ level: 'error', write: () => undefined }),
      env: {},
      authenticate: ({ apiKey, door }) => {
        asked.push({ apiKey, door });
        return apiKey === 'host-key' ? { id: 'team-a', allowedAliases: ['service-chat'] } : null;
      },
      audit: {
        append: async (record) => {
          records.push({ seq: record.seq, action: record.action, actor: { kind: record.actor.kind, id: record.actor.id }, source: record.source, target: record.target });
        },
      },
    });
    try {
      const { url } = await gateway.listen({ port: 0, host: '127.0.0.1' });
      const ask = (key: string): Promise<Response> =>
        fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content: 'hello' }] }),
        });
      assert.equal((await ask('host-key')).status, 200);
      assert.equal((await ask('other-key')).status, 401);
      assert.deepEqual(asked, [
        { apiKey: 'host-key', door: 'chat' },
        { apiKey: 'other-key', door: 'chat' },
      ]);
      assert.deepEqual(await gateway.reload({ ...DEMO, dataDir }), { ok: true, aliases: 2, restartNeeded: [] });
      assert.deepEqual((await gateway.reload({ ...DEMO, dataDir, colour: 'blue' })).ok, false);
      assert.deepEqual(records, [
        { seq: 1, action: 'config.reload', actor: { kind: 'system', id: 'library' }, source: 'reload()', target: 'embedded' },
        { seq: 2, action: 'config.reload_refused', actor: { kind: 'system', id: 'library' }, source: 'reload()', target: 'embedded' },
      ]);
    } finally {
      await gateway.close();
    }
  });
});
