import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AliasConfig, AutoRule } from '../../src/config/config.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { InvalidRequestError, ModelNotFoundError } from '../../src/errors/api-error.ts';
import { validateChatRequest } from '../../src/chat/request-validator.ts';
import { reserveRequest } from '../../src/limits/reservation.ts';
import { listAliases, requestFeatures, resolveAlias } from '../../src/routing/alias-routing.ts';
import { countReads } from '../support/read-count.ts';

const alias = (over: Partial<AliasConfig> = {}): AliasConfig => ({
  kind: 'chat',
  targets: [{ provider: 'p', model: 'm', weight: 1, priority: 0, price: null, acceptsDimensions: false, maxInputsPerCall: null }],
  maxOutputTokens: null,
  contextWindow: null,
  capabilities: [],
  requestFields: null,
  guard: null,
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

test('service-auto: the prompt bound against context windows', () => {
  // The bound: 64 + (8 + "user" 4 + content bytes) + tools JSON 45 + 1000 = 3121: over service-tools' 2048, under service-chat's 4096.
  const long = 'x'.repeat(2000);
  const r = resolveAlias(hi({ messages: [{ role: 'user', content: long }], tools }), config);
  assert.deepEqual([r.alias, r.reason, r.skipped], ['service-chat', 'default', ['service-tools:context_window']]);
  const huge = 'x'.repeat(80_000);
  const h = resolveAlias(hi({ messages: [{ role: 'user', content: huge }] }), config);
  assert.deepEqual([h.alias, h.reason], ['service-long', 'prompt_tokens']);
  // 64 + 8 + 4 + 4500 = 4576: over service-chat's window, under the 5000 rule.
  const mid = 'x'.repeat(4500);
  const m = resolveAlias(hi({ messages: [{ role: 'user', content: mid }] }), config);
  assert.deepEqual([m.alias, m.reason, m.skipped], ['service-vision', 'context_window', ['service-chat:context_window']]);
});

test('service-auto: the window and minPromptTokens are compared at the exact bound, and images at each alias\'s imageTokens', () => {
  const exact = alias({ contextWindow: 4096 });
  const at = (contextWindow: number, imageTokens: number) => ({
    aliases: { 'service-chat': alias(), 'service-small': alias({ contextWindow, imageTokens }), 'service-long': exact },
    auto: { default: 'service-chat', rules: [{ when: { images: true }, use: 'service-small', reason: 'image_url' }, { when: { minPromptTokens: 4020 }, use: 'service-long', reason: 'prompt_tokens' }] },
  });
  // 64 + (8 + 4 + ("text" 4 + "what" 4)) = 84, plus imageTokens for the image part.
  const pick = (contextWindow: number, imageTokens: number) => {
    const r = resolveAlias(hi({ messages: [image] }), at(contextWindow, imageTokens));
    return [r.alias, r.reason];
  };
  assert.deepEqual(pick(2085, 2000), ['service-small', 'image_url']);
  assert.deepEqual(pick(2084, 2000), ['service-chat', 'default']);
  assert.deepEqual(pick(2085, 2001), ['service-chat', 'default']);
  // minPromptTokens holds from the bound up: 64 + 8 + 4 + 3944 = 4020.
  const long = (n: number) => resolveAlias(hi({ messages: [{ role: 'user', content: 'x'.repeat(n) }] }), at(100_000, 1)).alias;
  assert.equal(long(3944), 'service-long');
  assert.equal(long(3943), 'service-chat');
});

test('service-auto compares the prompt the reservation counts, from the bound the validator carried', () => {
  const body = { model: 'service-auto', messages: [{ role: 'user', content: '漢'.repeat(1000) }, image], tools };
  const request = validateChatRequest(body);
  // 64 + (8 + 4 + 3000) + (8 + 4 + 4 + 4) + 45 + 1000 = 4141 and one image part.
  assert.deepEqual(request.promptBound, { tokens: 4141, imageParts: 1 });
  assert.deepEqual(requestFeatures(request).prompt, { tokens: 4141, imageParts: 1 });
  const r = resolveAlias(request, config);
  assert.deepEqual([r.alias, r.reason], ['service-vision', 'image_url']);
  assert.equal(reserveRequest(request, 0, r.config, []).promptTokens, 4141 + 2000);
  // The bound is not enumerable: never forwarded, never part of a comparison.
  assert.equal(JSON.stringify(request).includes('promptBound'), false);
  assert.deepEqual(Object.keys(request), ['model', 'messages', 'tools']);
  // Routing reads the carried bound, not the messages.
  const reads = countReads(request, 'messages');
  assert.equal(resolveAlias(request, config).alias, 'service-vision');
  assert.equal(reads.count, 0);
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
  // A request not from the validator has its bound measured: 64 + (8 + 4 + 4 + 4) + 45 + 1000.
  assert.deepEqual(requestFeatures(hi({ stream: true, tools, messages: [image] })), {
    images: true,
    tools: true,
    jsonObject: false,
    stream: true,
    prompt: { tokens: 1129, imageParts: 1 },
  });
  assert.equal(requestFeatures(hi({ tools: [] })).tools, false);
});

test('the listing holds every alias and service-auto last', () => {
  assert.deepEqual(listAliases(config), ['service-chat', 'service-vision', 'service-tools', 'service-long', 'service-auto']);
});

test("service-auto sends a request only to an alias that takes every field beyond the contract's table it carries", () => {
  const fielded = {
    aliases: {
      'service-chat': alias(),
      'service-vision': alias({ capabilities: ['vision'], requestFields: ['user'] }),
      'service-json': alias({ requestFields: ['json_schema', 'user'] }),
    },
    auto: { default: 'service-chat', rules: [{ when: { images: true }, use: 'service-vision', reason: 'image_url' }] },
    requestFields: ['seed' as const],
  };
  const route = (req: ChatRequest, available: (a: string) => boolean = () => true) => {
    const r = resolveAlias(req, fielded, available);
    return [r.alias, r.reason, r.skipped];
  };
  // The default takes the top level's seed.
  assert.deepEqual(route(hi({ seed: 1 })), ['service-chat', 'default', []]);
  // user: the rule's alias takes it; without images the default does not, so the first that does.
  assert.deepEqual(route(hi({ user: 'u', messages: [image] })), ['service-vision', 'image_url', []]);
  assert.deepEqual(route(hi({ user: 'u' })), ['service-vision', 'request_fields', ['service-chat:request_fields']]);
  const schema = { type: 'json_schema' as const, json_schema: { name: 'x' } };
  assert.deepEqual(route(hi({ response_format: schema, messages: [image] })), ['service-json', 'request_fields', ['service-vision:request_fields', 'service-chat:request_fields']]);
  // Fields decide, breakers only prefer: with every breaker open the alias that takes the fields is still chosen.
  assert.deepEqual(route(hi({ response_format: schema }), () => false), ['service-json', 'request_fields', ['service-chat:request_fields', 'service-vision:request_fields', 'service-json:circuit_open']]);
  // No alias takes seed and user together.
  assert.throws(
    () => resolveAlias(hi({ seed: 1, user: 'u' }), fielded),
    (err: unknown) =>
      err instanceof InvalidRequestError &&
      err.param === 'user' &&
      err.code === 'unknown_parameter' &&
      err.message ===
        `Unsupported parameter: 'user' is not accepted for model 'service-auto'. The gateway's operator can accept it by adding "user" to "aliases.service-chat.requestFields" or "requestFields" in the gateway's config.`,
  );
  // A default with a list of its own: the top level's would not reach it, so only its own is named.
  const own = { ...fielded, aliases: { ...fielded.aliases, 'service-chat': alias({ requestFields: ['seed'] }) } };
  assert.throws(
    () => resolveAlias(hi({ seed: 1, user: 'u' }), own),
    (err: unknown) =>
      err instanceof InvalidRequestError &&
      err.message === `Unsupported parameter: 'user' is not accepted for model 'service-auto'. The gateway's operator can accept it by adding "user" to "aliases.service-chat.requestFields" in the gateway's config.`,
  );
});
