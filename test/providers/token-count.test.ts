// count_tokens against a fake upstream: what each counting method sends
// (Anthropic's count_tokens, vLLM's /tokenize, llama.cpp's /apply-template
// then /tokenize), exactly; what it reads back; and every way an upstream
// count fails falling back to the gateway's estimate with the reason, for the
// access line. The deadline case runs on a manual scheduler.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import type { ProviderConfig } from '../../src/config/config.ts';
import { Checker } from '../../src/config/config-checker.ts';
import { parseProvider } from '../../src/config/provider-types.ts';
import { estimateMessageTokens } from '../../src/messages/token-estimate.ts';
import { createProviderBinding } from '../../src/providers/provider-factories.ts';
import { countTokens, type TokenCount, type TokenCountTarget } from '../../src/providers/token-count.ts';
import { createAnthropicProvider } from '../../src/providers/anthropic.ts';
import { anthropicCountBody, serverRoot, withTokenCounter } from '../../src/providers/token-counters.ts';
import { isClientAbort } from '../../src/upstream/upstream-errors.ts';
import { sendJson } from '../../src/testing/fake-upstream.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import { useFakeUpstream } from './provider-fixtures.ts';

const upstream = useFakeUpstream();

/** The client's Messages body: the alias as model, generation-only fields beside what is counted. */
const BODY: Readonly<Record<string, unknown>> = {
  model: 'claude-sonnet-4-5',
  max_tokens: 128000,
  stream: true,
  metadata: { user_id: 'u-1' },
  temperature: 0.5,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: 'Hello, world' }],
  tools: [{ name: 'get_time', description: 'The time now.', input_schema: { type: 'object', properties: {} } }],
  thinking: { type: 'adaptive' },
};
const ESTIMATE = estimateMessageTokens(BODY);

/** The same request as the target's upstream request (OpenAI's form, the upstream's model). */
const REQUEST: ChatRequest = {
  model: 'upstream-model',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello, world' },
  ],
  tools: [{ type: 'function', function: { name: 'get_time', description: 'The time now.', parameters: { type: 'object', properties: {} } } }],
  max_tokens: 4096,
};

function target(settings: Record<string, unknown>, scheduler?: ManualScheduler, request: ChatRequest = REQUEST): TokenCountTarget {
  const c = new Checker('f.json');
  const config = parseProvider(c, { baseUrl: upstream.baseUrl, ...settings }, 'providers.p') as ProviderConfig;
  assert.deepEqual(c.issues, []);
  return { provider: createProviderBinding(config, 'sk-upstream-key', undefined, scheduler).provider, request };
}

const count = (t: TokenCountTarget, signal: AbortSignal = new AbortController().signal): Promise<TokenCount> =>
  countTokens(t, BODY, { signal, requestId: 'req_count-1', headers: { 'anthropic-beta': 'token-counting-2024-11-01' } });

const estimated = (method: string, problem: string): TokenCount => ({ inputTokens: ESTIMATE, source: 'estimate', method, problem });

