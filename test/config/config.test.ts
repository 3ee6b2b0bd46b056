import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, DEFAULT_LIMITS } from '../../src/config/config.ts';
import { loadConfig, resolveProviderKeys } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const minimal = {
  providers: { local: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1/', apiKeyEnv: 'LOCAL_KEY' } },
  aliases: { 'service-chat': { provider: 'local', model: 'llama-3.1-8b' } },
};

function fails(value: unknown, pathInFile: string, problem: RegExp): void {
  assert.throws(
    () => parseConfig(value, '/etc/portcullis.json', dir),
    (err: unknown) => err instanceof ConfigError && err.path === pathInFile && problem.test(err.message) && err.message.startsWith('/etc/portcullis.json: '),
    `${pathInFile}`,
  );
}

test('a minimal config gets every default', () => {
  const c = parseConfig(minimal, 'f.json', dir);
  assert.deepEqual(c, {
    source: 'f.json',
    listen: { host: '127.0.0.1', port: 8080 },
    dataDir: path.join(dir, 'data'),
    limits: DEFAULT_LIMITS,
    providers: {
      local: {
        type: 'openai',
        baseUrl: 'http://127.0.0.1:8000/v1',
        apiKeyEnv: 'LOCAL_KEY',
        headers: {},
        maxTokensParam: 'max_tokens',
        timeoutMs: 600_000,
        firstByteTimeoutMs: 60_000,
      },
    },
    aliases: { 'service-chat': { provider: 'local', model: 'llama-3.1-8b', maxOutputTokens: null } },
    auto: { default: 'service-chat' },
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
  fails({ ...minimal, providers: { local: { type: 'grpc' } } }, 'providers.local.type', /"openai" or "demo"/);
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
});

test('alias model defaults to the alias name; auto.default defaults to the first alias', () => {
  const c = parseConfig({ providers: { d: { type: 'demo' } }, aliases: { x: { provider: 'd' }, y: { provider: 'd' } } }, null, dir);
  assert.equal(c.aliases['x']?.model, 'x');
  assert.equal(c.auto.default, 'x');
  assert.deepEqual(c.providers['d'], { type: 'demo', delayMs: 0 });
});

test('loadConfig: the embedded default serves the demo provider on 127.0.0.1:8080', () => {
  const c = loadConfig({ env: {}, cwd: dir });
  assert.equal(c.source, null);
  assert.deepEqual(c.listen, { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(Object.keys(c.aliases), ['service-chat']);
  assert.equal(c.aliases['service-chat']?.provider, 'demo');
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
