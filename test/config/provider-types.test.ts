import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProviderConfig } from '../../src/config/config.ts';
import { Checker } from '../../src/config/config-checker.ts';
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, DEFAULT_ANTHROPIC_BETAS, DEFAULT_POLICY, DEFAULT_TIMEOUT_MS } from '../../src/config/provider-defaults.ts';
import {
  parseProvider,
  PROVIDER_TYPE_NAMES,
  PROVIDER_TYPES,
  providerCredentials,
  providerNotices,
} from '../../src/config/provider-types.ts';
import { createProviderBinding } from '../../src/providers/provider-factories.ts';

function parse(value: unknown): { config: ProviderConfig | undefined; issues: Checker['issues'] } {
  const c = new Checker('f.json');
  return { config: parseProvider(c, value, 'providers.p'), issues: c.issues };
}

test('the table knows openai, anthropic and demo, each with the settings it accepts', () => {
  assert.deepEqual(PROVIDER_TYPE_NAMES, ['openai', 'anthropic', 'demo']);
  assert.ok(PROVIDER_TYPES.openai.settings.includes('maxTokensParam'));
  assert.ok(!PROVIDER_TYPES.openai.settings.includes('version'));
  assert.ok(PROVIDER_TYPES.anthropic.settings.includes('version'));
  assert.deepEqual(PROVIDER_TYPES.demo.settings, ['delayMs', 'tokenCount']);
});

test('each type fills its defaults from one place', () => {
  assert.deepEqual(parse({ type: 'demo' }), { config: { type: 'demo', delayMs: 0 }, issues: [] });
  assert.deepEqual(parse({ type: 'anthropic' }).config, {
    type: 'anthropic',
    baseUrl: ANTHROPIC_BASE_URL,
    apiKeyEnv: null,
    apiKeyFile: null,
    headers: {},
    policy: DEFAULT_POLICY,
    transport: null,
    tls: null,
    proxy: null,
    version: ANTHROPIC_VERSION,
    messagesPassthrough: [],
    anthropicBetas: [...DEFAULT_ANTHROPIC_BETAS],
  });
  assert.equal(DEFAULT_POLICY.timeoutMs, DEFAULT_TIMEOUT_MS);
});

test('a missing or unknown type is one problem; the other settings are not judged against a guess', () => {
  assert.deepEqual(parse({ baseUrl: 'x', whatever: 1 }), {
    config: undefined,
    issues: [{ code: 'not_one_of', path: 'providers.p.type', message: 'must be "openai", "anthropic" or "demo"' }],
  });
  assert.deepEqual(parse('openai'), { config: undefined, issues: [{ code: 'not_object', path: 'providers.p', message: 'must be an object' }] });
});

test('a type collects every problem of its own settings', () => {
  assert.deepEqual(parse({ type: 'demo', delayMs: -1, delay: 5 }).issues, [
    { code: 'unknown_setting', path: 'providers.p.delay', message: "unknown setting; did you mean 'delayMs'?" },
    { code: 'not_integer', path: 'providers.p.delayMs', message: 'must be an integer from 0 to 10000' },
  ]);
  assert.deepEqual(parse({ type: 'openai', baseUrl: 'ftp://h', maxTokensParam: 'tokens', headers: { Host: 'x' } }).issues, [
    { code: 'invalid_value', path: 'providers.p.baseUrl', message: 'must be an absolute http:// or https:// URL' },
    { code: 'reserved', path: 'providers.p.headers.Host', message: 'is set by the gateway itself and cannot be configured' },
    { code: 'not_one_of', path: 'providers.p.maxTokensParam', message: 'must be "max_tokens" or "max_completion_tokens"' },
  ]);
});

