import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, DEFAULT_LIMITS } from '../../src/config/config.ts';
import { loadConfig, resolveProviderKeys } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { DEFAULT_ANTHROPIC_BETAS, DEFAULT_POLICY } from '../../src/config/provider-defaults.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const minimal = {
  providers: { local: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1/', apiKeyEnv: 'LOCAL_KEY' } },
  aliases: { 'service-chat': { provider: 'local', model: 'llama-3.1-8b' } },
};

function fails(value: unknown, pathInFile: string, problem: RegExp): void {
  assert.throws(
    () => parseConfig(value, '/etc/portcullis.json', dir),
    // Exactly one problem: a wrong setting must not drag others along.
    (err: unknown) =>
      err instanceof ConfigError && err.issues.length === 1 && err.path === pathInFile && problem.test(err.message) && err.message.startsWith('/etc/portcullis.json: '),
    `${pathInFile}`,
  );
}

test('a minimal config gets every default', () => {
  const c = parseConfig(minimal, 'f.json', dir);
  assert.deepEqual(c, {
    source: 'f.json',
    listen: { host: '127.0.0.1', port: 8080, tls: null, trustedProxies: [] },
    admin: { enabled: true, host: '127.0.0.1', port: 8081, tls: null, secureCookies: false, sessionTtlMs: 28_800_000, sessionIdleMs: 1_800_000, allowedHosts: [], oidc: null },
    shutdown: { drainTimeoutMs: 30_000 },
    log: { level: 'info' },
    state: { backend: 'memory', redis: null, onUnavailable: 'refuse' },
    dataDir: path.join(dir, 'data'),
    limits: DEFAULT_LIMITS,
    providers: {
      local: {
        type: 'openai',
        baseUrl: 'http://127.0.0.1:8000/v1',
        apiKeyEnv: 'LOCAL_KEY',
        apiKeyFile: null,
        headers: {},
        apiKeyHeader: 'authorization',
        maxTokensParam: 'max_tokens',
        responses: 'translate',
        responsesPassthrough: [],
        responsesHostedTools: [],
        embeddingsEncoding: 'base64',
        policy: DEFAULT_POLICY,
        transport: null,
        tls: null,
        proxy: null,
      },
    },
    aliases: {
      'service-chat': {
        kind: 'chat',
        targets: [{ provider: 'local', model: 'llama-3.1-8b', weight: 1, priority: 0, price: null, acceptsDimensions: false, maxInputsPerCall: null }],
        maxOutputTokens: null,
        contextWindow: null,
        capabilities: [],
        price: null,
        imageTokens: 2000,
        requestFields: null,
        guard: null,
      },
    },
    auto: { default: 'service-chat', rules: [] },
    requestFields: [],
    currency: 'USD',
    telemetry: { serviceName: 'portcullis', resourceAttributes: {}, samplerRatio: 1, otlp: null },
    audit: { rotateBytes: 64 * 1024 * 1024 },
    responses: { store: { enabled: false, ttlSeconds: 86_400, maxRecordBytes: 8 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024, maxChainDepth: 1000 } },
    metrics: null,
    embeddings: { maxInputs: 2048, maxInputBytes: 65_536, maxInputTokens: 8192, maxTotalBytes: 4_194_304, maxConcurrentCalls: 4 },
    guard: null,
    security: { requireFips: false, passwordHash: 'scrypt' },
  });
});