describe('anthropic: POST {baseUrl}/messages/count_tokens', () => {
  test('sends the passthrough body with the upstream model and without the generation-only fields; reads input_tokens', async () => {
    upstream.handle = (_req, res) => sendJson(res, 200, { input_tokens: 2095 });
    assert.deepEqual(await count(target({ type: 'anthropic' })), { inputTokens: 2095, source: 'upstream', method: 'anthropic' });
    assert.equal(upstream.received.length, 1);
    const [received] = upstream.received;
    assert.equal(received?.method, 'POST');
    assert.equal(received?.url, '/v1/messages/count_tokens');
    assert.equal(received?.headers['x-api-key'], 'sk-upstream-key');
    assert.equal(received?.headers['anthropic-version'], '2023-06-01');
    assert.equal(received?.headers['anthropic-beta'], 'token-counting-2024-11-01');
    assert.equal(received?.headers['content-type'], 'application/json');
    assert.equal(received?.headers['x-request-id'], 'req_count-1');
    assert.equal(
      received?.text,
      JSON.stringify({
        model: 'upstream-model',
        system: BODY['system'],
        messages: BODY['messages'],
        tools: BODY['tools'],
        thinking: BODY['thinking'],
      }),
    );
  });

  test('the count body keeps fields it does not know (an allowed extra field), in order', () => {
    assert.deepEqual(Object.keys(anthropicCountBody({ model: 'a', messages: [], context_management: {}, max_tokens: 5, output_config: {} }, 'up')), [
      'model',
      'messages',
      'context_management',
      'output_config',
    ]);
  });

  test('each failure falls back to the estimate and says why', async () => {
    const t = target({ type: 'anthropic' });
    const cases: Array<[string, (res: import('node:http').ServerResponse) => void]> = [
      ['http:500', (res) => sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: 'boom' } })],
      ['http:404', (res) => sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'no' } })],
      ['bad_response:not_json', (res) => sendJson(res, 200, 'input_tokens: 12')],
      ['bad_response:not_object', (res) => sendJson(res, 200, [12])],
      ['bad_response:no_input_tokens', (res) => sendJson(res, 200, { tokens: 12 })],
      ['bad_response:bad_input_tokens', (res) => sendJson(res, 200, { input_tokens: 12.5 })],
      ['bad_response:bad_input_tokens', (res) => sendJson(res, 200, { input_tokens: '12' })],
      ['bad_response:bad_input_tokens', (res) => sendJson(res, 200, { input_tokens: 0 })],
      ['bad_response:bad_input_tokens', (res) => sendJson(res, 200, { input_tokens: -3 })],
    ];
    for (const [problem, answer] of cases) {
      upstream.handle = (_req, res) => answer(res);
      assert.deepEqual(await count(t), estimated('anthropic', problem), problem);
    }
    assert.equal(upstream.received.length, cases.length);
  });

  test('an upstream that does not answer within firstByteTimeoutMs: the estimate, timeout:first_byte', async () => {
    upstream.handle = () => {};
    const scheduler = new ManualScheduler();
    const arrival = upstream.nextArrival();
    const pending = tracked(count(target({ type: 'anthropic', firstByteTimeoutMs: 250 }, scheduler)));
    await arrival;
    await scheduler.advance(249);
    assert.equal(pending.settled, false);
    await scheduler.advance(1);
    assert.deepEqual(await pending.promise, estimated('anthropic', 'timeout:first_byte'));
    await upstream.closed();
  });

  test('nothing listening: the estimate, refused:ECONNREFUSED', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    server.close();
    await once(server, 'close');
    const c = new Checker('f.json');
    const config = parseProvider(c, { type: 'anthropic', baseUrl: `http://127.0.0.1:${port}/v1` }, 'providers.p') as ProviderConfig;
    const t = { provider: createProviderBinding(config, 'k').provider, request: REQUEST };
    assert.deepEqual(await count(t), estimated('anthropic', 'refused:ECONNREFUSED'));
  });

  test('an answer beyond the provider\'s maxResponseBytes is not read to its end: the estimate, bad_response', async () => {
    upstream.handle = (_req, res) => sendJson(res, 200, { input_tokens: 12, padding: 'x'.repeat(2048) });
    const provider = withTokenCounter(createAnthropicProvider({ baseUrl: upstream.baseUrl, maxResponseBytes: 1024 }), 'anthropic', upstream.baseUrl);
    assert.deepEqual(await count({ provider, request: REQUEST }), estimated('anthropic', 'bad_response:bad_upstream_response'));
  });

  test('the client leaving abandons the count: a ClientAbortError, no estimate', async () => {
    upstream.handle = () => {};
    const controller = new AbortController();
    const arrival = upstream.nextArrival();
    const pending = count(target({ type: 'anthropic' }), controller.signal);
    await arrival;
    controller.abort(new Error('client left'));
    await assert.rejects(pending, (error) => isClientAbort(error));
    await upstream.closed();
  });

  test('"estimate" asks nothing of the upstream', async () => {
    assert.deepEqual(await count(target({ type: 'anthropic', tokenCount: 'estimate' })), { inputTokens: ESTIMATE, source: 'estimate', method: 'estimate' });
    assert.equal(upstream.received.length, 0);
  });
});

