// Retries, fallbacks, breakers, timeouts, service-auto routing and per-key
// usage through the real gateway, against fake upstreams on loopback. The
// gateway runs on a ManualScheduler: a timeout or a Retry-After wait happens
// when the test moves time, at its exact deadline, never because the machine
// was slow.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { tracked } from '../support/settled.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const completion = (content: string) => ({
  id: 'chatcmpl-r',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, prompt_tokens_details: { cached_tokens: 4 } },
});
function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
const hi = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });

let primary: FakeUpstream;
let backup: FakeUpstream;
let gw: TestGateway;
const scheduler = new ManualScheduler();
// Different deadlines, so that the test can tell which timer is armed.
const fast = { retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 2000 }, firstByteTimeoutMs: 300, idleTimeoutMs: 400 };

/** Waits until a timer of `ms` is armed on the gateway's scheduler (the deadlines it asserts are counted from there). */
const armed = (ms: number, what: string): Promise<void> => eventually(() => scheduler.pending().includes(ms), what);

before(async () => {
  primary = await startFakeUpstream(() => {});
  backup = await startFakeUpstream(() => {});
  gw = await startGateway({
    scheduler,
    configValue: {
      providers: {
        primary: { type: 'openai', baseUrl: primary.baseUrl, ...fast, circuitBreaker: { failureThreshold: 1000 } },
        backup: { type: 'openai', baseUrl: backup.baseUrl, ...fast, circuitBreaker: { failureThreshold: 1000 } },
        flaky: { type: 'openai', baseUrl: primary.baseUrl, ...fast, retry: { maxAttempts: 1 }, circuitBreaker: { failureThreshold: 2, openMs: 60_000 } },
        demo: { type: 'demo' },
      },
      aliases: {
        'service-chat': { provider: 'demo', capabilities: [] },
        'service-ha': { targets: [{ provider: 'primary', model: 'p-model' }, { provider: 'backup', model: 'b-model', priority: 1 }] },
        'service-breaker': { targets: [{ provider: 'flaky', model: 'f-model' }, { provider: 'backup', model: 'b-model', priority: 1 }] },
        'service-vision': { provider: 'backup', model: 'vision-model', capabilities: ['vision'] },
        // Above the prompt bound of a short message with one tool (64 + 13 + 45 + 1000), below that of 8000 characters.
        'service-tools': { provider: 'backup', model: 'tools-model', capabilities: ['tools'], contextWindow: 2048 },
      },
      auto: { default: 'service-chat' },
    },
  });
});
after(async () => {
  await gw.close();
  await primary.close();
  await backup.close();
});
beforeEach(() => {
  primary.requests.length = 0;
  backup.requests.length = 0;
});