test('every setting is checked and named by its path', () => {
  fails([], '', /must be an object/);
  fails({ ...minimal, lisen: {} }, 'lisen', /unknown setting/);
  fails({ ...minimal, listen: { port: 70000 } }, 'listen.port', /integer from 0 to 65535/);
  fails({ ...minimal, listen: { host: '' } }, 'listen.host', /non-empty string/);
  fails({ aliases: minimal.aliases }, 'providers', /is required/);
  fails({ providers: minimal.providers }, 'aliases', /is required/);
  fails({ ...minimal, aliases: {} }, 'aliases', /at least one alias/);
  fails({ ...minimal, aliases: { 'service-chat': { provider: 'nope' } } }, 'aliases.service-chat.provider', /not defined under "providers"/);
  fails({ ...minimal, aliases: { 'service-chat': { provider: 'local', modle: 'x' } } }, 'aliases.service-chat.modle', /unknown setting/);
  fails({ ...minimal, aliases: { 'service-auto': { provider: 'local' } } }, 'aliases.service-auto', /reserved/);
  fails({ ...minimal, aliases: { 'bad alias': { provider: 'local' } } }, 'aliases.bad alias', /alias names/);
  fails({ ...minimal, aliases: { a: { provider: 'local', maxOutputTokens: 0 } } }, 'aliases.a.maxOutputTokens', /integer from 1/);
  fails({ ...minimal, auto: { default: 'x' } }, 'auto.default', /not defined under "aliases"/);
  fails({ ...minimal, providers: { local: { type: 'grpc' } } }, 'providers.local.type', /"openai", "anthropic" or "demo"/);
  fails({ ...minimal, providers: { local: { type: 'openai' } } }, 'providers.local.baseUrl', /non-empty string/);
  fails({ ...minimal, providers: { local: { type: 'openai', baseUrl: 'ftp://x' } } }, 'providers.local.baseUrl', /http/);
  fails({ ...minimal, providers: { local: { type: 'openai', baseUrl: 'not a url' } } }, 'providers.local.baseUrl', /absolute/);
  fails({ ...minimal, providers: { local: { type: 'openai', baseUrl: 'http://u:p@h/v1' } } }, 'providers.local.baseUrl', /credentials/);
  fails({ ...minimal, providers: { local: { type: 'openai', baseUrl: 'http://h/v1', apiKeyEnv: 'sk-123' } } }, 'providers.local.apiKeyEnv', /NAME of an environment variable/);
  fails(
    { ...minimal, providers: { local: { type: 'openai', baseUrl: 'http://h', headers: { Authorization: 'x' } } } },
    'providers.local.headers.Authorization',
    /set by the gateway/,
  );
  fails({ ...minimal, providers: { local: { type: 'openai', baseUrl: 'http://h', headers: { 'x-a': 'a\nb' } } } }, 'providers.local.headers.x-a', /CR, LF/);
  fails({ ...minimal, providers: { local: { type: 'openai', baseUrl: 'http://h', maxTokensParam: 'tokens' } } }, 'providers.local.maxTokensParam', /max_completion_tokens/);
  fails({ ...minimal, limits: { maxBodyBytes: 10 } }, 'limits.maxBodyBytes', /integer from 1024/);
  fails({ ...minimal, limits: { maxBodyByte: 10 } }, 'limits.maxBodyByte', /unknown setting/);
  fails({ ...minimal, limits: { headersTimeoutMs: 90_000, requestTimeoutMs: 60_000 } }, 'limits.headersTimeoutMs', /must not exceed/);
  fails({ ...minimal, limits: { maxConnections: 0 } }, 'limits.maxConnections', /integer from 1 to 1000000/);
  assert.equal(parseConfig({ ...minimal, limits: { maxConnections: 64 } }, null, dir).limits.maxConnections, 64);
  // Unset: derived from the descriptor limit when serving (src/ops/descriptor-watch.ts).
  assert.equal(DEFAULT_LIMITS.maxConnections, null);
  assert.equal(parseConfig(minimal, null, dir).limits.maxConnections, null);
});

test('alias model defaults to the alias name; auto.default defaults to the first alias', () => {
  const c = parseConfig({ providers: { d: { type: 'demo' } }, aliases: { x: { provider: 'd' }, y: { provider: 'd' } } }, null, dir);
  assert.equal(c.aliases['x']?.targets[0]?.model, 'x');
  assert.equal(c.auto.default, 'x');
  assert.deepEqual(c.providers['d'], { type: 'demo', delayMs: 0 });
});

