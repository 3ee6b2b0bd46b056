// A provider type a host registers, as the config sees it: a provider of
// that type is checked by the gateway (its common upstream settings) and by
// the adapter (its own), with paths and wording like a built-in type's; an
// unknown type lists every type; a malformed registration is an Error naming it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProviderAdapter } from '../../src/api/providers.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { ConfigError, type GatewayConfig, type HostProviderConfig } from '../../src/config/config.ts';
import type { ConfigIssue } from '../../src/config/config-issues.ts';
import { checkProviderTypes } from '../../src/library/provider-registry.ts';
import { providerTypeName } from '../../src/config/provider-types.ts';
import { describeTarget } from '../../src/telemetry/chat-trace.ts';
import { aliasTargetWarnings } from '../../src/providers/request-restrictions.ts';
import { parrotAdapter } from './providers-sample-adapter.ts';

const BASE = 'http://127.0.0.1:9/v1';

function configWith(provider: Record<string, unknown>, aliases: Record<string, unknown> = { chat: { provider: 'p', model: 'm' } }): unknown {
  return { providers: { p: provider }, aliases };
}

function parse(value: unknown, providerTypes: readonly ProviderAdapter[] | undefined = [parrotAdapter]): GatewayConfig {
  return parseConfig(value, null, '/tmp', providerTypes === undefined ? {} : { providerTypes });
}

function issuesOf(value: unknown, providerTypes?: readonly ProviderAdapter[]): ConfigIssue[] {
  try {
    parse(value, providerTypes);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.issues];
  }
  return assert.fail('expected config problems');
}

