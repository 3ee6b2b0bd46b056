// The provider settings Azure OpenAI needs: a query in baseUrl (api-version)
// kept as written, and apiKeyHeader for its `api-key` header. Every refusal
// names the setting and says what to write instead; none quotes a value that
// could be a secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OpenAIProviderConfig, ProviderConfig } from '../../src/config/config.ts';
import { Checker } from '../../src/config/config-checker.ts';
import type { ConfigIssue } from '../../src/config/config-issues.ts';
import { parseProvider } from '../../src/config/provider-types.ts';

function parse(value: Record<string, unknown>): { config: ProviderConfig | undefined; issues: ConfigIssue[] } {
  const c = new Checker('f.json');
  return { config: parseProvider(c, value, 'providers.azure'), issues: c.issues };
}

function openai(settings: Record<string, unknown>): { config: OpenAIProviderConfig; issues: ConfigIssue[] } {
  const { config, issues } = parse({ type: 'openai', apiKeyEnv: 'AZURE_OPENAI_API_KEY', ...settings });
  assert.equal(config?.type, 'openai');
  return { config: config as OpenAIProviderConfig, issues };
}

/** Exactly one issue, at `path`, whose message matches `message`. */
function refused(settings: Record<string, unknown>, path: string, code: ConfigIssue['code'], message: RegExp): ConfigIssue {
  const { issues } = openai(settings);
  assert.equal(issues.length, 1, JSON.stringify(issues));
  const [issue] = issues as [ConfigIssue];
  assert.equal(issue.path, path);
  assert.equal(issue.code, code);
  assert.match(issue.message, message);
  return issue;
}

const CLASSIC = 'https://my-resource.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21';

test('the classic Azure deployment URL: its query is kept, the key goes in api-key', () => {
  const { config, issues } = openai({ baseUrl: CLASSIC, apiKeyHeader: 'api-key' });
  assert.deepEqual(issues, []);
  assert.equal(config.baseUrl, CLASSIC);
  assert.equal(config.apiKeyHeader, 'api-key');
});

test('the v1 Azure URL, with and without api-version=preview', () => {
  for (const baseUrl of ['https://my-resource.openai.azure.com/openai/v1', 'https://my-resource.openai.azure.com/openai/v1/?api-version=preview']) {
    const { config, issues } = openai({ baseUrl, apiKeyHeader: 'api-key' });
    assert.deepEqual(issues, [], baseUrl);
    assert.equal(config.baseUrl, baseUrl.replace('/?', '?'));
  }
});

test('trailing slashes leave the path; the query stays as written', () => {
  assert.equal(openai({ baseUrl: 'https://h/openai/deployments/d//?api-version=2024-10-21&x=a/' }).config.baseUrl, 'https://h/openai/deployments/d?api-version=2024-10-21&x=a/');
  assert.equal(openai({ baseUrl: 'http://127.0.0.1:8000/v1/' }).config.baseUrl, 'http://127.0.0.1:8000/v1');
});

test('apiKeyHeader: default Authorization, any case, stored lower case', () => {
  assert.equal(openai({ baseUrl: 'https://h/v1' }).config.apiKeyHeader, 'authorization');
  assert.equal(openai({ baseUrl: 'https://h/v1', apiKeyHeader: 'Authorization' }).config.apiKeyHeader, 'authorization');
  assert.equal(openai({ baseUrl: 'https://h/v1', apiKeyHeader: 'Ocp-Apim-Subscription-Key' }).config.apiKeyHeader, 'ocp-apim-subscription-key');
  assert.equal(openai({ baseUrl: 'https://h/v1', apiKeyEnv: undefined, apiKeyFile: '/run/key', apiKeyHeader: 'api-key' }).issues.length, 0);
});

test('a fragment is refused, even an empty one', () => {
  refused({ baseUrl: `${CLASSIC}#x` }, 'providers.azure.baseUrl', 'invalid_value', /fragment \('#\.\.\.'\)/);
  refused({ baseUrl: 'https://h/v1#' }, 'providers.azure.baseUrl', 'invalid_value', /fragment/);
});