test('loadConfig: the embedded default serves the demo provider on 127.0.0.1:8080, service-vision for images, service-embed for embeddings', () => {
  const c = loadConfig({ env: {}, cwd: dir });
  assert.equal(c.source, null);
  assert.deepEqual(c.listen, { host: '127.0.0.1', port: 8080, tls: null, trustedProxies: [] });
  assert.deepEqual(Object.keys(c.aliases), ['service-chat', 'service-vision', 'service-embed']);
  assert.deepEqual(
    Object.values(c.aliases).map((a) => a.kind),
    ['chat', 'chat', 'embeddings'],
  );
  assert.deepEqual(c.aliases['service-embed']?.targets, [
    { provider: 'demo', model: 'portcullis-demo-embed', weight: 1, priority: 0, price: { input: 0, cachedInput: 0, output: 0 }, acceptsDimensions: true, maxInputsPerCall: null },
  ]);
  assert.equal(c.aliases['service-chat']?.targets[0]?.provider, 'demo');
  assert.equal(c.aliases['service-vision']?.targets[0]?.provider, 'demo');
  assert.deepEqual(c.aliases['service-vision']?.capabilities, ['vision']);
  assert.equal(c.providers['demo']?.type, 'demo');
  assert.equal(c.auto.default, 'service-chat');
  assert.equal(c.dataDir, path.join(dir, 'data'));
  assert.equal(loadConfig({ env: { PORTCULLIS_DATA_DIR: 'd2' }, cwd: dir }).dataDir, path.join(dir, 'd2'));
});

test('loadConfig reads --config, then PORTCULLIS_CONFIG; dataDir is relative to the file', () => {
  const sub = path.join(dir, 'etc');
  const file = path.join(dir, 'gw.json');
  writeFileSync(file, JSON.stringify({ ...minimal, dataDir: 'state' }));
  assert.equal(loadConfig({ configPath: file, env: {}, cwd: '/' }).dataDir, path.join(dir, 'state'));
  assert.equal(loadConfig({ env: { PORTCULLIS_CONFIG: 'gw.json' }, cwd: dir }).source, file);
  assert.equal(sub.length > 0, true);
});

