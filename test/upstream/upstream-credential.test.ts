// A key asked on every exchange (exchange-settings.ts UpstreamKey as a function):
// each exchange sends what the getter gives now, in the provider's key header,
// over the configured headers; undefined leaves the configured headers as they
// are; a fixed key is baked into the base headers as before.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/errors/api-error.ts';
import { createAnthropicProvider } from '../../src/providers/anthropic.ts';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.ts';
import { exchangeJson, settingsFor } from '../../src/upstream/json-exchange.ts';
import { sendJson } from '../../src/testing/fake-upstream.ts';
import { useFakeUpstream } from '../providers/provider-fixtures.ts';

const upstream = useFakeUpstream();
upstream.handle = (_req, res) => sendJson(res, 200, { ok: true });

const call = () => ({ requestId: 'req_1', signal: new AbortController().signal });

describe('a key asked per exchange', () => {
  test('openai with apiKeyHeader api-key: each exchange sends the key of the moment, alone, over the configured header', async () => {
    let key: string | undefined = 'sk-first';
    const provider = createOpenAICompatibleProvider({ baseUrl: upstream.baseUrl, apiKey: () => key, apiKeyHeader: 'Api-Key', headers: { 'api-key': 'sk-configured', 'x-team': 'a' } });
    assert.equal(provider.settings.baseHeaders['api-key'], 'sk-configured');
    const embeddings = settingsFor(provider.settings, upstream.baseUrl, 'embeddings');
    await exchangeJson(embeddings, call(), '{}');
    key = 'sk-second';
    await exchangeJson(embeddings, call(), '{}');
    key = undefined;
    await exchangeJson(embeddings, call(), '{}');
    assert.deepEqual(upstream.received.map((r) => [r.url, r.headers['api-key'], r.headers['authorization'], r.headers['x-team']]), [
      ['/v1/embeddings', 'sk-first', undefined, 'a'],
      ['/v1/embeddings', 'sk-second', undefined, 'a'],
      ['/v1/embeddings', 'sk-configured', undefined, 'a'],
    ]);
  });

  test('openai in Authorization: Bearer and the key', async () => {
    const provider = createOpenAICompatibleProvider({ baseUrl: upstream.baseUrl, apiKey: () => 'sk-vault' });
    await exchangeJson(provider.settings, call(), '{}');
    assert.equal(upstream.received[0]?.headers['authorization'], 'Bearer sk-vault');
  });

  test('anthropic: x-api-key per exchange (count_tokens goes through the same settings)', async () => {
    const keys = ['sk-ant-1', 'sk-ant-2'];
    const provider = createAnthropicProvider({ baseUrl: upstream.baseUrl, apiKey: () => keys.shift() });
    const counting = settingsFor(provider.settings, upstream.baseUrl, 'messages/count_tokens');
    await exchangeJson(counting, call(), '{}');
    await exchangeJson(counting, call(), '{}');
    assert.deepEqual(upstream.received.map((r) => [r.url, r.headers['x-api-key']]), [['/v1/messages/count_tokens', 'sk-ant-1'], ['/v1/messages/count_tokens', 'sk-ant-2']]);
  });

  test("a getter that throws the client's error fails that exchange with it, before anything is sent", async () => {
    const provider = createOpenAICompatibleProvider({ baseUrl: upstream.baseUrl, apiKey: () => { throw new ApiError('internal_error'); } });
    await assert.rejects(exchangeJson(provider.settings, call(), '{}'), { name: 'ApiError', code: 'internal_error', status: 500 });
    assert.equal(upstream.received.length, 0);
  });

  test('a fixed key: in the base headers, no per-exchange credential', () => {
    const provider = createOpenAICompatibleProvider({ baseUrl: upstream.baseUrl, apiKey: 'sk-fixed' });
    assert.equal(provider.settings.baseHeaders['authorization'], 'Bearer sk-fixed');
    assert.equal(provider.settings.credential, undefined);
  });
});
