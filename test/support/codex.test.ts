// The Codex harness's pure parts: the config.toml a run gets, the environment
// (nothing of the machine's but PATH, proxies at a closed port, loopback
// exempt). That the binary found is the pinned version, the system test
// asserts from the user-agent Codex sends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codexConfig, codexEnv } from './codex.ts';

test('config.toml: the model, the provider at the base URL speaking Responses, plugins and analytics off, extra settings where they belong', () => {
  assert.equal(
    codexConfig({ baseUrl: 'http://127.0.0.1:40123/v1' }),
    [
      'model = "service-code"',
      'model_provider = "gw"',
      'features.plugins = false',
      'analytics.enabled = false',
      '',
      '[model_providers.gw]',
      'name = "gw"',
      'base_url = "http://127.0.0.1:40123/v1"',
      'env_key = "GW_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  assert.equal(
    codexConfig({ baseUrl: 'http://127.0.0.1:1/v1', model: 'a "quoted" alias', settings: { 'analytics.enabled': 'true', model_reasoning_effort: '"low"' }, providerSettings: { request_max_retries: '0' } }),
    [
      'model = "a \\"quoted\\" alias"',
      'model_provider = "gw"',
      'features.plugins = false',
      'analytics.enabled = true',
      'model_reasoning_effort = "low"',
      '',
      '[model_providers.gw]',
      'name = "gw"',
      'base_url = "http://127.0.0.1:1/v1"',
      'env_key = "GW_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      '',
    ].join('\n'),
  );
});

test('the environment: the key under env_key, HOME and CODEX_HOME temporary, every proxy variable at the closed port or the one given, loopback exempt', () => {
  const env = codexEnv({ apiKey: 'sk-1', home: '/tmp/h', codexHome: '/tmp/h/.codex', env: { RUST_LOG: 'warn' } });
  assert.deepEqual(env, {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: '/tmp/h',
    XDG_CONFIG_HOME: '/tmp/h/.config',
    TMPDIR: '/tmp/h',
    CODEX_HOME: '/tmp/h/.codex',
    GW_KEY: 'sk-1',
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    ALL_PROXY: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    all_proxy: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost,::1',
    no_proxy: '127.0.0.1,localhost,::1',
    RUST_LOG: 'warn',
  });
  assert.equal(codexEnv({ apiKey: 'k', home: '/h', codexHome: '/h/c', proxyUrl: 'http://127.0.0.1:5' })['HTTPS_PROXY'], 'http://127.0.0.1:5');
});
