// A host codec that misbehaves, through the exchange loop against a fake
// upstream: what it throws becomes a 502 with a generic message whose cause
// names the type, the step and the thrown class but never the text (which may
// quote the upstream's body); what it returns is checked like an upstream's
// JSON; a malformed codec is refused when the provider is built.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProviderAdapter, ProviderCodec } from '../../src/api/providers.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createProviderBinding } from '../../src/providers/provider-factories.ts';
import type { HttpProvider } from '../../src/upstream/provider.ts';
import { failureCauseOf } from '../../src/upstream/failure-cause.ts';
import { exchangeCompletion } from '../../src/upstream/upstream-exchange.ts';
import { openExchangeStream } from '../../src/upstream/upstream-stream.ts';
import { sendJson, startEventStream, startFakeUpstream, type FakeUpstream } from '../../src/testing/fake-upstream.ts';
import { parrotAdapter } from './providers-sample-adapter.ts';

const SECRET_BODY = 'upstream-said-something-private';
const REQUEST: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 };

let upstream: FakeUpstream;
before(async () => {
  upstream = await startFakeUpstream((_req, res) => sendJson(res, 200, { text: SECRET_BODY }));
});
after(() => upstream.close());

function providerWith(codec: Partial<ProviderCodec> | unknown): HttpProvider {
  const adapter: ProviderAdapter = { type: 'odd', settings: [], parse: () => null, create: () => ({ ...parrotAdapter.create({ region: 'eu' }, { name: 'p', baseUrl: '' }), ...(codec as object) }) };
  const config = parseConfig({ providers: { p: { type: 'odd', baseUrl: upstream.baseUrl } }, aliases: { chat: { provider: 'p', model: 'm' } } }, null, '/tmp', { providerTypes: [adapter] });
  return createProviderBinding(config.providers['p']!, undefined).provider as HttpProvider;
}

const call = (request: ChatRequest = REQUEST) => ({ request, requestId: 'req_1', signal: new AbortController().signal });

async function rejection(promise: Promise<unknown>): Promise<Error & { status: number; code: string; param: string | null }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { status: number; code: string; param: string | null };
  }
  return assert.fail('expected a rejection');
}

describe('a host codec that throws', () => {
  test('decode: 502 bad_upstream_response, generic message, cause without the text', async () => {
    const error = await rejection(exchangeCompletion(providerWith({ decode: (text: string) => { throw new SyntaxError(`cannot read ${text}`); } }), call()));
    assert.deepEqual([error.status, error.code, error.message], [502, 'bad_upstream_response', "The upstream provider's answer could not be translated."]);
    assert.equal((error.cause as Error).message, 'provider type "odd": the codec\'s decode threw SyntaxError');
    assert.equal(JSON.stringify({ m: error.message, c: String(error.cause) }).includes(SECRET_BODY), false);
    assert.deepEqual(failureCauseOf(error), { kind: 'bad_response', detail: 'codec.decode:SyntaxError', address: `127.0.0.1:${upstream.port}` });
  });

  test('encode: the same 502, before any upstream call', async () => {
    const sent = upstream.count;
    const error = await rejection(exchangeCompletion(providerWith({ encode: () => { throw new Error('no'); } }), call()));
    assert.deepEqual([error.status, error.code], [502, 'bad_upstream_response']);
    assert.equal(upstream.count, sent);
  });

  test('a stream decoder that throws: 502 bad_upstream_response', async () => {
    upstream.handle = (_req, res) => {
      startEventStream(res);
      res.end('event: piece\ndata: {"text":"a"}\n\n');
    };
    const stream = openExchangeStream(providerWith({ streamDecoder: () => ({ push: () => { throw new TypeError('x'); }, end: () => undefined }) }), call());
    const error = await rejection(stream.next());
    stream.close();
    assert.deepEqual([error.status, error.code], [502, 'bad_upstream_response']);
    upstream.handle = (_req, res) => sendJson(res, 200, { text: SECRET_BODY });
  });
});

describe('what a host codec returns', () => {
  test('a completion without choices: the 502 naming the field, as for an upstream', async () => {
    const error = await rejection(exchangeCompletion(providerWith({ decode: () => ({ id: 'x' }) }), call()));
    assert.deepEqual([error.status, error.code], [502, 'bad_upstream_response']);
    assert.match(error.message, /choices/);
  });

  test('encode returning a non-string: 502, its cause saying what was wrong', async () => {
    const error = await rejection(exchangeCompletion(providerWith({ encode: () => 42 }), call()));
    assert.deepEqual([error.status, error.code], [502, 'bad_upstream_response']);
    assert.equal((error.cause as Error).message, 'provider type "odd": the codec\'s encode did not return a string');
    assert.equal(failureCauseOf(error).detail, 'codec.encode:wrong_return');
  });

  test("a refusal becomes the client's 400 naming the param; a malformed one is a 502", () => {
    const refusing = providerWith({ refusal: () => ({ param: 'seed', message: 'seed is not supported here' }) });
    const refusal = refusing.refusal?.(REQUEST);
    assert.deepEqual([refusal?.status, refusal?.code, refusal?.param, refusal?.message], [400, 'unsupported_parameter', 'seed', 'seed is not supported here']);
    assert.throws(() => providerWith({ refusal: () => ({ param: 3 }) }).refusal?.(REQUEST), { status: 502, code: 'bad_upstream_response' });
  });

  test('requestHeaders that are not strings: 502', async () => {
    const error = await rejection(exchangeCompletion(providerWith({ requestHeaders: () => ({ 'x-n': 1 }) }), call()));
    assert.deepEqual([error.status, error.code], [502, 'bad_upstream_response']);
  });
});

describe('an adapter whose create throws', () => {
  test('is an Error when the provider is built, naming the provider and the type', () => {
    const adapter: ProviderAdapter = { type: 'odd', settings: [], parse: () => null, create: () => { throw new RangeError('no region'); } };
    const config = parseConfig({ providers: { p: { type: 'odd', baseUrl: upstream.baseUrl } }, aliases: { chat: { provider: 'p', model: 'm' } } }, null, '/tmp', { providerTypes: [adapter] });
    assert.throws(() => createProviderBinding(config.providers['p']!, undefined), { message: 'provider "p" (type "odd"): the adapter\'s create threw: no region' });
  });
});

describe('a codec missing a part', () => {
  test('is refused when the provider is built, naming the provider and the part', () => {
    assert.throws(() => providerWith({ decode: undefined }), { name: 'TypeError', message: 'provider "p" (type "odd"): the adapter\'s create returned a codec without decode: it must be a function.' });
    assert.throws(() => providerWith({ endpoint: 'https://x' }), { message: 'provider "p" (type "odd"): the adapter\'s create returned a codec whose endpoint is not a function: leave it out or make it one.' });
  });
});