test('credentials, start notices and the factory come from the table', () => {
  const openai = parse({ type: 'openai', baseUrl: 'http://h/v1', apiKeyEnv: 'UP_KEY', maxTokensParam: 'max_completion_tokens' }).config as ProviderConfig;
  const demo = parse({ type: 'demo' }).config as ProviderConfig;
  assert.deepEqual(providerCredentials(openai), { apiKeyEnv: 'UP_KEY', apiKeyFile: null });
  assert.equal(providerCredentials(demo), null);
  assert.deepEqual(providerNotices([openai, demo, demo]), ['provider "demo" is a built-in demo that echoes your prompt; it is not a language model.']);
  assert.deepEqual(providerNotices([openai]), []);
  const binding = createProviderBinding(openai, 'sk-x');
  assert.equal(binding.maxTokensParam, 'max_completion_tokens');
  assert.deepEqual(binding.policy, DEFAULT_POLICY);
  assert.equal(binding.provider.kind, 'http');
  const demoBinding = createProviderBinding(demo, undefined);
  assert.deepEqual({ maxTokensParam: demoBinding.maxTokensParam, policy: demoBinding.policy }, { maxTokensParam: 'max_tokens', policy: null });
});

test('tokenCount: each type takes its own methods; another type\'s method says which type it needs', () => {
  assert.equal((parse({ type: 'openai', baseUrl: 'http://h/v1', tokenCount: 'vllm' }).config as { tokenCount?: string }).tokenCount, 'vllm');
  assert.equal((parse({ type: 'openai', baseUrl: 'http://h/v1', tokenCount: 'llamacpp' }).config as { tokenCount?: string }).tokenCount, 'llamacpp');
  assert.equal((parse({ type: 'anthropic', tokenCount: 'estimate' }).config as { tokenCount?: string }).tokenCount, 'estimate');
  assert.deepEqual(parse({ type: 'demo', tokenCount: 'estimate' }), { config: { type: 'demo', delayMs: 0, tokenCount: 'estimate' }, issues: [] });
  // Not set: absent, and the factory takes the type's default (anthropic counts upstream, the others estimate).
  assert.equal('tokenCount' in (parse({ type: 'anthropic' }).config as object), false);
  const counterOf = (settings: Record<string, unknown>): string | undefined => {
    const provider = createProviderBinding(parse(settings).config as ProviderConfig, 'k').provider;
    return provider.kind === 'http' ? provider.tokenCounter?.method : undefined;
  };
  assert.equal(counterOf({ type: 'anthropic' }), 'anthropic');
  assert.equal(counterOf({ type: 'anthropic', tokenCount: 'estimate' }), undefined);
  assert.equal(counterOf({ type: 'openai', baseUrl: 'http://h/v1' }), undefined);
  assert.equal(counterOf({ type: 'openai', baseUrl: 'http://h/v1', tokenCount: 'llamacpp' }), 'llamacpp');

  assert.deepEqual(parse({ type: 'anthropic', tokenCount: 'vllm' }).issues, [
    { code: 'invalid_value', path: 'providers.p.tokenCount', message: '"vllm" counts tokens with a provider of type openai; for type anthropic use "anthropic" or "estimate"' },
  ]);
  assert.deepEqual(parse({ type: 'openai', baseUrl: 'http://h/v1', tokenCount: 'anthropic' }).issues, [
    { code: 'invalid_value', path: 'providers.p.tokenCount', message: '"anthropic" counts tokens with a provider of type anthropic; for type openai use "vllm", "llamacpp" or "estimate"' },
  ]);
  assert.deepEqual(parse({ type: 'demo', tokenCount: 'llamacpp' }).issues, [
    { code: 'invalid_value', path: 'providers.p.tokenCount', message: '"llamacpp" counts tokens with a provider of type openai; for type demo use "estimate"' },
  ]);
  assert.deepEqual(parse({ type: 'openai', baseUrl: 'http://h/v1', tokenCount: 'tiktoken' }).issues, [
    { code: 'not_one_of', path: 'providers.p.tokenCount', message: 'must be "vllm", "llamacpp" or "estimate"' },
  ]);
  assert.deepEqual(parse({ type: 'anthropic', tokenCount: true }).issues, [
    { code: 'not_one_of', path: 'providers.p.tokenCount', message: 'must be "anthropic" or "estimate"' },
  ]);
});