test('an empty query, an empty, nameless or valueless parameter, and a repeated one are refused', () => {
  refused({ baseUrl: 'https://h/v1?' }, 'providers.azure.baseUrl', 'invalid_value', /empty query: remove the '\?'/);
  for (const query of ['a=1&&b=2', 'a=1&', '&a=1']) {
    refused({ baseUrl: `https://h/v1?${query}` }, 'providers.azure.baseUrl', 'invalid_value', /empty query parameter/);
  }
  const nameless = refused({ baseUrl: 'https://h/v1?=hunter2' }, 'providers.azure.baseUrl', 'invalid_value', /without a name/);
  assert.ok(!nameless.message.includes('hunter2'), 'the value is not quoted');
  refused({ baseUrl: 'https://h/v1?api-version=' }, 'providers.azure.baseUrl', 'invalid_value', /without a value \('api-version'\); write api-version=VALUE/);
  refused({ baseUrl: 'https://h/v1?api-version' }, 'providers.azure.baseUrl', 'invalid_value', /without a value/);
  refused({ baseUrl: 'https://h/v1?api-version=2024-10-21&api-version=2025-01-01' }, 'providers.azure.baseUrl', 'invalid_value', /'api-version' twice/);
  refused({ baseUrl: 'https://h/v1?api%2Dversion=1&api-version=2' }, 'providers.azure.baseUrl', 'invalid_value', /'api-version' twice/);
});

test('a secret in the query is refused, pointing to the key settings and apiKeyHeader', () => {
  for (const name of ['api-key', 'api_key', 'apiKey', 'key', 'access_token', 'token', 'sig', 'subscription-key', 'Subscription-Key', 'x-api-key', 'sessionToken', 'code']) {
    const issue = refused({ baseUrl: `https://h/v1?api-version=2024-10-21&${name}=sk-very-secret` }, 'providers.azure.baseUrl', 'invalid_value', /must not carry a secret/);
    assert.match(issue.message, new RegExp(`query parameter '${name}'`));
    assert.match(issue.message, /apiKeyEnv or apiKeyFile, and apiKeyHeader .*"apiKeyHeader": "api-key"/);
    assert.ok(!issue.message.includes('sk-very-secret'), 'the value is not quoted');
  }
  // Not a secret by its name: kept.
  assert.deepEqual(openai({ baseUrl: 'https://h/v1?api-version=2024-10-21&keyword=x&monkey=1' }).issues, []);
});

test('anthropic refuses a secret in the query too, in its own words', () => {
  const { issues } = parse({ type: 'anthropic', baseUrl: 'https://proxy/v1?x-api-key=sk' });
  assert.equal(issues.length, 1);
  assert.match(issues[0]?.message ?? '', /must not carry a secret: .*x-api-key header/);
  assert.deepEqual(parse({ type: 'anthropic', baseUrl: 'https://proxy/v1?beta=true' }).issues, []);
});

test('an Azure deployment path without api-version is refused with an example', () => {
  refused(
    { baseUrl: 'https://r.openai.azure.com/openai/deployments/gpt-4o' },
    'providers.azure.baseUrl',
    'invalid_value',
    /Azure OpenAI deployment path, which needs an api-version query, e\.g\. "\?api-version=2024-10-21"/,
  );
  refused({ baseUrl: 'https://r.openai.azure.com/openai/deployments/gpt-4o/?foo=bar' }, 'providers.azure.baseUrl', 'invalid_value', /needs an api-version/);
});

test('a baseUrl that already ends with the endpoint is refused', () => {
  refused({ baseUrl: `https://r.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21` }, 'providers.azure.baseUrl', 'invalid_value', /ends with \/chat\/completions, which the gateway appends itself/);
  const { issues } = parse({ type: 'anthropic', baseUrl: 'https://api.anthropic.com/v1/messages' });
  assert.match(issues[0]?.message ?? '', /ends with \/messages/);
});

test('apiKeyHeader refusals name the setting', () => {
  refused({ baseUrl: 'https://h/v1', apiKeyHeader: 'api key' }, 'providers.azure.apiKeyHeader', 'invalid_value', /HTTP header name, e\.g\. "api-key"/);
  refused({ baseUrl: 'https://h/v1', apiKeyHeader: '' }, 'providers.azure.apiKeyHeader', 'not_string', /non-empty string/);
  refused({ baseUrl: 'https://h/v1', apiKeyHeader: 'Content-Type' }, 'providers.azure.apiKeyHeader', 'reserved', /sets itself/);
  refused({ baseUrl: 'https://h/v1', apiKeyEnv: undefined, apiKeyHeader: 'api-key' }, 'providers.azure.apiKeyHeader', 'conflict', /no key is configured: set apiKeyEnv or apiKeyFile/);
  refused(
    { baseUrl: 'https://h/v1', apiKeyHeader: 'api-key', headers: { 'Api-Key': 'sk-in-the-file' } },
    'providers.azure.headers.Api-Key',
    'conflict',
    /apiKeyHeader sends the upstream key in; the key comes from apiKeyEnv or apiKeyFile/,
  );
  // anthropic has a fixed key header.
  const { issues } = parse({ type: 'anthropic', apiKeyEnv: 'K', apiKeyHeader: 'api-key' });
  assert.deepEqual(issues.map((i) => [i.code, i.path]), [['unknown_setting', 'providers.azure.apiKeyHeader']]);
});
