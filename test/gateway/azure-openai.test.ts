// The gateway against a fake Azure OpenAI on loopback (./azure-fake.ts),
// configured the way docs/config.md's "Azure OpenAI" section says: the path,
// the api-version query, the api-key header and no Authorization, the body,
// for a non-stream and a stream request on both endpoint styles; what Azure
// refuses as the client sees it; and a log without the key or the query.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { API_VERSION, azure, AZURE_KEY, DEPLOYMENT, violations } from './azure-fake.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway, type UpstreamRequest } from './harness.ts';

let upstream: FakeUpstream;
let gw: TestGateway;

before(async () => {
  upstream = await startFakeUpstream(azure);
  const origin = new URL(upstream.baseUrl).origin;
  const policy = { retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 1000 } };
  gw = await startGateway({
    env: { AZURE_OPENAI_API_KEY: AZURE_KEY },
    configValue: {
      providers: {
        // As in docs/config.md, with the fake's address for the resource's.
        azure: { type: 'openai', baseUrl: `${origin}/openai/deployments/${DEPLOYMENT}?api-version=${API_VERSION}`, apiKeyEnv: 'AZURE_OPENAI_API_KEY', apiKeyHeader: 'api-key', ...policy },
        'azure-v1': { type: 'openai', baseUrl: `${origin}/openai/v1`, apiKeyEnv: 'AZURE_OPENAI_API_KEY', apiKeyHeader: 'api-key', ...policy },
        'azure-v1-preview': { type: 'openai', baseUrl: `${origin}/openai/v1?api-version=preview`, apiKeyEnv: 'AZURE_OPENAI_API_KEY', ...policy },
        'azure-wrong-version': { type: 'openai', baseUrl: `${origin}/openai/deployments/${DEPLOYMENT}?api-version=2023-05-15`, apiKeyEnv: 'AZURE_OPENAI_API_KEY', apiKeyHeader: 'api-key', ...policy },
        'azure-bearer': { type: 'openai', baseUrl: `${origin}/openai/deployments/${DEPLOYMENT}?api-version=${API_VERSION}`, apiKeyEnv: 'AZURE_OPENAI_API_KEY', ...policy },
      },
      aliases: {
        'service-azure': { provider: 'azure', model: 'gpt-4o' },
        'service-azure-v1': { provider: 'azure-v1', model: DEPLOYMENT },
        'service-azure-v1-preview': { provider: 'azure-v1-preview', model: DEPLOYMENT },
        'service-azure-wrong-version': { provider: 'azure-wrong-version', model: 'gpt-4o' },
        'service-azure-bearer': { provider: 'azure-bearer', model: 'gpt-4o' },
      },
    },
  });
});
after(async () => {
  await gw?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
  violations.length = 0;
});

const hello = { messages: [{ role: 'user', content: 'Hi' }] };

function onlyRequest(): UpstreamRequest {
  assert.deepEqual(violations, []);
  assert.equal(upstream.requests.length, 1);
  return upstream.requests[0] as UpstreamRequest;
}

test('classic deployment path, non-stream: path, api-version, api-key and no Authorization, the body; the client sees the alias', async () => {
  const res = await postChat(gw, { model: 'service-azure', ...hello, temperature: 0.2 });
  assert.equal(res.status, 200, res.text);
  const seen = onlyRequest();
  assert.equal(seen.method, 'POST');
  assert.equal(seen.url, `/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=${API_VERSION}`);
  assert.equal(seen.headers['api-key'], AZURE_KEY);
  assert.equal(seen.headers['authorization'], undefined);
  assert.equal(seen.headers['content-type'], 'application/json');
  assert.equal(seen.headers['accept'], 'application/json');
  // Azure takes the deployment from the path and ignores the body's model.
  assert.deepEqual(seen.body, { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2, max_tokens: 4096 });
  const body = res.json() as { model: string; object: string; choices: Array<{ message: { content: string }; finish_reason: string }>; usage: { total_tokens: number } };
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.model, 'service-azure');
  assert.equal(body.choices[0]?.message.content, 'Hello from Azure.');
  assert.equal(body.choices[0]?.finish_reason, 'stop');
  assert.equal(body.usage.total_tokens, 15);
  assert.ok(!res.text.includes('content_filter_results'), "Azure's own fields are not passed on");
});