describe('retries and fallbacks', () => {
  test('a 500 then a success: retried on the same target with the same request id', async () => {
    let n = 0;
    primary.handle = (_r, res) => (n++ === 0 ? json(res, 500, { error: { message: 'boom' } }) : json(res, 200, completion('second try')));
    const res = await postChat(gw, hi('service-ha'), { 'x-request-id': 'retry-1' });
    assert.equal(res.status, 200);
    assert.equal((res.json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, 'second try');
    assert.deepEqual(primary.requests.map((r) => r.headers['x-request-id']), ['retry-1', 'retry-1']);
    assert.equal(backup.requests.length, 0);
  });

  test('429 with a short Retry-After is waited out, exactly', async () => {
    let n = 0;
    // 2 s: the write-stall sweep's own period is 1 s, and armed() must see the wait, not the sweep.
    primary.handle = (_r, res) => (n++ === 0 ? json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '2' }) : json(res, 200, completion('after wait')));
    const res = tracked(postChat(gw, hi('service-ha')));
    await armed(2000, 'the Retry-After wait');
    await scheduler.advance(1999);
    assert.equal(primary.requests.length, 1);
    await scheduler.advance(1);
    assert.equal((await res.promise).status, 200);
    assert.equal(((await res.promise).json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, 'after wait');
    assert.equal(primary.requests.length, 2);
  });

  test('a dead primary falls back to the backup target', async () => {
    primary.handle = (_r, res) => json(res, 503, { error: { message: 'down' } });
    backup.handle = (_r, res) => json(res, 200, completion('from backup'));
    const res = await postChat(gw, hi('service-ha'));
    assert.equal(res.status, 200);
    assert.equal((res.json() as { model: string }).model, 'service-ha');
    assert.equal(primary.requests.length, 2);
    assert.equal(backup.requests.length, 1);
    assert.equal((backup.requests[0]!.body as { model: string }).model, 'b-model');
  });

  test('every target failing with 5xx is a 502 for the client', async () => {
    primary.handle = (_r, res) => json(res, 500, { error: { message: 'x' } });
    backup.handle = (_r, res) => json(res, 502, { error: { message: 'y' } });
    const res = await postChat(gw, hi('service-ha'));
    assert.equal(res.status, 502);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'upstream_error');
  });

  test('429 everywhere stays 429 with Retry-After', async () => {
    primary.handle = (_r, res) => json(res, 429, { error: { message: 'busy' } }, { 'retry-after': '120' });
    backup.handle = (_r, res) => json(res, 429, { error: { message: 'busy' } }, { 'retry-after': '120' });
    const res = await postChat(gw, hi('service-ha'));
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '120');
    assert.deepEqual(res.json(), {
      error: { message: 'The upstream provider is rate limiting requests; retry after a pause.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    });
    // A wait longer than maxRetryAfterMs is not waited out: one attempt each.
    assert.equal(primary.requests.length, 1);
    assert.equal(backup.requests.length, 1);
  });

  test('an upstream 400 is not retried nor sent to the backup', async () => {
    primary.handle = (_r, res) => json(res, 400, { error: { message: 'bad input', type: 'invalid_request_error' } });
    const res = await postChat(gw, hi('service-ha'));
    assert.equal(res.status, 400);
    assert.deepEqual(res.json(), { error: { message: 'bad input', type: 'invalid_request_error', param: null, code: null } });
    assert.equal(primary.requests.length, 1);
    assert.equal(backup.requests.length, 0);
  });

  test('a primary that hangs before the first byte times out at firstByteTimeoutMs and the backup answers', async () => {
    primary.handle = () => {};
    backup.handle = (_r, res) => json(res, 200, completion('backup after timeout'));
    const res = tracked(postChat(gw, hi('service-ha')));
    await eventually(() => primary.requests.length === 1, 'the request at the primary');
    await scheduler.advance(299);
    assert.equal(backup.requests.length, 0);
    assert.equal(res.settled, false);
    await scheduler.advance(1);
    assert.equal((await res.promise).status, 200);
    assert.equal(((await res.promise).json() as { choices: [{ message: { content: string } }] }).choices[0].message.content, 'backup after timeout');
    // One attempt: a timeout before the first byte is not retried on the same target.
    assert.equal(primary.requests.length, 1);
    assert.equal(backup.requests.length, 1);
  });

  test('a stream that stalls after its first chunk ends with an error frame, not a retry', async () => {
    primary.handle = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] })}\n\n`);
    };
    const pending = tracked(postChat(gw, hi('service-ha', { stream: true })));
    await armed(400, 'the idle timer, once the first chunk is relayed');
    await scheduler.advance(399);
    assert.equal(pending.settled, false);
    await scheduler.advance(1);
    const res = await pending.promise;
    assert.equal(res.status, 200);
    const data = sseData(res.text);
    assert.equal(data.length, 2);
    assert.deepEqual(JSON.parse(data[1]!), {
      error: { message: 'The upstream stream stalled: no data for 400 ms.', type: 'server_error', param: null, code: 'upstream_timeout' },
    });
    assert.equal(primary.requests.length, 1);
    assert.equal(backup.requests.length, 0);
  });

  test('a stream whose first attempt fails before any chunk is retried invisibly', async () => {
    let n = 0;
    primary.handle = (_r, res) => {
      if (n++ === 0) {
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    const res = await postChat(gw, hi('service-ha', { stream: true }));
    assert.equal(res.status, 200);
    const data = sseData(res.text);
    assert.equal(data.at(-1), '[DONE]');
    assert.equal(primary.requests.length, 2);
  });
});

test('the circuit breaker opens after consecutive failures and stops contacting the dead target', async () => {
  primary.handle = (_r, res) => json(res, 500, { error: { message: 'dead' } });
  backup.handle = (_r, res) => json(res, 200, completion('backup'));
  for (let i = 0; i < 2; i++) assert.equal((await postChat(gw, hi('service-breaker'))).status, 200);
  assert.equal(primary.requests.length, 2);
  for (let i = 0; i < 3; i++) assert.equal((await postChat(gw, hi('service-breaker'))).status, 200);
  assert.equal(primary.requests.length, 2, 'an open breaker sends nothing to the dead target');
  assert.equal(backup.requests.length, 5);
});

describe('service-auto', () => {
  test('the route header and model name the resolved alias and the reason', async () => {
    backup.handle = (_r, res) => json(res, 200, completion('seen'));
    const image = { role: 'user', content: [{ type: 'text', text: 'what?' }, { type: 'image_url', image_url: { url: 'https://img.test/a.png' } }] };
    const v = await postChat(gw, { model: 'service-auto', messages: [image] });
    assert.equal(v.headers['x-portcullis-route'], 'service-vision; reason=image_url');
    assert.equal((v.json() as { model: string }).model, 'service-vision');
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const t = await postChat(gw, { model: 'service-auto', messages: [{ role: 'user', content: 'x' }], tools });
    assert.equal(t.headers['x-portcullis-route'], 'service-tools; reason=tools');
    const long = await postChat(gw, { model: 'service-auto', messages: [{ role: 'user', content: 'x'.repeat(8000) }], tools });
    assert.equal(long.headers['x-portcullis-route'], 'service-chat; reason=default');
    const plain = await postChat(gw, hi('service-auto'));
    assert.equal(plain.headers['x-portcullis-route'], 'service-chat; reason=default');
    const named = await postChat(gw, hi('service-chat'));
    assert.equal(named.headers['x-portcullis-route'], 'service-chat; reason=requested');
  });
});

test('usage is accounted per key, streamed completions included, and flushed to usage.json', async () => {
  primary.handle = (_r, res) => json(res, 200, completion('counted'));
  backup.handle = (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const c = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };
    res.write(`data: ${JSON.stringify({ ...c, choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ ...c, choices: [], usage: { prompt_tokens: 11, completion_tokens: 1, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0 } } })}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  const before = await usageOf(gw);
  await postChat(gw, hi('service-ha'));
  await postChat(gw, hi('service-vision', { stream: true }));
  await postChat(gw, hi('service-ha', { n: 2 }));
  const after = await usageOf(gw);
  assert.deepEqual(
    {
      requests: after.requests - before.requests,
      promptTokens: after.promptTokens - before.promptTokens,
      completionTokens: after.completionTokens - before.completionTokens,
      cachedTokens: after.cachedTokens - before.cachedTokens,
      errors: after.errors - before.errors,
    },
    { requests: 3, promptTokens: 18, completionTokens: 3, cachedTokens: 4, errors: 1 },
  );
});

async function usageOf(g: TestGateway): Promise<{ requests: number; promptTokens: number; completionTokens: number; cachedTokens: number; errors: number }> {
  // Usage is recorded as each response closes on the gateway's side, which may follow the client's end of it.
  await eventually(() => g.gateway.inFlight === 0, 'the responses closed on the gateway');
  await g.flushUsage();
  try {
    const file = JSON.parse(readFileSync(path.join(g.dataDir, 'usage.json'), 'utf8')) as { keys: Record<string, { totals: never }> };
    return file.keys[g.keyId]?.totals ?? { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 };
  } catch {
    return { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 };
  }
}
