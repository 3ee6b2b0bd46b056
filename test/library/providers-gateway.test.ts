// A host-typed provider behind the real gateway on port 0, against a fake
// upstream on port 0: the alias is rewritten to the target's model, the
// answer carries the alias, a stream is relayed as SSE, a 5xx is retried as for
// a built-in type, the region header and the key reach the upstream, and a
// codec failure is the client's generic 502 with nothing of the upstream's
// body in the answer or the logs.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { openStream, postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';
import { PARROT_DIALECT, parrotAdapter } from './providers-sample-adapter.ts';

const UPSTREAM_KEY = 'sk-upstream-secret';
const ANSWER = { id: 'a1', model: 'parrot-large', text: 'Hello there', toolCall: null, finish: 'stop', usage: { input: 5, output: 2 } } as const;

describe('a host provider type behind the gateway', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let reply: (res: ServerResponse) => void = () => undefined;

  before(async () => {
    upstream = await startFakeUpstream((_req, res) => reply(res));
    gw = await startGateway({
      providerTypes: [parrotAdapter],
      configValue: {
        providers: {
          parrot: { type: 'parrot', baseUrl: upstream.baseUrl, region: 'us', apiKeyEnv: 'FAKE_UPSTREAM_KEY', apiKeyHeader: 'x-parrot-key', retry: { maxAttempts: 2 }, circuitBreaker: { failureThreshold: 1000 } },
        },
        aliases: { 'service-parrot': { provider: 'parrot', model: 'parrot-large' } },
      },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const json = (status: number, body: string) => (res: ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  };

  test('a whole answer: the target model upstream, the alias to the client, the region header and key sent', async () => {
    upstream.requests.length = 0;
    reply = json(200, PARROT_DIALECT.answer(ANSWER));
    const res = await postChat(gw, { model: 'service-parrot', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 });
    assert.equal(res.status, 200, res.text);
    const body = res.json() as { model: string; choices: Array<{ message: { content: string }; finish_reason: string }>; usage: { prompt_tokens: number; completion_tokens: number } };
    assert.deepEqual([body.model, body.choices[0]?.message.content, body.choices[0]?.finish_reason, body.usage.prompt_tokens, body.usage.completion_tokens], ['service-parrot', 'Hello there', 'stop', 5, 2]);
    const sent = upstream.requests[0];
    assert.deepEqual([sent?.url, (sent?.body as { engine: string }).engine, (sent?.body as { limit: number }).limit], ['/v1', 'parrot-large', 20]);
    assert.deepEqual([sent?.headers['x-parrot-region'], sent?.headers['x-parrot-key'], sent?.headers['authorization']], ['us', UPSTREAM_KEY, undefined]);
  });

  test('a stream: the pieces as SSE chunks, then [DONE]', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of PARROT_DIALECT.stream(ANSWER, ['Hel', 'lo']).events) res.write(event);
      res.end();
    };
    const { status, body } = await openStream(gw, gw.key, { model: 'service-parrot', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(status, 200);
    const frames = sseData(await body);
    assert.equal(frames.at(-1), '[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f) as { model: string; choices: Array<{ delta: { content?: string }; finish_reason: string | null }> });
    assert.deepEqual(chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join(''), 'Hello');
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.model === 'service-parrot'));
  });

  test('an upstream 503 is retried by the gateway, as for a built-in type', async () => {
    upstream.requests.length = 0;
    let n = 0;
    reply = (res) => (n++ === 0 ? json(503, PARROT_DIALECT.error(503, 'busy'))(res) : json(200, PARROT_DIALECT.answer(ANSWER))(res));
    const res = await postChat(gw, { model: 'service-parrot', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200, res.text);
    assert.equal(upstream.requests.length, 2);
  });

  test("a codec failure: 502 with a generic message; the upstream's body is in neither the answer nor the logs", async () => {
    const secret = 'private-upstream-words';
    reply = json(200, JSON.stringify({ not: 'parrot', said: secret }));
    const res = await postChat(gw, { model: 'service-parrot', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 502);
    assert.deepEqual((res.json() as { error: { code: string } }).error.code, 'bad_upstream_response');
    assert.equal(res.text.includes(secret), false);
    assert.equal(JSON.stringify(gw.logs).includes(secret), false);
    assert.equal(JSON.stringify(gw.logs).includes(UPSTREAM_KEY), false);
  });

  test('the refusal: a 400 naming the parameter, no upstream call', async () => {
    upstream.requests.length = 0;
    const res = await postChat(gw, { model: 'service-parrot', messages: [{ role: 'user', content: 'hi' }], stop: ['END'] });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual((res.json() as { error: { param: string; message: string } }).error, { ...(res.json() as { error: object }).error, param: 'stop', message: 'parrot has no stop sequences; leave stop out' });
    assert.equal(upstream.requests.length, 0);
  });
});

describe('a host provider type with a host provider key source', () => {
  const answer = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(PARROT_DIALECT.answer(ANSWER));
  };
  const start = async (upstream: FakeUpstream, providerKey: (provider: string) => string | undefined): Promise<TestGateway> =>
    startGateway({
      providerTypes: [parrotAdapter],
      providerKey,
      configValue: {
        providers: { parrot: { type: 'parrot', baseUrl: upstream.baseUrl, region: 'us', apiKeyEnv: 'FAKE_UPSTREAM_KEY', apiKeyHeader: 'x-parrot-key', retry: { maxAttempts: 1 } } },
        aliases: { 'service-parrot': { provider: 'parrot', model: 'parrot-large' } },
      },
    });

  for (const [what, vault, sent] of [
    ["the vault's key", 'sk-from-vault', 'sk-from-vault'],
    ["undefined: the config's apiKeyEnv key", undefined, UPSTREAM_KEY],
  ] as const) {
    test(`${what} reaches the upstream in the adapter's key header`, async () => {
      const upstream = await startFakeUpstream((_req, res) => answer(res));
      const gw = await start(upstream, (provider) => (provider === 'parrot' ? vault : undefined));
      try {
        const res = await postChat(gw, { model: 'service-parrot', messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(res.status, 200);
        assert.deepEqual(upstream.requests.map((r) => [r.headers['x-parrot-key'], r.headers['authorization']]), [[sent, undefined]]);
      } finally {
        await gw.close();
        await upstream.close();
      }
    });
  }
});
