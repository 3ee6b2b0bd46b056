// The shown-once dialog's base URL and first request, from the API listener's address.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AliasCatalogue, AliasInfo } from '../../src/dashboard/admin-model.ts';
import { firstRequest } from '../../src/dashboard/first-request.ts';

const alias = (name: string, available = true): AliasInfo => ({ alias: name, available, maxOutputTokens: null, contextWindow: null, capabilities: [], targets: [] });
const catalogue = (url: string | null, ...aliases: AliasInfo[]): AliasCatalogue => ({ data: aliases, auto: null, api: { url } });
const KEY = 'pcl_abc';

test('a loopback listener: its URL plus /v1, and curl with the key and the first alias the key may use', () => {
  const first = firstRequest(KEY, ['service-vision'], catalogue('http://127.0.0.1:8080', alias('service-chat'), alias('service-vision')), 'localhost');
  assert.deepEqual(first, {
    baseUrl: 'http://127.0.0.1:8080/v1',
    alias: 'service-vision',
    curl: [
      'curl http://127.0.0.1:8080/v1/chat/completions \\',
      "  -H 'Authorization: Bearer pcl_abc' \\",
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"model":"service-vision","messages":[{"role":"user","content":"Hello! Which model are you?"}]}'`,
    ].join('\n'),
  });
});

test('every alias allowed: the first available one; a wildcard listener takes the page host', () => {
  const first = firstRequest(KEY, null, catalogue('http://0.0.0.0:8080', alias('down', false), alias('up')), 'gw.example');
  assert.equal(first?.baseUrl, 'http://gw.example:8080/v1');
  assert.equal(first?.alias, 'up');
  assert.equal(firstRequest(KEY, null, catalogue('https://[::]:9443', alias('a')), '::1')?.baseUrl, 'https://[::1]:9443/v1');
});

test('a Unix socket: curl goes through it; an alias with a quote stays one shell word', () => {
  const first = firstRequest(KEY, null, catalogue('http+unix:/run/portcullis/api.sock', alias("it's")), 'localhost');
  assert.equal(first?.baseUrl, 'http://localhost/v1');
  assert.match(first?.curl ?? '', /^curl --unix-socket '\/run\/portcullis\/api\.sock' http:\/\/localhost\/v1\/chat\/completions/);
  assert.match(first?.curl ?? '', /"model":"it'\\''s"/);
});

test('no known address: nothing; no alias the key may use: the base URL alone', () => {
  assert.equal(firstRequest(KEY, null, null, 'localhost'), null);
  assert.equal(firstRequest(KEY, null, catalogue(null, alias('a')), 'localhost'), null);
  assert.equal(firstRequest(KEY, null, { data: [alias('a')], auto: null }, 'localhost'), null);
  assert.deepEqual(firstRequest(KEY, [], catalogue('http://127.0.0.1:1', alias('a')), 'localhost'), { baseUrl: 'http://127.0.0.1:1/v1', curl: null, alias: null });
});