test('loadConfig names the file for missing files, bad JSON and duplicated keys', () => {
  const missing = path.join(dir, 'missing.json');
  assert.throws(() => loadConfig({ configPath: missing, env: {} }), { message: `${missing}: file not found` });
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{"providers": ');
  assert.throws(() => loadConfig({ configPath: bad, env: {} }), (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${bad}: is not valid JSON`));
  const dup = path.join(dir, 'dup.json');
  writeFileSync(dup, '{"aliases": {}, "aliases": {}}');
  assert.throws(() => loadConfig({ configPath: dup, env: {} }), (e: unknown) => e instanceof ConfigError && /not valid JSON/.test(e.message));
});

test('resolveProviderKeys reads the named variables and stops on a missing one', () => {
  const c = parseConfig(minimal, 'f.json', dir);
  assert.equal(resolveProviderKeys(c, { LOCAL_KEY: 'sk-upstream' }).get('local'), 'sk-upstream');
  assert.throws(() => resolveProviderKeys(c, {}), {
    message: 'f.json: providers.local.apiKeyEnv: environment variable LOCAL_KEY is not set or empty',
  });
});

test('targets: fallbacks and weights, each checked by path', () => {
  const c = parseConfig(
    {
      providers: { a: { type: 'demo' }, b: { type: 'demo' } },
      aliases: { x: { targets: [{ provider: 'a', model: 'm1', weight: 3 }, { provider: 'b', priority: 1 }], contextWindow: 8192, capabilities: ['tools', 'vision', 'tools'] } },
    },
    null,
    dir,
  );
  assert.deepEqual(c.aliases['x'], {
    kind: 'chat',
    targets: [
      { provider: 'a', model: 'm1', weight: 3, priority: 0, price: { input: 0, cachedInput: 0, output: 0 }, acceptsDimensions: false, maxInputsPerCall: null },
      { provider: 'b', model: 'x', weight: 1, priority: 1, price: { input: 0, cachedInput: 0, output: 0 }, acceptsDimensions: false, maxInputsPerCall: null },
    ],
    maxOutputTokens: null,
    contextWindow: 8192,
    capabilities: ['tools', 'vision'],
    price: null,
    imageTokens: 2000,
    requestFields: null,
    guard: null,
  });
  const p = { providers: { a: { type: 'demo' } } };
  fails({ ...p, aliases: { x: { targets: [] } } }, 'aliases.x.targets', /non-empty array/);
  fails({ ...p, aliases: { x: { provider: 'a', targets: [{ provider: 'a' }] } } }, 'aliases.x', /not both/);
  fails({ ...p, aliases: { x: { targets: [{ provider: 'zz' }] } } }, 'aliases.x.targets[0].provider', /not defined/);
  fails({ ...p, aliases: { x: { targets: [{ provider: 'a', weight: 0 }] } } }, 'aliases.x.targets[0].weight', /integer from 1/);
  fails({ ...p, aliases: { x: { provider: 'a', capabilities: ['audio'] } } }, 'aliases.x.capabilities[0]', /must be "vision", "tools" or "json"/);
  fails({ ...p, aliases: { x: { provider: 'a', contextWindow: 10 } } }, 'aliases.x.contextWindow', /integer from 256/);
});

test('auto rules: explicit ones are checked; without any, capabilities make the defaults', () => {
  const aliases = {
    'service-chat': { provider: 'd' },
    'service-vision': { provider: 'd', capabilities: ['vision'] },
    'service-tools': { provider: 'd', capabilities: ['tools', 'json'] },
  };
  const base = { providers: { d: { type: 'demo' } }, aliases };
  assert.deepEqual(parseConfig(base, null, dir).auto, {
    default: 'service-chat',
    rules: [
      { when: { images: true }, use: 'service-vision', reason: 'image_url' },
      { when: { tools: true }, use: 'service-tools', reason: 'tools' },
      { when: { jsonObject: true }, use: 'service-tools', reason: 'json_object' },
    ],
  });
  const explicit = parseConfig({ ...base, auto: { default: 'service-tools', rules: [{ when: { minPromptTokens: 1000, stream: true }, use: 'service-vision' }] } }, null, dir);
  assert.deepEqual(explicit.auto, { default: 'service-tools', rules: [{ when: { minPromptTokens: 1000, stream: true }, use: 'service-vision', reason: 'prompt_tokens' }] });
  fails({ ...base, auto: { rules: [{ when: {}, use: 'service-chat' }] } }, 'auto.rules[0].when', /at least one condition/);
  fails({ ...base, auto: { rules: [{ when: { images: 'yes' }, use: 'service-chat' }] } }, 'auto.rules[0].when.images', /true or false/);
  fails({ ...base, auto: { rules: [{ when: { images: true }, use: 'nope' }] } }, 'auto.rules[0].use', /not defined/);
  fails({ ...base, auto: { rules: [{ when: { hasImages: true }, use: 'service-chat' }] } }, 'auto.rules[0].when.hasImages', /unknown setting/);
});

test('provider policy and anthropic defaults', () => {
  const c = parseConfig(
    {
      providers: {
        claude: { type: 'anthropic', apiKeyFile: 'claude.key', retry: { maxAttempts: 5 }, circuitBreaker: { openMs: 1000 }, idleTimeoutMs: 5000 },
      },
      aliases: { x: { provider: 'claude', model: 'claude-sonnet' } },
    },
    null,
    dir,
  );
  assert.deepEqual(c.providers['claude'], {
    type: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    apiKeyEnv: null,
    apiKeyFile: 'claude.key',
    headers: {},
    version: '2023-06-01',
    messagesPassthrough: [],
    anthropicBetas: [...DEFAULT_ANTHROPIC_BETAS],
    transport: null,
    tls: null,
    proxy: null,
    policy: { ...DEFAULT_POLICY, idleTimeoutMs: 5000, retry: { ...DEFAULT_POLICY.retry, maxAttempts: 5 }, circuitBreaker: { ...DEFAULT_POLICY.circuitBreaker, openMs: 1000 } },
  });
  const up = { type: 'openai', baseUrl: 'http://h/v1' };
  fails({ providers: { p: { ...up, retry: { maxAttempts: 0 } } }, aliases: { x: { provider: 'p' } } }, 'providers.p.retry.maxAttempts', /integer from 1 to 10/);
  fails({ providers: { p: { ...up, retry: { baseDelayMs: 500, maxDelayMs: 100 } } }, aliases: { x: { provider: 'p' } } }, 'providers.p.retry.maxDelayMs', /not be below/);
  fails({ providers: { p: { ...up, apiKeyEnv: 'A', apiKeyFile: 'f' } }, aliases: { x: { provider: 'p' } } }, 'providers.p.apiKeyFile', /not both/);
  fails({ providers: { p: { type: 'anthropic', version: 'latest' } }, aliases: { x: { provider: 'p' } } }, 'providers.p.version', /anthropic-version date/);
  fails({ providers: { p: { ...up, maxTokensParam: 'max_tokens', version: '2023-06-01' } }, aliases: { x: { provider: 'p' } } }, 'providers.p.version', /unknown setting/);
});

test('apiKeyFile: read once at start, trimmed, ${VAR} expanded, clear errors', () => {
  const keyDir = path.join(dir, 'creds');
  mkdirSync(keyDir, { recursive: true });
  writeFileSync(path.join(keyDir, 'up.key'), 'sk-from-file\n');
  const c = parseConfig({ providers: { p: { type: 'openai', baseUrl: 'http://h/v1', apiKeyFile: '${CREDENTIALS_DIRECTORY}/up.key' } }, aliases: { x: { provider: 'p' } } }, path.join(dir, 'c.json'), dir);
  assert.equal(resolveProviderKeys(c, { CREDENTIALS_DIRECTORY: keyDir }).get('p'), 'sk-from-file');
  assert.throws(() => resolveProviderKeys(c, {}), { message: `${path.join(dir, 'c.json')}: providers.p.apiKeyFile: environment variable CREDENTIALS_DIRECTORY (used in the path) is not set` });
  assert.throws(() => resolveProviderKeys(c, { CREDENTIALS_DIRECTORY: dir }), { message: `${path.join(dir, 'c.json')}: providers.p.apiKeyFile: ${path.join(dir, 'up.key')} does not exist` });
  writeFileSync(path.join(keyDir, 'empty.key'), '  \n');
  const e = parseConfig({ providers: { p: { type: 'openai', baseUrl: 'http://h/v1', apiKeyFile: path.join(keyDir, 'empty.key') } }, aliases: { x: { provider: 'p' } } }, null, dir);
  assert.throws(() => resolveProviderKeys(e, {}), /is empty/);
});

test('the operational sections: admin, shutdown, log and state', () => {
  const c = parseConfig(
    {
      ...minimal,
      admin: { host: '0.0.0.0', port: 9001, tls: { certFile: 'c.pem', keyFile: 'k.pem' }, sessionTtlMs: 3_600_000, sessionIdleMs: 600_000, allowedHosts: ['Gateway.Internal', '[fd00::1]'] },
      shutdown: { drainTimeoutMs: 0 },
      log: { level: 'warn' },
      state: { backend: 'redis', redis: { url: 'redis://10.0.0.5:6380/2', passwordEnv: 'REDIS_PASSWORD' }, onUnavailable: 'local' },
    },
    'f.json',
    dir,
  );
  assert.deepEqual(c.admin, {
    enabled: true,
    host: '0.0.0.0',
    port: 9001,
    tls: { certFile: 'c.pem', keyFile: 'k.pem', clientCaFile: null, clientAuth: 'none', minVersion: 'TLSv1.2' },
    secureCookies: true,
    sessionTtlMs: 3_600_000,
    sessionIdleMs: 600_000,
    allowedHosts: ['gateway.internal', '[fd00::1]'],
    oidc: null,
  });
  assert.deepEqual(c.shutdown, { drainTimeoutMs: 0 });
  assert.deepEqual(c.log, { level: 'warn' });
  assert.deepEqual(c.state, {
    backend: 'redis',
    redis: { url: 'redis://10.0.0.5:6380/2', passwordEnv: 'REDIS_PASSWORD', passwordFile: null, keyPrefix: 'portcullis:', connectTimeoutMs: 2000, commandTimeoutMs: 1000, tls: null },
    onUnavailable: 'local',
  });
  assert.equal(parseConfig({ ...minimal, admin: { tls: { certFile: 'c', keyFile: 'k' }, secureCookies: false } }, 'f.json', dir).admin.secureCookies, false);
  assert.equal(parseConfig({ ...minimal, admin: { enabled: false, port: 8080 } }, 'f.json', dir).admin.enabled, false);

  fails({ ...minimal, admin: { port: 8080 } }, 'admin.port', /must differ from listen.port \(8080\)/);
  fails({ ...minimal, admin: { bind: 'x' } }, 'admin.bind', /unknown setting/);
  fails({ ...minimal, admin: { enabled: 'yes' } }, 'admin.enabled', /true or false/);
  fails({ ...minimal, admin: { allowedHosts: ['gw.internal:8081'] } }, 'admin.allowedHosts[0]', /without a port/);
  fails({ ...minimal, admin: { allowedHosts: 'gw' } }, 'admin.allowedHosts', /must be an array/);
  fails({ ...minimal, admin: { tls: { certFile: 'c' } } }, 'admin.tls.keyFile', /is required/);
  fails({ ...minimal, admin: { sessionTtlMs: 120_000, sessionIdleMs: 600_000 } }, 'admin.sessionIdleMs', /must not exceed admin.sessionTtlMs/);
  fails({ ...minimal, shutdown: { drainTimeoutMs: 600_001 } }, 'shutdown.drainTimeoutMs', /integer from 0 to 600000/);
  fails({ ...minimal, log: { level: 'verbose' } }, 'log.level', /must be one of "debug", "info", "warn", "error"/);
  fails({ ...minimal, state: { backend: 'etcd' } }, 'state.backend', /"memory" or "redis"/);
  fails({ ...minimal, state: { backend: 'redis' } }, 'state.redis', /is required with "backend": "redis"/);
  fails({ ...minimal, state: { redis: { url: 'redis://h:1' } } }, 'state.redis', /only used with "backend": "redis"/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'http://h:1' } } }, 'state.redis.url', /redis:\/\/ scheme, or rediss:\/\//);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'redis://h:1', tls: { caFile: 'ca.pem' } } } }, 'state.redis.tls', /only used with a rediss:\/\/ url/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'rediss://10.0.0.5', tls: { serverName: '10.0.0.5' } } } }, 'state.redis.tls.serverName', /must be a DNS name/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'redis://:secret@h:1' } } }, 'state.redis.url', /must not hold the password/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'not a url' } } }, 'state.redis.url', /redis:\/\/host:port/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'redis://h:1', passwordEnv: 'A', passwordFile: 'f' } } }, 'state.redis.passwordFile', /not both/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'redis://h:1', keyPrefix: 'a b' } } }, 'state.redis.keyPrefix', /letters, digits/);
  fails({ ...minimal, state: { backend: 'redis', redis: { url: 'redis://h:1' }, onUnavailable: 'ignore' } }, 'state.onUnavailable', /"refuse" or "local"/);
});

test('every problem is collected, in file order, each with its code and path', () => {
  const value = {
    lisen: { port: 1 },
    limits: { maxBodyBytes: 10 },
    providers: {
      up: { type: 'openai', baseURL: 'http://h/v1', retry: { maxAttempts: 0 } },
      broken: { type: 'grpc', anything: true },
      claude: { type: 'anthropic', version: 'latest', prot: 1 },
    },
    aliases: {
      x: { targets: [{ provider: 'up' }, { provider: 'nope', weight: 0 }] },
      y: { provider: 'broken', modle: 'm' },
    },
    auto: { default: 'z' },
    log: { level: 'verbose' },
  };
  assert.throws(
    () => parseConfig(value, 'f.json', dir),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.issues, [
        { code: 'unknown_setting', path: 'lisen', message: "unknown setting; did you mean 'listen'?" },
        { code: 'not_integer', path: 'limits.maxBodyBytes', message: 'must be an integer from 1024 to 67108864' },
        { code: 'unknown_setting', path: 'providers.up.baseURL', message: "unknown setting; did you mean 'baseUrl'?" },
        { code: 'not_string', path: 'providers.up.baseUrl', message: 'must be a non-empty string' },
        { code: 'not_integer', path: 'providers.up.retry.maxAttempts', message: 'must be an integer from 1 to 10' },
        { code: 'not_one_of', path: 'providers.broken.type', message: 'must be "openai", "anthropic" or "demo"' },
        { code: 'unknown_setting', path: 'providers.claude.prot', message: 'unknown setting (allowed here: type, baseUrl, apiKeyEnv, apiKeyFile, headers, connectTimeoutMs, firstByteTimeoutMs, idleTimeoutMs, timeoutMs, retry, circuitBreaker, transport, tls, proxy, version, messagesPassthrough, anthropicBetas, tokenCount)' },
        { code: 'invalid_value', path: 'providers.claude.version', message: 'must be an anthropic-version date such as "2023-06-01"' },
        { code: 'unknown_reference', path: 'aliases.x.targets[1].provider', message: `names provider 'nope', which is not defined under "providers"` },
        { code: 'not_integer', path: 'aliases.x.targets[1].weight', message: 'must be an integer from 1 to 1000' },
        { code: 'unknown_setting', path: 'aliases.y.modle', message: "unknown setting; did you mean 'model'?" },
        { code: 'unknown_reference', path: 'auto.default', message: `names alias 'z', which is not defined under "aliases"` },
        { code: 'not_one_of', path: 'log.level', message: 'must be one of "debug", "info", "warn", "error"' },
      ]);
      assert.ok(err.message.startsWith('f.json: 13 problems\n  lisen: '), err.message);
      return true;
    },
  );
});

test('a broken section does not drag problems into the sections that refer to it', () => {
  // "providers" is not an object: aliases naming providers are not judged.
  assert.throws(() => parseConfig({ providers: [], aliases: { x: { provider: 'a' } } }, 'f.json', dir), {
    message: 'f.json: providers: must be an object',
  });
  // No alias at all: auto.default is not judged either.
  assert.throws(() => parseConfig({ providers: { a: { type: 'demo' } }, aliases: {}, auto: { default: 'x' } }, 'f.json', dir), {
    message: 'f.json: aliases: must define at least one alias',
  });
  // A wrong backend: whether "redis" belongs cannot be told.
  assert.throws(() => parseConfig({ ...minimal, state: { backend: 'etcd', redis: { url: 'redis://h:1' } } }, 'f.json', dir), {
    message: 'f.json: state.backend: must be "memory" or "redis"',
  });
});