describe('vllm: POST {server root}/tokenize', () => {
  test('sends the chat request\'s model, messages and tools with the generation prompt; reads count', async () => {
    upstream.handle = (_req, res) => sendJson(res, 200, { count: 321, max_model_len: 8192, tokens: [1, 2, 3] });
    assert.deepEqual(await count(target({ type: 'openai', tokenCount: 'vllm', apiKeyEnv: 'K' })), { inputTokens: 321, source: 'upstream', method: 'vllm' });
    const [received] = upstream.received;
    assert.equal(received?.url, '/tokenize');
    assert.equal(received?.headers['authorization'], 'Bearer sk-upstream-key');
    assert.equal(received?.text, JSON.stringify({ model: 'upstream-model', messages: REQUEST.messages, tools: REQUEST.tools, add_generation_prompt: true }));
  });

  test('no tools, no tools field; a missing count is the estimate', async () => {
    upstream.handle = (_req, res) => sendJson(res, 200, { tokens: [1, 2, 3] });
    const { tools: _tools, ...noTools } = REQUEST;
    assert.deepEqual(await count(target({ type: 'openai', tokenCount: 'vllm' }, undefined, noTools)), estimated('vllm', 'bad_response:no_count'));
    assert.equal(upstream.received[0]?.text, JSON.stringify({ model: 'upstream-model', messages: REQUEST.messages, add_generation_prompt: true }));
  });

  test('the server root: the baseUrl without a trailing /v1 or query', () => {
    assert.equal(serverRoot('http://h:8000/v1'), 'http://h:8000/');
    assert.equal(serverRoot('http://h:8000/v1/'), 'http://h:8000/');
    assert.equal(serverRoot('http://h/llm/v1?api-version=1'), 'http://h/llm');
    assert.equal(serverRoot('http://h/llm'), 'http://h/llm');
  });
});

describe('llamacpp: POST /apply-template, then /tokenize', () => {
  test('templates the messages and tools, tokenizes the prompt with special tokens; counts the tokens', async () => {
    upstream.handle = (req, res) => {
      if (req.url === '/apply-template') sendJson(res, 200, { prompt: '<|im_start|>user\nHello, world<|im_end|>\n<|im_start|>assistant\n' });
      else sendJson(res, 200, { tokens: [151644, 872, 198, 9707, 11, 1879, 151645, 198, 151644, 77091, 198] });
    };
    assert.deepEqual(await count(target({ type: 'openai', tokenCount: 'llamacpp' })), { inputTokens: 11, source: 'upstream', method: 'llamacpp' });
    assert.deepEqual(
      upstream.received.map((r) => [r.url, r.text]),
      [
        ['/apply-template', JSON.stringify({ messages: REQUEST.messages, tools: REQUEST.tools })],
        ['/tokenize', JSON.stringify({ content: '<|im_start|>user\nHello, world<|im_end|>\n<|im_start|>assistant\n', add_special: true, parse_special: true })],
      ],
    );
  });

  test('a failed template, a prompt that is not text, or no tokens: the estimate with the reason', async () => {
    const t = target({ type: 'openai', tokenCount: 'llamacpp' });
    upstream.handle = (_req, res) => sendJson(res, 400, { error: { code: 400, message: 'tools param requires --jinja flag', type: 'invalid_request_error' } });
    assert.deepEqual(await count(t), estimated('llamacpp', 'http:400'));
    upstream.handle = (_req, res) => sendJson(res, 200, { prompt: 7 });
    assert.deepEqual(await count(t), estimated('llamacpp', 'bad_response:bad_prompt'));
    upstream.handle = (req, res) => sendJson(res, 200, req.url === '/apply-template' ? { prompt: 'x' } : { tokens: [] });
    assert.deepEqual(await count(t), estimated('llamacpp', 'bad_response:bad_tokens'));
    assert.equal(upstream.received.length, 4);
  });
});

describe('providers that cannot count', () => {
  test('openai by default and the demo: the estimate, nothing sent', async () => {
    assert.deepEqual(await count(target({ type: 'openai' })), { inputTokens: ESTIMATE, source: 'estimate', method: 'estimate' });
    const demo = createProviderBinding({ type: 'demo', delayMs: 0 }, undefined).provider;
    assert.deepEqual(await count({ provider: demo, request: REQUEST }), { inputTokens: ESTIMATE, source: 'estimate', method: 'estimate' });
    assert.equal(upstream.received.length, 0);
  });
});