test('classic deployment path, stream: the same request with stream_options; Azure\'s choice-less first frame does not set the stream\'s id and created', async () => {
  const res = await postChat(gw, { model: 'service-azure', ...hello, stream: true, stream_options: { include_usage: true } });
  assert.equal(res.status, 200, res.text);
  assert.match(String(res.headers['content-type']), /^text\/event-stream/);
  const seen = onlyRequest();
  assert.equal(seen.url, `/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=${API_VERSION}`);
  assert.equal(seen.headers['api-key'], AZURE_KEY);
  assert.equal(seen.headers['authorization'], undefined);
  assert.equal(seen.headers['accept'], 'text/event-stream');
  assert.deepEqual(seen.body, { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true }, max_tokens: 4096 });

  const data = sseData(res.text);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { id: string; created: number; object: string; model: string; choices: Array<{ delta: { content?: string }; finish_reason: string | null }>; usage?: { total_tokens: number } });
  for (const chunk of chunks) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(chunk.model, 'service-azure');
    // Those of Azure's first frame with choices, not of its prompt-filter frame.
    assert.equal(chunk.id, 'chatcmpl-AZ2');
    assert.equal(chunk.created, 1_730_000_001);
  }
  assert.equal(chunks.map((c) => c.choices.map((choice) => choice.delta.content ?? '').join('')).join(''), 'Hello from Azure.');
  assert.equal(chunks.flatMap((c) => c.choices).at(-1)?.finish_reason, 'stop');
  assert.equal(chunks.at(-1)?.usage?.total_tokens, 15);
});

test('v1 path: the deployment travels as the body\'s model; with api-key, or with api-version=preview and the key as a Bearer', async () => {
  for (const [alias, url, auth] of [
    ['service-azure-v1', '/openai/v1/chat/completions', 'api-key'],
    ['service-azure-v1-preview', '/openai/v1/chat/completions?api-version=preview', 'authorization'],
  ] as const) {
    upstream.requests.length = 0;
    const res = await postChat(gw, { model: alias, ...hello });
    assert.equal(res.status, 200, res.text);
    const seen = onlyRequest();
    assert.equal(seen.url, url);
    assert.equal((seen.body as { model: string }).model, DEPLOYMENT);
    if (auth === 'api-key') {
      assert.equal(seen.headers['api-key'], AZURE_KEY);
      assert.equal(seen.headers['authorization'], undefined);
    } else {
      assert.equal(seen.headers['authorization'], `Bearer ${AZURE_KEY}`);
      assert.equal(seen.headers['api-key'], undefined);
    }
    const stream = await postChat(gw, { model: alias, ...hello, stream: true });
    assert.equal(stream.status, 200, stream.text);
    assert.equal(sseData(stream.text).at(-1), '[DONE]');
  }
});

test('what Azure refuses reaches the client as the gateway\'s errors: a wrong api-version (404), the key as a Bearer on the classic path (401)', async () => {
  const wrongVersion = await postChat(gw, { model: 'service-azure-wrong-version', ...hello });
  assert.equal(onlyRequest().url, `/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=2023-05-15`);
  assert.equal(wrongVersion.status, 502, wrongVersion.text);
  assert.equal((wrongVersion.json() as { error: { code: string } }).error.code, 'upstream_not_found');

  upstream.requests.length = 0;
  const bearer = await postChat(gw, { model: 'service-azure-bearer', ...hello });
  assert.equal(onlyRequest().headers['authorization'], `Bearer ${AZURE_KEY}`);
  assert.equal(bearer.status, 502, bearer.text);
  assert.equal((bearer.json() as { error: { code: string } }).error.code, 'upstream_auth_failed');
  for (const res of [wrongVersion, bearer]) {
    assert.ok(!res.text.includes('api-version'), 'the answer does not quote the upstream URL');
    assert.ok(!res.text.includes(AZURE_KEY));
  }
});

test('the gateway\'s log, failures included, holds neither the upstream key nor the query of a baseUrl', () => {
  assert.ok(gw.logs.length > 0);
  const text = JSON.stringify(gw.logs);
  assert.ok(!text.includes(AZURE_KEY), 'no key in the log');
  assert.ok(!text.includes('api-version'), 'no query in the log');
});
