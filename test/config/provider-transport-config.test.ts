// providers.*.transport and providers.*.tls as the config check reads them:
// TLS settings need the node transport and an https:// upstream; neither is
// ever silently ignored.
import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';

const dir = os.tmpdir();

function withProvider(settings: Record<string, unknown>): unknown {
  return {
    providers: { up: { type: 'openai', baseUrl: 'https://llm.internal/v1', ...settings } },
    aliases: { 'service-chat': { provider: 'up', model: 'm' } },
  };
}

function issues(value: unknown): Array<{ path: string; message: string }> {
  try {
    parseConfig(value, 'f.json', dir);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.issues.map((i) => ({ path: i.path, message: i.message }));
  }
  return [];
}

test('transport unset stays null (fetch, or node for an environment proxy: provider-connections); node with tls on an https upstream is accepted', () => {
  const plain = parseConfig(withProvider({}), 'f.json', dir).providers['up'];
  assert.equal(plain?.type === 'openai' ? plain.transport : undefined, null);
  const fetch = parseConfig(withProvider({ transport: 'fetch' }), 'f.json', dir).providers['up'];
  assert.equal(fetch?.type === 'openai' ? fetch.transport : undefined, 'fetch');
  const node = parseConfig(withProvider({ transport: 'node', tls: { caFile: 'ca.pem', serverName: 'llm.internal', minVersion: 'TLSv1.3' } }), 'f.json', dir).providers['up'];
  assert.deepEqual(node?.type === 'openai' ? [node.transport, node.tls] : undefined, [
    'node',
    { caFile: 'ca.pem', certFile: null, keyFile: null, serverName: 'llm.internal', minVersion: 'TLSv1.3' },
  ]);
});

test('tls with the fetch transport is refused, naming what to set', () => {
  assert.deepEqual(issues(withProvider({ tls: { caFile: 'ca.pem' } })), [
    { path: 'providers.up.tls', message: 'needs "transport": "node": the built-in fetch cannot take per-upstream TLS settings or a proxy on any supported Node.js line' },
  ]);
});

test('tls for a plain-http upstream is refused: it would be unused', () => {
  assert.deepEqual(issues(withProvider({ baseUrl: 'http://llm.internal/v1', transport: 'node', tls: { caFile: 'ca.pem' } })), [
    { path: 'providers.up.tls', message: 'applies only to an https:// baseUrl: remove tls, or use https' },
  ]);
});

test('an unknown transport is refused with the choices', () => {
  const found = issues(withProvider({ transport: 'curl' }));
  assert.equal(found.length, 1);
  assert.equal(found[0]?.path, 'providers.up.transport');
  assert.match(found[0]?.message ?? '', /fetch.*node/);
});
