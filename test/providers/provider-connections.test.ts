import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { connectionWorthLogging, resolveProviderConnections } from '../../src/providers/provider-connections.ts';

function config(providers: Record<string, Record<string, unknown>>) {
  const aliases = Object.fromEntries(Object.keys(providers).map((name) => [`service-${name}`, { provider: name, model: 'm' }]));
  return parseConfig({ providers, aliases, auto: { default: Object.keys(aliases)[0] } }, 'f.json', '/tmp');
}

const https = (extra: Record<string, unknown> = {}) => ({ type: 'openai', baseUrl: 'https://llm.example.com/v1', ...extra });

function summary(providers: Record<string, Record<string, unknown>>, env: NodeJS.ProcessEnv) {
  return Object.fromEntries(
    [...resolveProviderConnections(config(providers), env)].map(([name, c]) => [
      name,
      { transport: c.transport, forProxy: c.transportForProxy, route: c.proxy.route === null ? null : `${c.proxy.route.url.host} ${c.proxy.route.source}`, description: c.proxy.description, logged: connectionWorthLogging(c) },
    ]),
  );
}

test('no proxy anywhere: transport unset is the built-in fetch, direct, nothing to log', () => {
  assert.deepEqual(summary({ up: https() }, {}), {
    up: { transport: 'fetch', forProxy: false, route: null, description: 'direct (no https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY set)', logged: false },
  });
});

test('an environment proxy that applies: transport unset becomes node, through the proxy, and is logged', () => {
  assert.deepEqual(summary({ up: https() }, { HTTPS_PROXY: 'http://proxy.internal:3128' }), {
    up: { transport: 'node', forProxy: true, route: 'proxy.internal:3128 HTTPS_PROXY', description: 'proxy http://proxy.internal:3128 (HTTPS_PROXY)', logged: true },
  });
});

test('NO_PROXY exempts the upstream: fetch stays, and the exemption is logged', () => {
  assert.deepEqual(summary({ up: https() }, { HTTPS_PROXY: 'http://proxy.internal:3128', NO_PROXY: '.example.com' }), {
    up: { transport: 'fetch', forProxy: false, route: null, description: 'direct (NO_PROXY matches "example.com")', logged: true },
  });
});

test('"transport": "node" with the environment proxy, and with a configured proxy', () => {
  assert.deepEqual(summary({ a: https({ transport: 'node' }), b: https({ transport: 'node', proxy: 'http://egress.internal:8080' }) }, { HTTPS_PROXY: 'http://proxy.internal:3128' }), {
    a: { transport: 'node', forProxy: false, route: 'proxy.internal:3128 HTTPS_PROXY', description: 'proxy http://proxy.internal:3128 (HTTPS_PROXY)', logged: true },
    b: { transport: 'node', forProxy: false, route: 'egress.internal:8080 config', description: 'proxy http://egress.internal:8080 (the provider\'s "proxy" setting)', logged: true },
  });
});

test('"proxy": "none" keeps fetch direct whatever the environment says', () => {
  assert.deepEqual(summary({ up: https({ transport: 'fetch', proxy: 'none' }) }, { HTTPS_PROXY: 'http://proxy.internal:3128' }), {
    up: { transport: 'fetch', forProxy: false, route: null, description: 'direct ("proxy": "none")', logged: false },
  });
});

test('an explicit "transport": "fetch" that an environment proxy applies to is refused, naming both ways out', () => {
  assert.throws(
    () => resolveProviderConnections(config({ up: https({ transport: 'fetch' }) }), { https_proxy: 'http://proxy.internal:3128' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.issues, [
        {
          code: 'conflict',
          path: 'providers.up.transport',
          message:
            'is "fetch", but an egress proxy applies to this upstream (proxy http://proxy.internal:3128 (https_proxy)) and the built-in fetch cannot use one: set "proxy": "none" to connect directly, or "transport": "node" to go through the proxy',
        },
      ]);
      return true;
    },
  );
});

test('a proxy variable that cannot be used is one problem, named as an environment variable, however many providers it applies to', () => {
  assert.throws(
    () => resolveProviderConnections(config({ a: https(), b: https(), demo: { type: 'demo' } }), { HTTPS_PROXY: 'socks5://user:hunter2@proxy.internal:1080' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.issues.map((i) => i.path), ['HTTPS_PROXY (environment variable)']);
      assert.match(error.message, /^f\.json: HTTPS_PROXY \(environment variable\): is a socks5:\/\/ proxy/);
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    },
  );
});

test('the demo provider has no connection', () => {
  assert.equal(resolveProviderConnections(config({ demo: { type: 'demo' } }), { HTTPS_PROXY: 'http://p:1' }).size, 0);
});

