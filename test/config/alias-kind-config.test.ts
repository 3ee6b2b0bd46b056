// Aliases of kind "embeddings" in the config: their settings, what they
// inherit, the settings of the other kind, anthropic targets, service-auto
// naming chat aliases only, and openai's embeddingsEncoding. Each problem is
// checked exactly: its code, its path and what to write instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, type GatewayConfig } from '../../src/config/config.ts';
import type { ConfigIssue } from '../../src/config/config-issues.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { DEFAULT_MAX_INPUTS_PER_CALL } from '../../src/config/provider-defaults.ts';
import { mixedEmbeddingsModels } from '../../src/config/alias-kind-config.ts';

const providers = {
  d: { type: 'demo' },
  oa: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyEnv: 'OA_KEY' },
  claude: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
};
const chat = { 'service-chat': { provider: 'd' } };

function parse(value: Record<string, unknown>): GatewayConfig {
  return parseConfig({ providers, ...value }, 'f.json', '/tmp');
}

function issues(value: Record<string, unknown>): ConfigIssue[] {
  try {
    parse(value);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  assert.fail('the config parsed');
}

test('an embeddings alias: its kind, its targets with the embeddings settings resolved, chat settings at their defaults', () => {
  const c = parse({
    aliases: {
      ...chat,
      'text-embed': {
        kind: 'embeddings',
        acceptsDimensions: true,
        maxInputsPerCall: 96,
        price: { input: 0.02 },
        targets: [
          { provider: 'oa', model: 'text-embedding-3-small' },
          { provider: 'oa', model: 'bge-m3', acceptsDimensions: false, maxInputsPerCall: 32, priority: 1 },
          { provider: 'd', priority: 2 },
        ],
      },
    },
  });
  assert.deepEqual(c.aliases['text-embed'], {
    kind: 'embeddings',
    targets: [
      { provider: 'oa', model: 'text-embedding-3-small', weight: 1, priority: 0, price: { input: 0.02, cachedInput: 0.02, output: 0 }, acceptsDimensions: true, maxInputsPerCall: 96 },
      { provider: 'oa', model: 'bge-m3', weight: 1, priority: 1, price: { input: 0.02, cachedInput: 0.02, output: 0 }, acceptsDimensions: false, maxInputsPerCall: 32 },
      { provider: 'd', model: 'text-embed', weight: 1, priority: 2, price: { input: 0.02, cachedInput: 0.02, output: 0 }, acceptsDimensions: true, maxInputsPerCall: 96 },
    ],
    maxOutputTokens: null,
    contextWindow: null,
    capabilities: [],
    price: { input: 0.02, cachedInput: 0.02, output: 0 },
    imageTokens: 2000,
    requestFields: null,
    guard: null,
  });
  assert.equal(c.aliases['service-chat']?.kind, 'chat');
});

test('defaults: dimensions only to demo targets, maxInputsPerCall null (the provider type decides), demo free', () => {
  const c = parse({ aliases: { ...chat, e: { kind: 'embeddings', targets: [{ provider: 'oa' }, { provider: 'd' }] } } });
  assert.deepEqual(
    c.aliases['e']?.targets.map((t) => [t.provider, t.acceptsDimensions, t.maxInputsPerCall, t.price]),
    [
      ['oa', false, null, null],
      ['d', true, null, { input: 0, cachedInput: 0, output: 0 }],
    ],
  );
  // The single-target form takes the alias's settings as the target's.
  const single = parse({ aliases: { ...chat, e: { kind: 'embeddings', provider: 'oa', acceptsDimensions: true, maxInputsPerCall: 2048 } } });
  assert.deepEqual(single.aliases['e']?.targets.map((t) => [t.acceptsDimensions, t.maxInputsPerCall]), [[true, 2048]]);
  // A chat alias's targets carry the embeddings settings at their neutral values.
  assert.deepEqual(c.aliases['service-chat']?.targets.map((t) => [t.acceptsDimensions, t.maxInputsPerCall]), [[false, null]]);
  assert.deepEqual(DEFAULT_MAX_INPUTS_PER_CALL, { openai: 512, demo: 2048 });
});

test('kind must be "chat" or "embeddings"; a wrong one drags no problem about the settings of either kind along', () => {
  assert.deepEqual(issues({ aliases: { ...chat, e: { kind: 'embedding', provider: 'd' } } }), [
    { code: 'not_one_of', path: 'aliases.e.kind', message: 'must be "chat" or "embeddings"' },
  ]);
  assert.deepEqual(issues({ aliases: { ...chat, e: { kind: 'embedding', acceptsDimensions: true, targets: [{ provider: 'd', maxInputsPerCall: 8 }] } } }), [
    { code: 'not_one_of', path: 'aliases.e.kind', message: 'must be "chat" or "embeddings"' },
  ]);
});

test('chat settings on an embeddings alias: each named, with what to do instead', () => {
  const message = 'is a chat setting; an alias with "kind": "embeddings" does not take it: remove it, or give the chat model an alias of its own';
  assert.deepEqual(
    issues({
      aliases: {
        ...chat,
        e: { kind: 'embeddings', provider: 'd', maxOutputTokens: 10, contextWindow: 8192, capabilities: ['vision'], imageTokens: 10, requestFields: ['seed'] },
      },
    }),
    ['maxOutputTokens', 'contextWindow', 'capabilities', 'imageTokens', 'requestFields'].map((name) => ({ code: 'conflict', path: `aliases.e.${name}`, message })),
  );
});

test('embeddings settings on a chat alias or its targets: each named, with the kind to set', () => {
  const message = 'is an embeddings setting: add "kind": "embeddings" to this alias if it serves embeddings, else remove it';
  assert.deepEqual(
    issues({ aliases: { 'service-chat': { acceptsDimensions: true, maxInputsPerCall: 8, targets: [{ provider: 'd', maxInputsPerCall: 4 }, { provider: 'd', acceptsDimensions: false }] } } }),
    [
      { code: 'conflict', path: 'aliases.service-chat.acceptsDimensions', message },
      { code: 'conflict', path: 'aliases.service-chat.maxInputsPerCall', message },
      { code: 'conflict', path: 'aliases.service-chat.targets[0].maxInputsPerCall', message },
      { code: 'conflict', path: 'aliases.service-chat.targets[1].acceptsDimensions', message },
    ],
  );
});

test('embeddings settings are checked at each level', () => {
  assert.deepEqual(
    issues({ aliases: { ...chat, e: { kind: 'embeddings', acceptsDimensions: 'yes', maxInputsPerCall: 0, targets: [{ provider: 'd', maxInputsPerCall: 100_001 }, { provider: 'd', acceptsDimensions: 1 }] } } }),
    [
      { code: 'not_boolean', path: 'aliases.e.acceptsDimensions', message: 'must be true or false' },
      { code: 'not_integer', path: 'aliases.e.maxInputsPerCall', message: 'must be an integer from 1 to 100000' },
      { code: 'not_integer', path: 'aliases.e.targets[0].maxInputsPerCall', message: 'must be an integer from 1 to 100000' },
      { code: 'not_boolean', path: 'aliases.e.targets[1].acceptsDimensions', message: 'must be true or false' },
    ],
  );
});

test('a price on an embeddings alias needs only input; a chat alias still needs output', () => {
  const c = parse({ aliases: { ...chat, e: { kind: 'embeddings', provider: 'oa', price: { input: 0.13, output: 0 } } } });
  assert.deepEqual(c.aliases['e']?.price, { input: 0.13, cachedInput: 0.13, output: 0 });
  const t = parse({ aliases: { ...chat, e: { kind: 'embeddings', targets: [{ provider: 'oa', price: { input: 0.02 } }] } } });
  assert.deepEqual(t.aliases['e']?.targets[0]?.price, { input: 0.02, cachedInput: 0.02, output: 0 });
  assert.deepEqual(issues({ aliases: { ...chat, e: { kind: 'embeddings', provider: 'oa', price: { output: 1 } } } }), [
    { code: 'required', path: 'aliases.e.price.input', message: 'is required' },
  ]);
  assert.deepEqual(issues({ aliases: { 'service-chat': { provider: 'oa', price: { input: 1 } } } }), [{ code: 'required', path: 'aliases.service-chat.price.output', message: 'is required' }]);
});

test('an anthropic provider in an embeddings alias: Anthropic has no embeddings API', () => {
  const message = 'names provider \'claude\' of type "anthropic": Anthropic has no embeddings API; use an openai or demo provider';
  assert.deepEqual(issues({ aliases: { ...chat, e: { kind: 'embeddings', provider: 'claude' } } }), [{ code: 'invalid_value', path: 'aliases.e.provider', message }]);
  assert.deepEqual(issues({ aliases: { ...chat, e: { kind: 'embeddings', targets: [{ provider: 'oa' }, { provider: 'claude', priority: 1 }] } } }), [
    { code: 'invalid_value', path: 'aliases.e.targets[1].provider', message },
  ]);
  // The same provider serves a chat alias.
  assert.equal(parse({ aliases: { 'service-chat': { provider: 'claude' } } }).aliases['service-chat']?.kind, 'chat');
});

test('service-auto routes chat: auto.default and rules name chat aliases; unset, the default is the first chat alias', () => {
  const aliases = { e: { kind: 'embeddings', provider: 'd' }, ...chat, v: { provider: 'd', capabilities: ['vision'] } };
  const c = parse({ aliases });
  assert.deepEqual(c.auto, { default: 'service-chat', rules: [{ when: { images: true }, use: 'v', reason: 'image_url' }] });
  const message = "names 'e', an embeddings alias; service-auto routes chat requests: name a chat alias (service-chat, v)";
  assert.deepEqual(issues({ aliases, auto: { default: 'e', rules: [{ when: { tools: true }, use: 'e' }] } }), [
    { code: 'invalid_value', path: 'auto.default', message },
    { code: 'invalid_value', path: 'auto.rules[0].use', message },
  ]);
});

test('a config needs a chat alias: service-auto routes to one', () => {
  assert.deepEqual(issues({ aliases: { e: { kind: 'embeddings', provider: 'd' } } }), [
    { code: 'required', path: 'aliases', message: 'must define at least one chat alias (without "kind": "embeddings"): service-auto routes chat requests to one' },
  ]);
});

test('openai providers: embeddingsEncoding "base64" (default) or "float"; other types refuse it, saying why', () => {
  const oa = (extra: Record<string, unknown>) => ({ ...providers, oa: { ...providers.oa, ...extra } });
  assert.equal((parse({ aliases: chat }).providers['oa'] as { embeddingsEncoding: string }).embeddingsEncoding, 'base64');
  assert.equal((parse({ providers: oa({ embeddingsEncoding: 'float' }), aliases: chat }).providers['oa'] as { embeddingsEncoding: string }).embeddingsEncoding, 'float');
  assert.deepEqual(issues({ providers: oa({ embeddingsEncoding: 'binary' }), aliases: chat }), [
    { code: 'not_one_of', path: 'providers.oa.embeddingsEncoding', message: 'must be "base64" or "float"' },
  ]);
  assert.deepEqual(
    issues({ providers: { ...providers, d: { type: 'demo', embeddingsEncoding: 'float' }, claude: { ...providers.claude, embeddingsEncoding: 'base64' } }, aliases: chat }),
    [
      { code: 'conflict', path: 'providers.d.embeddingsEncoding', message: 'applies to "type": "openai" providers only (a "demo" provider makes its own vectors): remove it' },
      { code: 'conflict', path: 'providers.claude.embeddingsEncoding', message: 'applies to "type": "openai" providers only (Anthropic has no embeddings API): remove it' },
    ],
  );
});

test('embeddings aliases whose targets name more than one model (the demo\'s is its own) are found, for the warning', () => {
  const config = parseConfig(
    {
      providers: { demo: { type: 'demo' }, up: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } },
      aliases: {
        chat: { provider: 'demo' },
        same: { kind: 'embeddings', targets: [{ provider: 'up', model: 'e3' }, { provider: 'demo', model: 'e3', priority: 1 }] },
        mixed: { kind: 'embeddings', targets: [{ provider: 'up', model: 'e3-small' }, { provider: 'up', model: 'bge-small', priority: 1 }, { provider: 'demo', model: 'e3-small' }] },
      },
    },
    null,
    '/tmp',
  );
  assert.deepEqual(mixedEmbeddingsModels(config), [
    { alias: 'same', models: ['e3', 'e3 (demo)'] },
    { alias: 'mixed', models: ['e3-small', 'bge-small', 'e3-small (demo)'] },
  ]);
});
