// checkConfig as a host calls it: the config file's checks on a value, every
// problem as {code, path, message}, upstream keys looked up in the given env
// and key and certificate files resolved against baseDir; GatewayConfigError
// lists them all, and createGateway refuses a config with the same list.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { ConfigIssue } from '../../src/api/config.ts';
import { checkConfig, GatewayConfigError } from '../../src/library/check-config.ts';
import { createGateway } from '../../src/library/create-gateway.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-check-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function config(providers: Record<string, unknown>): unknown {
  return { providers, aliases: { 'service-chat': { provider: Object.keys(providers)[0], model: 'm' } } };
}

test('a sound config has no issues', () => {
  assert.deepEqual(checkConfig(config({ up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyEnv: 'UP_KEY' } }), { baseDir: dir, env: { UP_KEY: 'sk-secret' } }), []);
  assert.deepEqual(checkConfig(config({ local: { type: 'demo' } }), { baseDir: dir, env: {} }), []);
});

test('every problem of the file checks comes back as data, with its code and path', () => {
  const issues = checkConfig({ providers: { up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyEnvv: 'X' } }, aliases: { 'service-chat': { provider: 'nope', model: 'm' } }, lsiten: {} }, { baseDir: dir, env: {} });
  assert.deepEqual(
    issues.map((issue) => [issue.code, issue.path]),
    [
      ['unknown_setting', 'lsiten'],
      ['unknown_setting', 'providers.up.apiKeyEnvv'],
      ['unknown_reference', 'aliases.service-chat.provider'],
    ],
  );
  assert.equal(issues[0]?.message, "unknown setting; did you mean 'listen'?");
  assert.equal(issues[2]?.message, `names provider 'nope', which is not defined under "providers"`);
});

test('a config that is not an object is one issue at the root', () => {
  assert.deepEqual(checkConfig('{}', { baseDir: dir, env: {} }), [{ code: 'not_object', path: '', message: 'must be an object' }]);
});

test('each provider whose upstream key is missing is its own issue, read from the given env, never from process.env', () => {
  process.env['PORTCULLIS_CHECK_CONFIG_TEST_KEY'] = 'sk-from-process';
  try {
    const issues = checkConfig(
      config({
        a: { type: 'openai', baseUrl: 'https://a.internal/v1', apiKeyEnv: 'PORTCULLIS_CHECK_CONFIG_TEST_KEY' },
        b: { type: 'anthropic', baseUrl: 'https://b.internal/v1', apiKeyEnv: 'B_KEY' },
      }),
      { baseDir: dir, env: { B_KEY: '' } },
    );
    assert.deepEqual(issues, [
      { code: 'missing_credential', path: 'providers.a.apiKeyEnv', message: 'environment variable PORTCULLIS_CHECK_CONFIG_TEST_KEY is not set or empty' },
      { code: 'missing_credential', path: 'providers.b.apiKeyEnv', message: 'environment variable B_KEY is not set or empty' },
    ]);
  } finally {
    delete process.env['PORTCULLIS_CHECK_CONFIG_TEST_KEY'];
  }
});

test('a relative apiKeyFile resolves against baseDir; its contents never appear in an issue', () => {
  writeFileSync(path.join(dir, 'up.key'), 'sk-in-file\n');
  writeFileSync(path.join(dir, 'two-lines.key'), 'sk-one\nsk-two\n');
  assert.deepEqual(checkConfig(config({ up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyFile: 'up.key' } }), { baseDir: dir, env: {} }), []);
  const issues = checkConfig(
    config({
      up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyFile: 'missing.key' },
      two: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyFile: 'two-lines.key' },
    }),
    { baseDir: dir, env: {} },
  );
  assert.deepEqual(issues, [
    { code: 'missing_credential', path: 'providers.up.apiKeyFile', message: `${path.join(dir, 'missing.key')} does not exist` },
    { code: 'missing_credential', path: 'providers.two.apiKeyFile', message: `${path.join(dir, 'two-lines.key')} must hold the key on one line` },
  ]);
  assert.ok(!JSON.stringify(issues).includes('sk-'), 'no key in the issues');
});

test('GatewayConfigError carries the issues and lists them in its message', () => {
  const one = new GatewayConfigError([{ code: 'required', path: 'providers', message: 'is required' }]);
  assert.equal(one.message, 'gateway config: providers: is required');
  assert.equal(one.name, 'GatewayConfigError');
  assert.equal(one.code, 'invalid_config');
  assert.ok(one instanceof Error);
  const two = new GatewayConfigError([
    { code: 'not_object', path: '', message: 'must be an object' },
    { code: 'unknown_setting', path: 'lsiten', message: "unknown setting; did you mean 'listen'?" },
  ]);
  assert.equal(two.message, "gateway config: 2 problems\n  must be an object\n  lsiten: unknown setting; did you mean 'listen'?");
  assert.equal(two.issues.length, 2);
});

