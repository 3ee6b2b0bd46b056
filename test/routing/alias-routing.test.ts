import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AliasConfig, AutoRule } from '../../src/config/config.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { ModelNotFoundError } from '../../src/errors/api-error.ts';
import { listAliases, requestFeatures, resolveAlias } from '../../src/routing/alias-routing.ts';

const alias = (over: Partial<AliasConfig> = {}): AliasConfig => ({
  targets: [{ provider: 'p', model: 'm', weight: 1, priority: 0, price: null }],
  maxOutputTokens: null,
  contextWindow: null,
  capabilities: [],
  price: null,
  imageTokens: 2000,
  ...over,
});
const rules: AutoRule[] = [
  { when: { images: true }, use: 'service-vision', reason: 'image_url' },
  { when: { tools: true }, use: 'service-tools', reason: 'tools' },
  { when: { jsonObject: true }, use: 'service-tools', reason: 'json_object' },
  { when: { minPromptTokens: 5000 }, use: 'service-long', reason: 'prompt_tokens' },
];
const config = {
  aliases: {
    'service-chat': alias({ contextWindow: 4096 }),
    'service-vision': alias({ capabilities: ['vision'] }),
    'service-tools': alias({ contextWindow: 2048 }),
    'service-long': alias({ contextWindow: 200_000 }),
  },
  auto: { default: 'service-chat', rules },
};
const hi = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'service-auto', messages: [{ role: 'user', content: 'hi' }], ...extra });
const image = { role: 'user' as const, content: [{ type: 'text' as const, text: 'what' }, { type: 'image_url' as const, image_url: { url: 'https://i.test/a.png' } }] };
const tools = [{ type: 'function' as const, function: { name: 'f' } }];

test('a named alias resolves to itself', () => {
  const r = resolveAlias(hi({ model: 'service-chat' }), config);
  assert.deepEqual(r, { alias: 'service-chat', config: config.aliases['service-chat'], reason: 'requested', skipped: [] });
});

test('an unknown alias is 404 model_not_found; prototype names are not aliases', () => {
  for (const model of ['gpt-4o', 'constructor', '__proto__', 'toString']) {
    assert.throws(
      () => resolveAlias(hi({ model }), config),
      (err: unknown) => err instanceof ModelNotFoundError && err.status === 404 && err.code === 'model_not_found' && err.param === 'model',
    );
  }
});

test('service-auto: each rule by its feature, else the default; never itself', () => {
  const pick = (req: ChatRequest) => {
    const r = resolveAlias(req, config);
    return [r.alias, r.reason];
  };
  assert.deepEqual(pick(hi()), ['service-chat', 'default']);
  assert.deepEqual(pick(hi({ messages: [image] })), ['service-vision', 'image_url']);
  assert.deepEqual(pick(hi({ tools })), ['service-tools', 'tools']);
  assert.deepEqual(pick(hi({ response_format: { type: 'json_object' } })), ['service-tools', 'json_object']);
  assert.deepEqual(pick(hi({ response_format: { type: 'text' } })), ['service-chat', 'default']);
  // Rules are tried in order: images win over tools.
  assert.deepEqual(pick(hi({ messages: [image], tools })), ['service-vision', 'image_url']);
});

test('service-auto: prompt size against context windows', () => {
  const long = 'x'.repeat(4 * 3000); // ~3000 tokens: over service-tools' 2048, under service-chat's 4096
  const r = resolveAlias(hi({ messages: [{ role: 'user', content: long }], tools }), config);
  assert.deepEqual([r.alias, r.reason, r.skipped], ['service-chat', 'default', ['service-tools:context_window']]);
  const huge = 'x'.repeat(4 * 20_000);
  const h = resolveAlias(hi({ messages: [{ role: 'user', content: huge }] }), config);
  assert.deepEqual([h.alias, h.reason], ['service-long', 'prompt_tokens']);
  const mid = 'x'.repeat(4 * 4500); // over service-chat's window, under the 5000 rule
  const m = resolveAlias(hi({ messages: [{ role: 'user', content: mid }] }), config);
  assert.deepEqual([m.alias, m.reason, m.skipped], ['service-vision', 'context_window', ['service-chat:context_window']]);
});

test('service-auto: an alias whose targets are all circuit-open is skipped', () => {
  const down = new Set(['service-vision']);
  const r = resolveAlias(hi({ messages: [image] }), config, (a) => !down.has(a));
  assert.deepEqual([r.alias, r.reason, r.skipped], ['service-chat', 'default', ['service-vision:circuit_open']]);
  down.add('service-chat');
  const both = resolveAlias(hi(), config, (a) => !down.has(a));
  assert.deepEqual([both.alias, both.reason], ['service-tools', 'context_window']);
  const all = resolveAlias(hi(), config, () => false);
  assert.deepEqual([all.alias, all.reason], ['service-chat', 'default']);
});

test('request features', () => {
  assert.deepEqual(requestFeatures(hi({ stream: true, tools, messages: [image] })), {
    images: true,
    tools: true,
    jsonObject: false,
    stream: true,
    promptTokens: requestFeatures(hi({ stream: true, tools, messages: [image] })).promptTokens,
  });
  assert.equal(requestFeatures(hi({ tools: [] })).tools, false);
});

test('the listing holds every alias and service-auto last', () => {
  assert.deepEqual(listAliases(config), ['service-chat', 'service-vision', 'service-tools', 'service-long', 'service-auto']);
});
