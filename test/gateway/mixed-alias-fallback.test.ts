// An alias whose targets speak different provider types (an OpenAI-compatible
// primary, Anthropic fallbacks): a request one target cannot express is not
// sent to it. The primary's outage reaches the client as the upstream failure
// it is, never as the fallback's translation refusal; a 400 comes only when no
// target of the alias could ever take the request, and then before any
// upstream call.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { refuseLikeAnthropic } from '../providers/anthropic-constraints.ts';
import { postChat, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

let primary: FakeUpstream;
let claude: FakeUpstream;
let gw: TestGateway;

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
const completion = (content: string) => ({
  id: 'chatcmpl-p',
  object: 'chat.completion',
  created: 1,
  model: 'p-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});
const message = (text: string) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test-1',
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 1 },
});
const PRIMARY_DOWN = { error: { message: 'the primary is down', type: 'server_error', param: null, code: null } };

before(async () => {
  primary = await startFakeUpstream(() => {});
  claude = await startFakeUpstream(() => {});
  const breaker = { failureThreshold: 1000 };
  gw = await startGateway({
    configValue: {
      providers: {
        local: { type: 'openai', baseUrl: primary.baseUrl, retry: { maxAttempts: 1 }, circuitBreaker: breaker },
        claude: { type: 'anthropic', baseUrl: claude.baseUrl, apiKeyEnv: 'CLAUDE_KEY', retry: { maxAttempts: 1 }, circuitBreaker: breaker },
      },
      aliases: {
        'service-mixed': {
          targets: [
            { provider: 'local', model: 'p-model', priority: 0 },
            { provider: 'claude', model: 'claude-test-1', priority: 1 },
          ],
        },
        'service-claudes': {
          targets: [
            { provider: 'claude', model: 'claude-test-1', priority: 0 },
            { provider: 'claude', model: 'claude-test-2', priority: 1 },
          ],
        },
        'service-claude': { provider: 'claude', model: 'claude-test-1' },
      },
    },
    env: { CLAUDE_KEY: 'sk-ant-test' },
  });
});
after(async () => {
  await gw.close();
  await primary.close();
  await claude.close();
});
beforeEach(() => {
  primary.requests.length = 0;
  claude.requests.length = 0;
  primary.handle = (_r, res) => json(res, 500, PRIMARY_DOWN);
  claude.handle = (r, res) => {
    if (refuseLikeAnthropic(res, r.body)) return;
    json(res, 200, message('from claude'));
  };
});

async function accessLine(requestId: string): Promise<Record<string, unknown>> {
  const find = () => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

const hi = (model: string, extra: Record<string, unknown>) => ({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });

test('stop ["\\n"] while the primary is up: the primary answers, Claude is not asked', async () => {
  primary.handle = (_r, res) => json(res, 200, completion('from the primary'));
  const res = await postChat(gw, hi('service-mixed', { stop: ['\n'] }), { 'x-request-id': 'mix-up' });
  assert.equal(res.status, 200);
  assert.equal((res.json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, 'from the primary');
  assert.deepEqual((primary.requests[0]?.body as { stop: unknown }).stop, ['\n']);
  assert.equal(claude.requests.length, 0);
  const line = await accessLine('mix-up');
  assert.equal(line['target'], 'local/p-model');
  assert.equal(line['attempts'], undefined);
});

for (const [name, extra, param] of [
  ['stop ["\\n"]', { stop: ['\n'] }, 'stop[0]'],
  ['response_format json_object', { response_format: { type: 'json_object' } }, 'response_format.type'],
] as const) {
  test(`${name}, the primary answers 500: the client gets the upstream failure, Claude is skipped and named in the access line`, async () => {
    const id = `mix-down-${param.replace(/[^a-z0-9]/g, '-')}`;
    const res = await postChat(gw, hi('service-mixed', extra), { 'x-request-id': id });
    assert.equal(res.status, 502, res.text);
    assert.deepEqual(res.json(), {
      error: { message: 'The upstream provider failed (HTTP 500): the primary is down', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
    assert.equal(primary.requests.length, 1);
    assert.equal(claude.requests.length, 0, 'a request Claude cannot take is never sent to it');
    const line = await accessLine(id);
    assert.equal(line['status'], 502);
    assert.equal(line['error'], 'upstream_error');
    assert.equal(line['target'], 'local/p-model');
    assert.equal(line['attempts'], `local/p-model:fallback:502,claude/claude-test-1:skipped_unsupported:${param}`);
  });
}

test('a request Claude can take still falls back to it when the primary answers 500', async () => {
  const res = await postChat(gw, hi('service-mixed', { stop: ['END'] }), { 'x-request-id': 'mix-takes' });
  assert.equal(res.status, 200);
  assert.equal((res.json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, 'from claude');
  assert.deepEqual((claude.requests[0]?.body as { stop_sequences: unknown }).stop_sequences, ['END']);
  const line = await accessLine('mix-takes');
  assert.equal(line['target'], 'claude/claude-test-1');
  assert.equal(line['attempts'], 'local/p-model:fallback:502,claude/claude-test-1:ok');
});

test('a stream cut the same way: the upstream failure before any event, Claude never asked', async () => {
  const res = await postChat(gw, hi('service-mixed', { stream: true, response_format: { type: 'json_object' } }), { 'x-request-id': 'mix-stream' });
  assert.equal(res.status, 502);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'upstream_error');
  assert.equal(claude.requests.length, 0);
  assert.equal((await accessLine('mix-stream'))['attempts'], 'local/p-model:fallback:502,claude/claude-test-1:skipped_unsupported:response_format.type');
});

test('no target of the alias can take the request: 400 before any upstream call, naming each target by position and provider type and why; the access line has their ids', async () => {
  const res = await postChat(gw, hi('service-claudes', { stop: ['\n'] }), { 'x-request-id': 'mix-none' });
  assert.equal(res.status, 400);
  const reason =
    "Invalid value for 'stop[0]': the stop sequence is empty or only whitespace. The provider behind this model alias refuses such stop sequences, and leaving it out would let the answer run past it. Remove it, or use a sequence with a visible character.";
  assert.deepEqual(res.json(), {
    error: {
      message: `No upstream of model 'service-claudes' can take this request. target 1 (anthropic): ${reason} target 2 (anthropic): ${reason}`,
      type: 'invalid_request_error',
      param: 'stop[0]',
      code: 'invalid_value',
    },
  });
  assert.equal(claude.requests.length, 0);
  assert.equal(primary.requests.length, 0);
  const line = await accessLine('mix-none');
  assert.equal(line['status'], 400);
  assert.equal(line['error'], 'invalid_value');
  assert.equal(line['target'], null);
  assert.equal(line['attempts'], 'claude/claude-test-1:skipped_unsupported:stop[0],claude/claude-test-2:skipped_unsupported:stop[0]');
});

test('an alias of one Anthropic target keeps the translation 400 as it is, with no upstream call', async () => {
  const res = await postChat(gw, hi('service-claude', { response_format: { type: 'json_object' } }));
  assert.equal(res.status, 400);
  assert.deepEqual(res.json(), {
    error: {
      message:
        "Invalid value for 'response_format.type': 'json_object' is not supported by the provider behind this model alias. Ask for JSON in the prompt, or use a model alias served by an OpenAI-compatible provider.",
      type: 'invalid_request_error',
      param: 'response_format.type',
      code: 'invalid_value',
    },
  });
  assert.equal(claude.requests.length, 0);
});