test("providerTypes: a host type's provider is checked by its adapter, its missing key reported as for a built-in type", async () => {
  const { parrotAdapter } = await import('./providers-sample-adapter.ts');
  const parrot = (settings: Record<string, unknown>): unknown => config({ p: { type: 'parrot', baseUrl: 'https://parrot.internal/v1', region: 'eu', ...settings } });
  assert.deepEqual(checkConfig(parrot({ apiKeyEnv: 'PARROT_KEY' }), { baseDir: dir, env: { PARROT_KEY: 'pk' }, providerTypes: [parrotAdapter] }), []);
  assert.deepEqual(checkConfig(parrot({ apiKeyEnv: 'PARROT_KEY' }), { baseDir: dir, env: {}, providerTypes: [parrotAdapter] }), [
    { code: 'missing_credential', path: 'providers.p.apiKeyEnv', message: 'environment variable PARROT_KEY is not set or empty' },
  ]);
  assert.deepEqual(
    checkConfig(parrot({}), { baseDir: dir, env: {} }).map((issue) => [issue.code, issue.path]),
    [['not_one_of', 'providers.p.type']],
  );
  assert.throws(() => checkConfig(parrot({}), { baseDir: dir, env: {}, providerTypes: [{ type: 'openai' } as never] }), {
    message: 'providerTypes[0] (type "openai") takes the name of a built-in provider type (openai, anthropic, demo), which cannot be replaced: give it another type name.',
  });
});

test('providerKey: a provider the host source answers needs no apiKeyEnv; undefined or an unusable key leaves the config rules', () => {
  const two = { a: { type: 'openai', baseUrl: 'https://a.internal/v1', apiKeyEnv: 'A_KEY' }, b: { type: 'openai', baseUrl: 'https://b.internal/v1', apiKeyEnv: 'B_KEY' } };
  const asked: string[] = [];
  const issues = checkConfig(config(two), {
    baseDir: dir,
    env: {},
    providerKey: (provider) => {
      asked.push(provider);
      return provider === 'a' ? 'sk-vault' : provider === 'b' ? ' ' : undefined;
    },
  });
  assert.deepEqual(asked, ['a', 'b']);
  assert.deepEqual(issues, [{ code: 'missing_credential', path: 'providers.b.apiKeyEnv', message: 'environment variable B_KEY is not set or empty' }]);
  assert.deepEqual(checkConfig(config(two), { baseDir: dir, env: {}, providerKey: () => undefined }).map((issue) => issue.path), ['providers.a.apiKeyEnv', 'providers.b.apiKeyEnv']);
  assert.deepEqual(checkConfig(config(two), { baseDir: dir, env: {}, providerKey: () => 'sk-vault' }), []);
});

describe('TLS listener files: checkConfig and createGateway give the same one list', () => {
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const tls = (name: string): Record<string, string> => ({ certFile: `${name}-cert.pem`, keyFile: `${name}-key.pem` });
  const missing = (at: string, name: string, file: 'cert' | 'key'): ConfigIssue => ({
    code: 'invalid_tls_file',
    path: `${at}.${file}File`,
    message: `${path.join(dir, `${name}-${file}.pem`)} does not exist`,
  });
  async function refusal(value: unknown): Promise<readonly ConfigIssue[]> {
    const err: unknown = await createGateway({ config: value, baseDir: dir, env: {}, logger: quiet }).then(
      async (gateway) => {
        await gateway.close();
        return null;
      },
      (error: unknown) => error,
    );
    assert.ok(err instanceof GatewayConfigError, `createGateway refuses the config (got ${String(err)})`);
    return err.issues;
  }

  test("listen.tls's missing certificate and key are issues of checkConfig, as createGateway refuses them", async () => {
    const value = { ...(config({ local: { type: 'demo' } }) as object), listen: { tls: tls('api') } };
    const expected = [missing('listen.tls', 'api', 'cert'), missing('listen.tls', 'api', 'key')];
    assert.deepEqual(checkConfig(value, { baseDir: dir, env: {} }), expected);
    assert.deepEqual(await refusal(value), expected);
  });

  test('listener files and a missing upstream key come in one list from both; admin.tls counts only with the admin listener enabled', async () => {
    const providers = { up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyEnv: 'UP_KEY' } };
    const value = (adminEnabled: boolean): unknown => ({ ...(config(providers) as object), listen: { tls: tls('api') }, admin: { enabled: adminEnabled, tls: tls('admin') } });
    const key: ConfigIssue = { code: 'missing_credential', path: 'providers.up.apiKeyEnv', message: 'environment variable UP_KEY is not set or empty' };
    const api = [missing('listen.tls', 'api', 'cert'), missing('listen.tls', 'api', 'key')];
    const admin = [missing('admin.tls', 'admin', 'cert'), missing('admin.tls', 'admin', 'key')];
    assert.deepEqual(checkConfig(value(true), { baseDir: dir, env: {} }), [...api, ...admin, key]);
    assert.deepEqual(await refusal(value(true)), [...api, ...admin, key]);
    assert.deepEqual(checkConfig(value(false), { baseDir: dir, env: {} }), [...api, key]);
    assert.deepEqual(await refusal(value(false)), [...api, key]);
  });
});
