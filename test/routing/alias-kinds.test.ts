// Routing by an alias's kind: chat-shaped requests reach chat aliases only,
// embeddings requests embeddings aliases only; the wrong kind is 400
// model_kind_mismatch naming the models of the right kind the caller may use,
// and service-auto never chooses an embeddings alias.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AliasConfig, AliasKind } from '../../src/config/config.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { ApiError, ModelNotFoundError } from '../../src/errors/api-error.ts';
import { aliasKind, resolveAlias, resolveEmbeddingsAlias } from '../../src/routing/alias-routing.ts';
import { countReads } from '../support/read-count.ts';

const alias = (kind: AliasKind, over: Partial<AliasConfig> = {}): AliasConfig => ({
  kind,
  targets: [{ provider: 'p', model: 'm', weight: 1, priority: 0, price: null, acceptsDimensions: kind === 'embeddings', maxInputsPerCall: null }],
  maxOutputTokens: null,
  contextWindow: null,
  capabilities: [],
  requestFields: null,
  guard: null,
  price: null,
  imageTokens: 2000,
  ...over,
});
const config = {
  aliases: {
    'text-embed': alias('embeddings'),
    'service-chat': alias('chat', { contextWindow: 1000 }),
    'embed-large': alias('embeddings'),
    'service-mini': alias('chat', { contextWindow: 1000 }),
  },
  auto: { default: 'service-chat', rules: [] },
};
const hi = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'service-auto', messages: [{ role: 'user', content: 'hi' }], ...extra });

/** Asserts `fn` throws model_kind_mismatch (400, param model) with exactly `message`. */
function mismatch(fn: () => unknown, message: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.code, err.param, err.message], [400, 'model_kind_mismatch', 'model', message]);
    assert.deepEqual(err.toBody(), { error: { message, type: 'invalid_request_error', param: 'model', code: 'model_kind_mismatch' } });
    return true;
  });
}

test('a chat request naming an embeddings alias: model_kind_mismatch naming the chat models, service-auto among them', () => {
  mismatch(
    () => resolveAlias(hi({ model: 'text-embed' }), config),
    "'text-embed' is an embeddings model; send it to POST /v1/embeddings, or use one of the chat models: service-chat, service-mini, service-auto.",
  );
});

test('the chat models named are those usable() gives, in its order', () => {
  mismatch(
    () => resolveAlias(hi({ model: 'embed-large' }), config, () => true, () => ['embed-large', 'service-mini', 'service-auto']),
    "'embed-large' is an embeddings model; send it to POST /v1/embeddings, or use one of the chat models: service-mini, service-auto.",
  );
  mismatch(
    () => resolveAlias(hi({ model: 'embed-large' }), config, () => true, () => ['embed-large']),
    "'embed-large' is an embeddings model; send it to POST /v1/embeddings, or use a chat model (this API key may use none).",
  );
});

test('a named chat alias costs one read of its kind', () => {
  const named = alias('chat');
  const reads = countReads(named, 'kind');
  const r = resolveAlias(hi({ model: 'service-chat' }), { ...config, aliases: { ...config.aliases, 'service-chat': named } });
  assert.equal(r.alias, 'service-chat');
  assert.equal(reads.count, 1);
});

test('service-auto never chooses an embeddings alias: not past the window, not for request fields, not from a rule', () => {
  // Over every chat window: the default is used anyway, the embeddings aliases (no window) never tried.
  const long = hi({ messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
  const r = resolveAlias(long, config);
  assert.deepEqual([r.alias, r.reason, r.skipped], ['service-chat', 'default', ['service-chat:context_window', 'service-mini:context_window']]);
  // A rule naming an embeddings alias (the parser refuses one; a config built in code may hold it) is passed over.
  const ruled = { ...config, auto: { default: 'service-chat', rules: [{ when: { stream: false }, use: 'text-embed', reason: 'no_stream' }] } };
  const viaRule = resolveAlias(hi(), ruled);
  assert.deepEqual([viaRule.alias, viaRule.reason, viaRule.skipped], ['service-chat', 'default', []]);
  // A request field only an embeddings alias "takes" (its inherited list) still goes to a chat alias that takes it.
  const fields = {
    aliases: {
      'text-embed': alias('embeddings', { requestFields: ['seed'] }),
      'service-chat': alias('chat', { requestFields: [] }),
      'service-mini': alias('chat', { requestFields: ['seed'] }),
    },
    auto: { default: 'service-chat', rules: [] },
    requestFields: [],
  };
  const s = resolveAlias(hi({ seed: 1 }), fields);
  assert.deepEqual([s.alias, s.reason, s.skipped], ['service-mini', 'request_fields', ['service-chat:request_fields']]);
  // With the only chat alias that takes it out of reach, fields still decide: never the embeddings alias.
  const s2 = resolveAlias(hi({ seed: 1 }), fields, (a) => a !== 'service-mini');
  assert.deepEqual([s2.alias, s2.reason], ['service-mini', 'request_fields']);
});

test('an embeddings request: an embeddings alias as requested', () => {
  assert.deepEqual(resolveEmbeddingsAlias('embed-large', config), { alias: 'embed-large', config: config.aliases['embed-large'], reason: 'requested', skipped: [] });
});

test('an embeddings request naming a chat alias or service-auto: model_kind_mismatch naming the embeddings models', () => {
  mismatch(() => resolveEmbeddingsAlias('service-chat', config), "'service-chat' is a chat model; embeddings take one of: text-embed, embed-large.");
  mismatch(() => resolveEmbeddingsAlias('service-auto', config), "'service-auto' is a chat model; embeddings take one of: text-embed, embed-large.");
  mismatch(() => resolveEmbeddingsAlias('service-auto', config, () => ['service-chat', 'embed-large', 'service-auto']), "'service-auto' is a chat model; embeddings take one of: embed-large.");
  mismatch(() => resolveEmbeddingsAlias('service-mini', config, () => ['service-mini', 'service-auto']), "'service-mini' is a chat model; this API key may use no embeddings model.");
});

test('an embeddings request naming an unknown model: 404 model_not_found; prototype names are not aliases', () => {
  for (const model of ['text-embedding-3-small', 'constructor', '__proto__', 'toString']) {
    assert.throws(
      () => resolveEmbeddingsAlias(model, config, () => ['text-embed', 'service-auto']),
      (err: unknown) =>
        err instanceof ModelNotFoundError &&
        err.status === 404 &&
        err.message === `The model '${model}' does not exist or you do not have access to it. Models this API key may use: text-embed, service-auto.`,
    );
  }
});

test('aliasKind: each alias its own, service-auto chat, an unknown name null', () => {
  assert.deepEqual(
    ['text-embed', 'service-chat', 'service-auto', 'nope', 'constructor'].map((name) => aliasKind(config, name)),
    ['embeddings', 'chat', 'chat', null, null],
  );
});