describe('a provider of a host type', () => {
  test('a valid one carries its adapter, its parsed settings and the common upstream settings', () => {
    const config = parse(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu', apiKeyEnv: 'PARROT_KEY', apiKeyHeader: 'X-Parrot-Key', timeoutMs: 30_000, headers: { 'x-team': 'a' } }));
    const p = config.providers['p'] as HostProviderConfig;
    assert.deepEqual(
      [p.type, p.hostType, p.name, p.adapter, p.settings, p.baseUrl, p.apiKeyEnv, p.apiKeyFile, p.apiKeyHeader, p.policy.timeoutMs, p.headers],
      ['host', 'parrot', 'p', parrotAdapter, { region: 'eu' }, BASE, 'PARROT_KEY', null, 'x-parrot-key', 30_000, { 'x-team': 'a' }],
    );
  });

  test("the adapter's problems are reported at the provider's path, with the gateway's", () => {
    assert.deepEqual(issuesOf(configWith({ type: 'parrot', baseUrl: 'ftp://x', region: 'mars', timeoutMs: 5 })), [
      { code: 'invalid_value', path: 'providers.p.baseUrl', message: 'must be an absolute http:// or https:// URL' },
      { code: 'not_integer', path: 'providers.p.timeoutMs', message: 'must be an integer from 100 to 3600000' },
      { code: 'invalid_value', path: 'providers.p.region', message: 'must be "eu" or "us"' },
    ]);
  });

  test('a missing own setting and a missing baseUrl are both said', () => {
    assert.deepEqual(issuesOf(configWith({ type: 'parrot' })), [
      { code: 'not_string', path: 'providers.p.baseUrl', message: 'must be a non-empty string' },
      { code: 'invalid_value', path: 'providers.p.region', message: 'is required: "eu" or "us"' },
    ]);
  });

  test("a setting neither the gateway nor the adapter takes is unknown, with a near miss named", () => {
    const issues = issuesOf(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu', regoin: 'us' }));
    assert.deepEqual(issues, [{ code: 'unknown_setting', path: 'providers.p.regoin', message: "unknown setting; did you mean 'region'?" }]);
  });

  test('another type\'s own settings are unknown here', () => {
    const issues = issuesOf(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu', maxTokensParam: 'max_tokens' }));
    assert.deepEqual(issues.map((i) => [i.code, i.path]), [['unknown_setting', 'providers.p.maxTokensParam']]);
  });

  test('a setting path the adapter gives inside its own setting joins the provider\'s', () => {
    const tagged: ProviderAdapter = {
      type: 'tagged',
      settings: ['tags'],
      parse: (settings, report) => {
        report('tags[1]', 'must be a string');
        report('', 'is not usable as a whole');
        return settings;
      },
      create: () => assert.fail('not built'),
    };
    assert.deepEqual(issuesOf(configWith({ type: 'tagged', baseUrl: BASE, tags: ['a', 2] }), [tagged]), [
      { code: 'invalid_value', path: 'providers.p.tags[1]', message: 'must be a string' },
      { code: 'invalid_value', path: 'providers.p', message: 'is not usable as a whole' },
    ]);
  });

  test("an adapter's parse that throws is a problem at the provider naming the type, not a crash", () => {
    const throwing: ProviderAdapter = { type: 'thrower', settings: [], parse: () => { throw new RangeError('boom'); }, create: () => assert.fail('not built') };
    assert.deepEqual(issuesOf(configWith({ type: 'thrower', baseUrl: BASE }), [throwing]), [
      { code: 'invalid_value', path: 'providers.p', message: 'could not be checked: provider type "thrower"\'s parse threw (RangeError) instead of reporting; fix the adapter or these settings' },
    ]);
  });

  test('is named by its own type where a type is shown (a refusal\'s target label, trace attributes)', () => {
    const config = parse(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu' }));
    assert.equal(providerTypeName(config.providers['p']!), 'parrot');
    const { attributes } = describeTarget(config, 'p/m');
    assert.deepEqual([attributes['gen_ai.system'], attributes['gen_ai.provider.name']], ['parrot', 'parrot']);
  });

  test('check-config\'s warning about targets that refuse differently names the host type', () => {
    const config = parse({
      providers: { p: { type: 'parrot', baseUrl: BASE, region: 'eu' }, a: { type: 'anthropic' } },
      aliases: { chat: { targets: [{ provider: 'p', model: 'm' }, { provider: 'a', model: 'claude', priority: 1 }] } },
    });
    const [warning] = aliasTargetWarnings(config);
    assert.match(warning?.message ?? '', /p\/m \(parrot\)/);
    assert.doesNotMatch(warning?.message ?? '', /\(host\)/);
  });

  test('transport, tls and proxy are the gateway\'s, as for a built-in type', () => {
    const p = parse(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu', transport: 'node', proxy: 'http://proxy.internal:3128' })).providers['p'] as HostProviderConfig;
    assert.deepEqual([p.transport, p.proxy, p.tls], ['node', 'http://proxy.internal:3128', null]);
    assert.deepEqual(issuesOf(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu', proxy: 'http://proxy.internal:3128' })).map((i) => i.path), ['providers.p.proxy']);
  });

  test('defaultBaseUrl makes baseUrl optional', () => {
    const hosted: ProviderAdapter = { ...parrotAdapter, type: 'hosted', defaultBaseUrl: 'https://api.parrot.example/v2' } as ProviderAdapter;
    const p = parse(configWith({ type: 'hosted', region: 'us' }), [hosted]).providers['p'] as HostProviderConfig;
    assert.equal(p.baseUrl, 'https://api.parrot.example/v2');
  });

  test('an embeddings alias cannot name one', () => {
    const issues = issuesOf(configWith({ type: 'parrot', baseUrl: BASE, region: 'eu' }, { chat: { provider: 'p', model: 'm' }, vectors: { kind: 'embeddings', provider: 'p', model: 'e' } }));
    assert.deepEqual(issues, [
      { code: 'invalid_value', path: 'aliases.vectors.provider', message: "names provider 'p' of a type the host added: such types serve chat aliases only; use an openai or demo provider" },
    ]);
  });
});

describe('type names', () => {
  test('an unknown type lists the built-in and the registered types', () => {
    assert.deepEqual(issuesOf(configWith({ type: 'parot', baseUrl: BASE })), [
      { code: 'not_one_of', path: 'providers.p.type', message: 'must be one of "openai", "anthropic", "demo", "parrot"' },
    ]);
  });

  test('without registered types the message is the built-in one', () => {
    assert.deepEqual(issuesOf(configWith({ type: 'parrot', baseUrl: BASE }), []), [
      { code: 'not_one_of', path: 'providers.p.type', message: 'must be "openai", "anthropic" or "demo"' },
    ]);
  });

  test('"host", the checked config\'s own marker, is not a type a file can give', () => {
    assert.deepEqual(issuesOf(configWith({ type: 'host', baseUrl: BASE }), []).map((i) => i.path), ['providers.p.type']);
  });
});

describe('registering provider types', () => {
  const cases: Array<[string, unknown, string]> = [
    ['not an array', parrotAdapter, 'providerTypes must be an array of provider adapters ({ type, settings, parse, create }).'],
    ['not an object', [null], 'providerTypes[0] must be a provider adapter object ({ type, settings, parse, create }).'],
    ['a bad type name', [{ ...parrotAdapter, type: 'par rot' }], 'providerTypes[0].type must be a type name of letters, digits, ".", "_" and "-" (at most 64), as a config\'s "type" names it.'],
    ['a built-in name', [{ ...parrotAdapter, type: 'anthropic' }], 'providerTypes[0] (type "anthropic") takes the name of a built-in provider type (openai, anthropic, demo), which cannot be replaced: give it another type name.'],
    ['a duplicate', [parrotAdapter, parrotAdapter], 'providerTypes[1] (type "parrot") registers a type already registered by an earlier adapter: each type once.'],
    ['no create', [{ type: 'x', settings: [], parse: () => null }], 'providerTypes[0] (type "x").create must be a function.'],
    ['settings not names', [{ ...parrotAdapter, settings: ['region', 3] }], 'providerTypes[0] (type "parrot").settings must be an array of the adapter\'s own setting names (strings; [] for none).'],
    ['a gateway setting claimed', [{ ...parrotAdapter, settings: ['region', 'timeoutMs'] }], 'providerTypes[0] (type "parrot").settings names "timeoutMs", which the gateway checks for every provider: leave it out of settings (its value reaches the gateway, not the adapter).'],
    ['a bad defaultBaseUrl', [{ ...parrotAdapter, defaultBaseUrl: 7 }], 'providerTypes[0] (type "parrot").defaultBaseUrl must be a URL string when set.'],
  ];
  for (const [what, list, message] of cases) {
    test(`${what}: an Error from parseConfig and from checkProviderTypes`, () => {
      assert.throws(() => parse(configWith({ type: 'demo' }), list as ProviderAdapter[]), (error: unknown) => error instanceof Error && !(error instanceof ConfigError) && error.message === message);
      assert.throws(() => checkProviderTypes(list), { message });
    });
  }

  test('checkProviderTypes returns the adapters in order; undefined is none', () => {
    const other = { ...parrotAdapter, type: 'other' };
    assert.deepEqual(checkProviderTypes([parrotAdapter, other]), [parrotAdapter, other]);
    assert.deepEqual(checkProviderTypes(undefined), []);
  });
});
