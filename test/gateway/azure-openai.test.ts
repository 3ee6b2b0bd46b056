// The gateway against a fake Azure OpenAI on loopback, configured the way
// docs/config.md's "Azure OpenAI" section says. The fake answers like Azure:
// the classic path /openai/deployments/{deployment}/chat/completions needs
// ?api-version= and the `api-key` header (404 and 401 otherwise), the v1 path
// /openai/v1/chat/completions takes the deployment as the body's model; its
// answers carry Azure's content-filter fields, and its streams open with a
// chunk that has no choices (prompt_filter_results) and empty id and model.
// The fake also refuses any request that carries the key twice (api-key and a
// Bearer), and the gateway's log must hold neither the key nor the query.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway, type UpstreamRequest } from './harness.ts';

const AZURE_KEY = 'azure-key-0123456789abcdef';
const API_VERSION = '2024-10-21';
const DEPLOYMENT = 'gpt-4o-prod';
/** What Azure reports as `model`: the deployed model, not the deployment's name. */
const AZURE_MODEL = 'gpt-4o-2024-08-06';

let upstream: FakeUpstream;
let gw: TestGateway;
/** What the fake found wrong with a request, beyond what it answers with an error. */
let violations: string[] = [];

const filters = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Azure's routing and authentication, in the order Azure checks them. */
function azure(req: UpstreamRequest, res: ServerResponse): void {
  const url = new URL(req.url, 'http://azure.invalid');
  if (req.headers['authorization'] !== undefined && req.headers['api-key'] !== undefined) violations.push('the key was sent twice: api-key and Authorization');
  if (url.search.includes('key')) violations.push(`a key in the query: ${url.search}`);
  const classic = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname);
  const v1 = url.pathname === '/openai/v1/chat/completions';
  if (req.method !== 'POST' || (classic === null && !v1)) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
  if (classic !== null && url.searchParams.get('api-version') !== API_VERSION) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
  if (v1 && ![null, 'preview'].includes(url.searchParams.get('api-version'))) return json(res, 400, { error: { code: 'BadRequest', message: 'API version not supported' } });
  const bearer = v1 && req.headers['authorization'] === `Bearer ${AZURE_KEY}`;
  if (req.headers['api-key'] !== AZURE_KEY && !bearer) {
    return json(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.' } });
  }
  const body = req.body as { model?: string; stream?: boolean };
  const deployment = classic !== null ? decodeURIComponent(classic[1] as string) : body.model;
  if (deployment !== DEPLOYMENT) return json(res, 404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } });
  if (body.stream === true) return azureStream(res);
  json(res, 200, {
    id: 'chatcmpl-AZ1',
    object: 'chat.completion',
    created: 1_730_000_000,
    model: AZURE_MODEL,
    system_fingerprint: 'fp_azure',
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }],
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'Hello from Azure.', refusal: null }, content_filter_results: filters }],
    usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
  });
}

function azureStream(res: ServerResponse): void {
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}): unknown => ({ id: 'chatcmpl-AZ2', object: 'chat.completion.chunk', created: 1_730_000_001, model: AZURE_MODEL, system_fingerprint: 'fp_azure', choices, ...extra });
  const frames = [
    // Azure's first frame: the prompt's filter results, no choices, empty id and model.
    { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }] },
    frame([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null, logprobs: null, content_filter_results: {} }]),
    frame([{ index: 0, delta: { content: 'Hello' }, finish_reason: null, logprobs: null, content_filter_results: filters }]),
    frame([{ index: 0, delta: { content: ' from Azure.' }, finish_reason: null, logprobs: null, content_filter_results: filters }]),
    frame([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null, content_filter_results: {} }]),
    frame([], { usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } }),
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
  res.end('data: [DONE]\n\n');
}

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
  violations = [];
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
