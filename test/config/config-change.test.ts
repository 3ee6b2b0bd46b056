// What a reload changed, as its config.reload record says it: the digest of
// each parsed config (header values left out) and the paths of the settings
// that differ, in the config's own naming, bounded.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { changedSettings, configChange, configDigest, MAX_CHANGED_PATHS } from '../../src/config/config-change.ts';
import { ConfigError, type GatewayConfig } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';

const BASE = {
  dataDir: '/var/lib/portcullis',
  providers: {
    openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', headers: { 'x-team': 'alpha' } },
    demo: { type: 'demo' },
  },
  aliases: {
    'service-chat': { targets: [{ provider: 'openai', model: 'gpt-4o-mini' }, { provider: 'demo', model: 'portcullis-demo', priority: 2 }] },
    'service-fast': { provider: 'demo', model: 'portcullis-demo' },
  },
  auto: { default: 'service-chat' },
};

type Raw = Record<string, unknown>;

function config(change: (raw: Raw) => void = () => {}, source: string | null = '/etc/portcullis/portcullis.json'): GatewayConfig {
  const raw = structuredClone(BASE) as Raw;
  change(raw);
  return parseConfig(raw, source, '/etc/portcullis');
}

/** BASE's aliases, for editing in place. */
function aliases(raw: Raw): Record<string, Raw> {
  return raw['aliases'] as Record<string, Raw>;
}

/** The targets of service-chat, for editing in place. */
function chatTargets(raw: Raw): Raw[] {
  return (aliases(raw)['service-chat'] as { targets: Raw[] }).targets;
}

test('the same settings written differently (keys reordered, defaults written out, another file): nothing changed, the same digest', () => {
  const before = config();
  const after = config((raw) => {
    raw['limits'] = { maxBodyBytes: 4 * 1024 * 1024 };
    raw['aliases'] = { 'service-fast': aliases(raw)['service-fast'], 'service-chat': aliases(raw)['service-chat'] };
  }, '/srv/other.json');
  assert.deepEqual(configChange(before, after), { digest: configDigest(before), previousDigest: configDigest(before), changes: 0, changed: [] });
  assert.match(configDigest(before), /^[0-9a-f]{64}$/);
});

test('each kind of change, by its path in the config\'s naming', () => {
  const before = config();
  const cases: Array<[string, (raw: Raw) => void, string[]]> = [
    ['a limit', (raw) => (raw['limits'] = { maxConnections: 500 }), ['limits.maxConnections']],
    ['a target\'s model', (raw) => ((chatTargets(raw)[0] as Raw)['model'] = 'gpt-4o'), ['aliases.service-chat.targets[0].model']],
    ['a target added', (raw) => chatTargets(raw).push({ provider: 'demo', model: 'portcullis-demo', priority: 3 }), ['aliases.service-chat.targets']],
    ['an alias added', (raw) => (aliases(raw)['service-new'] = { provider: 'demo', model: 'portcullis-demo' }), ['aliases.service-new']],
    ['an alias removed', (raw) => delete aliases(raw)['service-fast'], ['aliases.service-fast']],
    ['a provider\'s header value', (raw) => ((raw['providers'] as Record<string, Raw>)['openai']!['headers'] = { 'x-team': 'beta' }), ['providers.openai.headers.x-team']],
    [
      'several, in the config\'s order',
      (raw) => {
        raw['log'] = { level: 'debug' };
        raw['admin'] = { allowedHosts: ['gateway.internal'] };
        (chatTargets(raw)[1] as Raw)['weight'] = 3;
      },
      ['admin.allowedHosts', 'log.level', 'aliases.service-chat.targets[1].weight'],
    ],
  ];
  for (const [what, change, paths] of cases) {
    const after = config(change);
    assert.deepEqual(changedSettings(before, after), paths, what);
    assert.deepEqual(configChange(before, after), { digest: configDigest(after), previousDigest: configDigest(before), changes: paths.length, changed: paths }, what);
  }
});

