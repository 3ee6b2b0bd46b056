// The TLS sections' parse rules (src/config/tls-config.ts) and the settings
// around them: listen.tls / admin.tls, providers.*.tls with transport and
// proxy, state.redis.tls. Only the shape is checked here; the files
// themselves are test/config/tls-files.system.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, type GatewayConfig } from '../../src/config/config.ts';
import type { ConfigIssue } from '../../src/config/config-issues.ts';
import { parseConfig } from '../../src/config/config-parser.ts';

const minimal = {
  providers: { demo: { type: 'demo' } },
  aliases: { 'service-chat': { provider: 'demo' } },
};

function parse(value: Record<string, unknown>): GatewayConfig {
  return parseConfig({ ...minimal, ...value }, '/etc/portcullis.json', '/etc');
}

/** Every issue of a config that must fail, as data. */
function issues(value: Record<string, unknown>): ConfigIssue[] {
  try {
    parse(value);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  assert.fail('the config was accepted');
}

/** A config with one upstream of these settings. */
function upstream(settings: Record<string, unknown>): Record<string, unknown> {
  return {
    providers: { up: { type: 'openai', baseUrl: 'https://llm.internal/v1', ...settings } },
    aliases: { 'service-chat': { provider: 'up' } },
  };
}

function redis(settings: Record<string, unknown>): Record<string, unknown> {
  return { state: { backend: 'redis', redis: settings } };
}

const NEEDS_NODE = 'needs "transport": "node": the built-in fetch cannot take per-upstream TLS settings or a proxy on any supported Node.js line';

describe('listener TLS (listen.tls, admin.tls)', () => {
  test('certFile and keyFile alone: no client certificates, TLS 1.2 at least', () => {
    const config = parse({ listen: { tls: { certFile: 'tls/gw.pem', keyFile: '${CREDENTIALS_DIRECTORY}/gw.key' } } });
    // Paths are kept as written: ${NAME} and relative paths are resolved where the files are read.
    assert.deepEqual(config.listen.tls, { certFile: 'tls/gw.pem', keyFile: '${CREDENTIALS_DIRECTORY}/gw.key', clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' });
  });

  test('certFile and keyFile are required, each with what it holds', () => {
    assert.deepEqual(issues({ listen: { tls: {} } }), [
      { code: 'required', path: 'listen.tls.certFile', message: 'is required (a PEM certificate chain)' },
      { code: 'required', path: 'listen.tls.keyFile', message: 'is required (the PEM private key of certFile)' },
    ]);
    assert.deepEqual(issues({ admin: { tls: { certFile: 'a.pem' } } }), [
      { code: 'required', path: 'admin.tls.keyFile', message: 'is required (the PEM private key of certFile)' },
    ]);
  });

  test('file settings must be non-empty strings', () => {
    assert.deepEqual(issues({ listen: { tls: { certFile: '', keyFile: 7, clientCaFile: ['ca.pem'] } } }), [
      { code: 'not_string', path: 'listen.tls.certFile', message: 'must be a non-empty string' },
      { code: 'not_string', path: 'listen.tls.keyFile', message: 'must be a non-empty string' },
      { code: 'not_string', path: 'listen.tls.clientCaFile', message: 'must be a non-empty string' },
    ]);
  });

  test('clientCaFile alone means clientAuth "required"', () => {
    const config = parse({ admin: { tls: { certFile: 'a.pem', keyFile: 'a.key', clientCaFile: 'clients.pem' } } });
    assert.deepEqual(config.admin.tls, { certFile: 'a.pem', keyFile: 'a.key', clientCaFile: 'clients.pem', clientAuth: 'required', minVersion: 'TLSv1.2' });
  });

  test('clientAuth "optional" with clientCaFile is kept', () => {
    const config = parse({ listen: { tls: { certFile: 'a.pem', keyFile: 'a.key', clientCaFile: 'clients.pem', clientAuth: 'optional' } } });
    assert.equal(config.listen.tls?.clientAuth, 'optional');
  });

  test('clientAuth "optional" or "required" without clientCaFile: clientCaFile is required', () => {
    for (const clientAuth of ['optional', 'required']) {
      assert.deepEqual(issues({ listen: { tls: { certFile: 'a.pem', keyFile: 'a.key', clientAuth } } }), [
        {
          code: 'required',
          path: 'listen.tls.clientCaFile',
          message: `is required with "clientAuth": "${clientAuth}" (the CA certificates client certificates are checked against)`,
        },
      ]);
    }
  });

  test('clientAuth "none" with clientCaFile is a conflict, not a silently unused file', () => {
    assert.deepEqual(issues({ admin: { tls: { certFile: 'a.pem', keyFile: 'a.key', clientCaFile: 'clients.pem', clientAuth: 'none' } } }), [
      { code: 'conflict', path: 'admin.tls.clientAuth', message: 'is "none", so clientCaFile would never be used: set "optional" or "required", or remove clientCaFile' },
    ]);
  });

  test('a wrong clientAuth is one problem, with no follow-on about clientCaFile', () => {
    assert.deepEqual(issues({ listen: { tls: { certFile: 'a.pem', keyFile: 'a.key', clientAuth: 'yes' } } }), [
      { code: 'not_one_of', path: 'listen.tls.clientAuth', message: 'must be "none", "optional" or "required"' },
    ]);
    // clientCaFile wrong as well: still one problem per setting.
    assert.deepEqual(issues({ listen: { tls: { certFile: 'a.pem', keyFile: 'a.key', clientCaFile: 1, clientAuth: 'required' } } }), [
      { code: 'not_string', path: 'listen.tls.clientCaFile', message: 'must be a non-empty string' },
    ]);
  });

  test('minVersion: "TLSv1.2" (default) or "TLSv1.3"', () => {
    assert.equal(parse({ listen: { tls: { certFile: 'a.pem', keyFile: 'a.key', minVersion: 'TLSv1.3' } } }).listen.tls?.minVersion, 'TLSv1.3');
    for (const minVersion of ['TLSv1.1', 'TLSv1', 'tlsv1.3', 1.3]) {
      assert.deepEqual(issues({ listen: { tls: { certFile: 'a.pem', keyFile: 'a.key', minVersion } } }), [
        { code: 'not_one_of', path: 'listen.tls.minVersion', message: 'must be "TLSv1.2" or "TLSv1.3"' },
      ]);
    }
  });

  test('an unknown setting names the likely one; client-only settings do not belong here', () => {
    assert.deepEqual(issues({ listen: { tls: { certfile: 'a.pem', keyFile: 'a.key', caFile: 'ca.pem' } } }), [
      { code: 'unknown_setting', path: 'listen.tls.certfile', message: "unknown setting; did you mean 'certFile'?" },
      { code: 'unknown_setting', path: 'listen.tls.caFile', message: 'unknown setting (allowed here: certFile, keyFile, clientCaFile, clientAuth, minVersion)' },
      { code: 'required', path: 'listen.tls.certFile', message: 'is required (a PEM certificate chain)' },
    ]);
  });

  test('tls must be an object', () => {
    assert.deepEqual(issues({ listen: { tls: 'tls/gw.pem' } }), [{ code: 'not_object', path: 'listen.tls', message: 'must be an object' }]);
  });
});

describe('upstream TLS (providers.*.tls) with transport and proxy', () => {
  test('every setting is optional; the defaults are Node\'s', () => {
    const config = parse(upstream({ transport: 'node', tls: {} }));
    const up = config.providers['up'];
    assert.ok(up !== undefined && up.type === 'openai');
    assert.deepEqual({ transport: up.transport, tls: up.tls, proxy: up.proxy }, {
      transport: 'node',
      tls: { caFile: null, certFile: null, keyFile: null, serverName: null, minVersion: 'TLSv1.2' },
      proxy: null,
    });
  });

  test('all settings given are kept', () => {
    const tls = { caFile: 'ca.pem', certFile: 'client.pem', keyFile: 'client.key', serverName: 'llm.internal', minVersion: 'TLSv1.3' };
    const up = parse(upstream({ transport: 'node', tls, proxy: 'http://proxy.internal:3128' })).providers['up'];
    assert.ok(up !== undefined && up.type === 'openai');
    assert.deepEqual({ tls: up.tls, proxy: up.proxy }, { tls, proxy: 'http://proxy.internal:3128' });
  });

  test('certFile and keyFile go together', () => {
    assert.deepEqual(issues(upstream({ transport: 'node', tls: { certFile: 'client.pem' } })), [
      { code: 'required', path: 'providers.up.tls.keyFile', message: 'is required when a client certificate is configured: certFile and keyFile go together' },
    ]);
    assert.deepEqual(issues(upstream({ transport: 'node', tls: { keyFile: 'client.key', caFile: 'ca.pem' } })), [
      { code: 'required', path: 'providers.up.tls.certFile', message: 'is required when a client certificate is configured: certFile and keyFile go together' },
    ]);
  });

  test('serverName: a DNS name', () => {
    for (const serverName of ['llm.internal', 'a', 'xn--bcher-kva.example', 'LLM-1.Internal', `${'a'.repeat(63)}.internal`]) {
      assert.equal(parse(upstream({ transport: 'node', tls: { serverName } })).providers['up']?.type, 'openai', serverName);
    }
    const wrong = ['llm_internal', 'llm.internal.', '-llm.internal', 'llm-.internal', 'llm..internal', '*.internal', `${'a'.repeat(64)}.internal`, `${'a.'.repeat(126)}ab`, 'llm.internal:443'];
    for (const serverName of wrong) {
      assert.deepEqual(issues(upstream({ transport: 'node', tls: { serverName } })), [
        { code: 'invalid_value', path: 'providers.up.tls.serverName', message: 'must be a DNS name such as "llm.internal" (the name in the server\'s certificate), not an IP address' },
      ], serverName);
    }
  });

  // The pattern's own comment said SNI carries no IP address, yet 10.0.0.1 matched it.
  test('serverName: an IP address is refused (SNI carries none)', () => {
    for (const serverName of ['10.0.0.1', '127.0.0.1', '::1', '[::1]', '1']) {
      assert.deepEqual(issues(upstream({ transport: 'node', tls: { serverName } })), [
        { code: 'invalid_value', path: 'providers.up.tls.serverName', message: 'must be a DNS name such as "llm.internal" (the name in the server\'s certificate), not an IP address' },
      ], serverName);
    }
    // A numeric label elsewhere is a host name.
    assert.equal(parse(upstream({ transport: 'node', tls: { serverName: '10.llm.internal' } })).providers['up']?.type, 'openai');
  });

  test('minVersion as for listeners', () => {
    assert.deepEqual(issues(upstream({ transport: 'node', tls: { minVersion: 'TLSv1.0' } })), [
      { code: 'not_one_of', path: 'providers.up.tls.minVersion', message: 'must be "TLSv1.2" or "TLSv1.3"' },
    ]);
  });

  test('listener-only settings do not belong here', () => {
    assert.deepEqual(issues(upstream({ transport: 'node', tls: { clientCaFile: 'ca.pem' } })), [
      { code: 'unknown_setting', path: 'providers.up.tls.clientCaFile', message: 'unknown setting (allowed here: caFile, certFile, keyFile, serverName, minVersion)' },
    ]);
  });

  test('tls needs "transport": "node" (fetch is the default)', () => {
    assert.deepEqual(issues(upstream({ tls: { caFile: 'ca.pem' } })), [{ code: 'conflict', path: 'providers.up.tls', message: NEEDS_NODE }]);
    assert.deepEqual(issues(upstream({ transport: 'fetch', tls: {} })), [{ code: 'conflict', path: 'providers.up.tls', message: NEEDS_NODE }]);
  });

  test('a proxy URL needs "transport": "node"; "none" does not', () => {
    assert.deepEqual(issues(upstream({ proxy: 'http://proxy.internal:3128' })), [{ code: 'conflict', path: 'providers.up.proxy', message: NEEDS_NODE }]);
    assert.equal(parse(upstream({ proxy: 'none' })).providers['up']?.type, 'openai');
  });

  // Both were set, but only tls was named: the operator fixed it and then met the proxy.
  test('tls and a proxy on fetch: both are named in one pass', () => {
    assert.deepEqual(issues(upstream({ tls: {}, proxy: 'http://proxy.internal:3128' })), [
      { code: 'conflict', path: 'providers.up.tls', message: NEEDS_NODE },
      { code: 'conflict', path: 'providers.up.proxy', message: NEEDS_NODE },
    ]);
  });

  // A typo in transport fell back to fetch and dragged a second, misleading problem along.
  test('a wrong transport is one problem, without a follow-on about tls', () => {
    assert.deepEqual(issues(upstream({ transport: 'nod', tls: {}, proxy: 'http://proxy.internal:3128' })), [
      { code: 'not_one_of', path: 'providers.up.transport', message: 'must be "fetch" or "node"' },
    ]);
  });
});

describe('Redis TLS (state.redis.tls)', () => {
  test('only with a rediss:// url', () => {
    const config = parse(redis({ url: 'rediss://redis.internal:6380/0', tls: { caFile: 'redis-ca.pem', serverName: 'redis.internal' } }));
    assert.deepEqual(config.state.redis?.tls, { caFile: 'redis-ca.pem', certFile: null, keyFile: null, serverName: 'redis.internal', minVersion: 'TLSv1.2' });
    assert.equal(parse(redis({ url: 'rediss://redis.internal:6380' })).state.redis?.tls, null);
  });

  const CONFLICT = { code: 'conflict', path: 'state.redis.tls', message: "is only used with a rediss:// url (Redis over TLS); change the url's scheme to rediss://" };

  test('tls with a redis:// url is a conflict, not TLS silently left out', () => {
    assert.deepEqual(issues(redis({ url: 'redis://redis.internal:6379', tls: {} })), [CONFLICT]);
  });

  // URL schemes are case-insensitive; the check compared the raw text with "redis://".
  test('tls with a REDIS:// url (any case) is the same conflict', () => {
    assert.deepEqual(issues(redis({ url: 'REDIS://redis.internal:6379', tls: {} })), [CONFLICT]);
    assert.deepEqual(issues(redis({ url: 'Redis://redis.internal:6379', tls: {} })), [CONFLICT]);
  });

  test('a client certificate for Redis: certFile and keyFile together', () => {
    assert.deepEqual(issues(redis({ url: 'rediss://redis.internal:6380', tls: { keyFile: 'gw.key' } })), [
      { code: 'required', path: 'state.redis.tls.certFile', message: 'is required when a client certificate is configured: certFile and keyFile go together' },
    ]);
  });
});