test('NODE_USE_ENV_PROXY with a provider on fetch is refused: fetch would apply the proxy variables by itself, around the gateway\'s rules', () => {
  assert.throws(
    () => resolveProviderConnections(config({ up: https({ transport: 'fetch', proxy: 'none' }) }), { NODE_USE_ENV_PROXY: '1', HTTPS_PROXY: 'http://p:1' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.issues.map((i) => [i.code, i.path]), [['conflict', 'NODE_USE_ENV_PROXY (environment variable)']]);
      assert.match(error.message, /remove it; the gateway applies HTTPS_PROXY, http_proxy and NO_PROXY itself/);
      return true;
    },
  );
  // Set to 0, or with every provider on node, it changes nothing the gateway relies on.
  assert.equal(resolveProviderConnections(config({ up: https() }), { NODE_USE_ENV_PROXY: '0' }).get('up')?.transport, 'fetch');
  assert.equal(resolveProviderConnections(config({ up: https({ transport: 'node' }) }), { NODE_USE_ENV_PROXY: '1' }).get('up')?.transport, 'node');
});

test('--use-env-proxy (NODE_OPTIONS or the process\'s own flags) and NODE_TLS_REJECT_UNAUTHORIZED=0 are refused beside a provider on fetch', () => {
  const paths = (env: NodeJS.ProcessEnv) => {
    try {
      resolveProviderConnections(config({ up: https() }), env);
      return [];
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.issues.map((i) => i.path);
    }
  };
  assert.deepEqual(paths({ NODE_OPTIONS: '--max-old-space-size=512 --use-env-proxy' }), ['--use-env-proxy (node option)']);
  assert.deepEqual(paths({ NODE_TLS_REJECT_UNAUTHORIZED: '0' }), ['NODE_TLS_REJECT_UNAUTHORIZED (environment variable)']);
  assert.deepEqual(paths({ NODE_TLS_REJECT_UNAUTHORIZED: '1', NODE_OPTIONS: '--enable-source-maps' }), []);
  // The node transport sets its own options: neither changes it.
  assert.equal(resolveProviderConnections(config({ up: https({ transport: 'node' }) }), { NODE_TLS_REJECT_UNAUTHORIZED: '0', NODE_OPTIONS: '--use-env-proxy' }).get('up')?.transport, 'node');
});

test('NODE_USE_ENV_PROXY, --use-env-proxy and NODE_TLS_REJECT_UNAUTHORIZED=0 are refused while the issuer (fetch) or the collector (the default agent) is configured, even with every provider on node', () => {
  const oidc = { issuer: 'https://login.example.com/realms/main', clientId: 'portcullis', redirectUrl: 'http://127.0.0.1:8081/sso/callback', allowedGroups: ['admins'] };
  const otlp = { endpoint: 'https://otel.example/v1/traces' };
  const withExtras = (extra: Record<string, unknown>) =>
    parseConfig({ providers: { up: https({ transport: 'node' }) }, aliases: { 'service-up': { provider: 'up', model: 'm' } }, auto: { default: 'service-up' }, ...extra }, 'f.json', '/tmp');
  const refusals = (extra: Record<string, unknown>, env: NodeJS.ProcessEnv) => {
    try {
      resolveProviderConnections(withExtras(extra), env);
      return [];
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.issues.map((i) => [i.path, i.message]);
    }
  };
  const proxyMessage = (affected: string) =>
    `makes Node's built-in fetch and node:http's default agent apply the proxy variables by themselves, process-wide, around the gateway's own rules ("proxy": "none", NO_PROXY as curl reads it; on Node 22 and 24 it also retries a refused CONNECT in a tight loop; affects ${affected}): remove it; the gateway applies HTTPS_PROXY, http_proxy and NO_PROXY itself`;
  assert.deepEqual(refusals({ admin: { oidc } }, { NODE_USE_ENV_PROXY: '1' }), [['NODE_USE_ENV_PROXY (environment variable)', proxyMessage('admin.oidc (the issuer)')]]);
  assert.deepEqual(refusals({ telemetry: { otlp } }, { NODE_OPTIONS: '--use-env-proxy' }), [['--use-env-proxy (node option)', proxyMessage('telemetry.otlp (the collector)')]]);
  assert.deepEqual(refusals({ admin: { oidc }, telemetry: { otlp } }, { NODE_TLS_REJECT_UNAUTHORIZED: '0' }), [
    [
      'NODE_TLS_REJECT_UNAUTHORIZED (environment variable)',
      'is "0", which turns off certificate checks for the built-in fetch and node:http\'s default agent (affects admin.oidc (the issuer), telemetry.otlp (the collector)): any server could pose as the upstream, the issuer or the collector and read what is sent to it. Unset it; for a private CA give a provider "transport": "node" and "tls": {"caFile": ...}, and start node with NODE_EXTRA_CA_CERTS for the issuer and the collector',
    ],
  ]);
  // Nothing on Node's own clients: the switches change nothing the gateway uses.
  assert.deepEqual(refusals({}, { NODE_USE_ENV_PROXY: '1', NODE_TLS_REJECT_UNAUTHORIZED: '0' }), []);
});