test('a header value may be a credential: it is left out of the digest, its change is still named', () => {
  const before = config();
  const after = config((raw) => ((raw['providers'] as Record<string, Raw>)['openai']!['headers'] = { 'x-team': 'Bearer hunter2-not-in-the-digest' }));
  assert.equal(configDigest(after), configDigest(before));
  assert.deepEqual(configChange(before, after).changed, ['providers.openai.headers.x-team']);
  // A header added is a different digest: its name is digested.
  const added = config((raw) => ((raw['providers'] as Record<string, Raw>)['openai']!['headers'] = { 'x-team': 'alpha', 'x-org': 'o' }));
  assert.notEqual(configDigest(added), configDigest(before));
  // The telemetry export's headers likewise.
  const otlp = (token: string) => config((raw) => (raw['telemetry'] = { otlp: { endpoint: 'https://otel.example/v1/traces', headers: { authorization: token } } }));
  assert.equal(configDigest(otlp('Bearer one')), configDigest(otlp('Bearer two')));
  assert.deepEqual(changedSettings(otlp('Bearer one'), otlp('Bearer two')), ['telemetry.otlp.headers.authorization']);
});

test('state.redis.url is digested as written: a URL holding a password never reaches the digest, the parser refuses it', () => {
  const redis = (url: string) => config((raw) => (raw['state'] = { backend: 'redis', redis: { url, passwordEnv: 'REDIS_PASSWORD' } }));
  for (const url of ['redis://gateway:guessable@10.0.0.5:6380/2', 'rediss://:guessable@cache.internal', 'REDIS://gateway:guessable@10.0.0.5']) {
    assert.throws(
      () => redis(url),
      (error: unknown) => error instanceof ConfigError && error.message === '/etc/portcullis/portcullis.json: state.redis.url: must not hold the password; use passwordEnv or passwordFile',
      url,
    );
  }
  // A user name is no secret: it is in the digest like the host.
  assert.notEqual(configDigest(redis('redis://gateway@10.0.0.5:6380/2')), configDigest(redis('redis://ops@10.0.0.5:6380/2')));
  assert.deepEqual(changedSettings(redis('redis://gateway@10.0.0.5:6380/2'), redis('redis://ops@10.0.0.5:6380/2')), ['state.redis.url']);
});

test('the digest is SHA-256 of the canonical JSON (keys sorted) of the parsed config without its source', () => {
  const c = config();
  const { source: _source, ...rest } = c;
  const form = { ...rest, providers: { ...c.providers, openai: { ...c.providers['openai'], headers: { 'x-team': '[not digested]' } } } };
  assert.equal(configDigest(c), createHash('sha256').update(sorted(form)).digest('hex'));
});

test(`at most ${MAX_CHANGED_PATHS} paths; the count says how many in all`, () => {
  const before = config();
  const after = config((raw) => {
    for (let i = 0; i < 130; i++) aliases(raw)[`extra-${String(i).padStart(3, '0')}`] = { provider: 'demo', model: 'portcullis-demo' };
  });
  const change = configChange(before, after);
  assert.equal(change.changes, 130);
  assert.equal(change.changed.length, 100);
  assert.deepEqual([change.changed[0], change.changed[99]], ['aliases.extra-000', 'aliases.extra-099']);
});

test('member names that are Object\'s own (an alias named "constructor") are compared as members', () => {
  const before = config();
  const after = config((raw) => (aliases(raw)['constructor'] = { provider: 'demo', model: 'portcullis-demo' }));
  assert.deepEqual(changedSettings(before, after), ['aliases.constructor']);
  assert.deepEqual(changedSettings(after, before), ['aliases.constructor']);
});

/** JSON with object keys sorted: what the digest hashes. */
function sorted(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sorted).join(',')}]`;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${sorted(v)}`).join(',')}}`;
}
