// Every error type of Anthropic's API as the official @anthropic-ai/sdk meets
// it at the gateway's Messages door: the SDK's error class, the status,
// Anthropic's body `{"type":"error","error":{type,message},"request_id"}`, the
// `request-id` header the SDK reads (the gateway's request id), and
// `retry-after` where waiting helps. The gateway's own refusals (key, policy,
// alias, size, limits, paused upstreams) and an upstream's failure.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { SCRIPTED_UPSTREAM_KEY, startScriptedAnthropic, type ScriptedUpstream } from '../support/scripted-upstreams.ts';
import { HAIKU_4, OPUS, OUTPUT_CAP, providerConfig, UPSTREAM_MODEL } from './messages-fixtures.ts';
import { startGateway, type TestGateway } from './harness.ts';

/** An alias whose upstream fails on request, with a breaker that opens at the first failure. */
const FRAGILE = 'claude-fragile';
const MAX_BODY = 16 * 1024;

let upstream: ScriptedUpstream;
let fragile: ScriptedUpstream;
let gw: TestGateway;

before(async () => {
  upstream = await startScriptedAnthropic();
  fragile = await startScriptedAnthropic();
  gw = await startGateway({
    configValue: {
      limits: { maxBodyBytes: MAX_BODY },
      providers: {
        up: providerConfig('anthropic', upstream.baseUrl),
        fragile: providerConfig('anthropic', fragile.baseUrl, { circuitBreaker: { failureThreshold: 1, openMs: 600_000 } }),
      },
      aliases: {
        [OPUS]: { provider: 'up', model: UPSTREAM_MODEL[OPUS], maxOutputTokens: OUTPUT_CAP },
        [HAIKU_4]: { provider: 'up', model: UPSTREAM_MODEL[HAIKU_4], maxOutputTokens: OUTPUT_CAP },
        [FRAGILE]: { provider: 'fragile', model: 'fragile-upstream-1', maxOutputTokens: OUTPUT_CAP },
      },
      auto: { default: OPUS },
    },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
  });
});
after(async () => {
  await gw.close();
  await upstream.close();
  await fragile.close();
});

type SdkError = InstanceType<typeof Anthropic.APIError>;

const hi = (model: string): Anthropic.MessageCreateParamsNonStreaming => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'say hi' }] });

function client(apiKey: string): Anthropic {
  return new Anthropic({ apiKey, baseURL: gw.baseUrl, maxRetries: 0 });
}

interface Expected {
  errorClass: new (...args: any[]) => SdkError;
  status: number;
  type: string;
  /** The message, or a pattern it matches. */
  message: string | RegExp;
  retryAfter?: boolean;
}

/** Sends with `requestId`, and checks the error the SDK raises against `expected`. */
async function refused(send: (options: { headers: Record<string, string> }) => Promise<unknown>, requestId: string, expected: Expected): Promise<SdkError> {
  let caught: unknown;
  try {
    await send({ headers: { 'x-request-id': requestId } });
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof expected.errorClass, `expected ${expected.errorClass.name}, got ${String(caught)}`);
  const error = caught as SdkError;
  assert.equal(error.status, expected.status);
  assert.equal(error.requestID, requestId, 'the request-id header');
  const body = error.error as { type: string; error: { type: string; message: string }; request_id: string };
  assert.deepEqual(Object.keys(body), ['type', 'error', 'request_id']);
  assert.equal(body.type, 'error');
  assert.equal(body.request_id, requestId);
  assert.deepEqual(Object.keys(body.error), ['type', 'message']);
  assert.equal(body.error.type, expected.type);
  if (typeof expected.message === 'string') assert.equal(body.error.message, expected.message);
  else assert.match(body.error.message, expected.message);
  assert.match(String(error.headers?.get('content-type')), /^application\/json/);
  if (expected.retryAfter === true) assert.match(String(error.headers?.get('retry-after')), /^[1-9]\d*$/, 'retry-after in whole seconds');
  return error;
}

test('a wrong key: 401 authentication_error, AuthenticationError', async () => {
  await refused((o) => client('pcl_not-a-key').messages.create(hi(OPUS), o), 'err-401', {
    errorClass: Anthropic.AuthenticationError,
    status: 401,
    type: 'authentication_error',
    message: 'Incorrect API key provided, or the key has been revoked.',
  });
});

test('a key not allowed the alias: 403 permission_error, PermissionDeniedError', async () => {
  const created = await gw.state.keys.create('opus-only', { allowedAliases: [OPUS] });
  await refused((o) => client(created.key).messages.create(hi(HAIKU_4), o), 'err-403', {
    errorClass: Anthropic.PermissionDeniedError,
    status: 403,
    type: 'permission_error',
    message: new RegExp(HAIKU_4),
  });
  assert.equal(upstream.received.length, 0, 'nothing reached the upstream');
});

test('an unknown alias: 404 not_found_error, NotFoundError', async () => {
  await refused((o) => client(gw.key).messages.create(hi('claude-sonnet-9-9'), o), 'err-404', {
    errorClass: Anthropic.NotFoundError,
    status: 404,
    type: 'not_found_error',
    message: /claude-sonnet-9-9/,
  });
});

test('a body over limits.maxBodyBytes: 413 request_too_large', async () => {
  const big = { model: OPUS, max_tokens: 64, messages: [{ role: 'user' as const, content: 'x'.repeat(MAX_BODY) }] };
  await refused((o) => client(gw.key).messages.create(big, o), 'err-413', { errorClass: Anthropic.ContentTooLargeError, status: 413, type: 'request_too_large', message: /./ });
});

test('a key over its request rate: 429 rate_limit_error with retry-after, RateLimitError', async () => {
  const created = await gw.state.keys.create('one-a-minute', { limits: { requestsPerMinute: 1 } });
  const limited = client(created.key);
  const first = await limited.messages.create(hi(OPUS));
  assert.equal(first.model, OPUS);
  await refused((o) => limited.messages.create(hi(OPUS), o), 'err-429', { errorClass: Anthropic.RateLimitError, status: 429, type: 'rate_limit_error', message: /./, retryAfter: true });
});

test('an upstream 5xx: 502 api_error; then, its breaker open, 529 overloaded_error with retry-after', async () => {
  fragile.failures.push({ status: 500, type: 'api_error', message: 'Internal server error' });
  await refused((o) => client(gw.key).messages.create(hi(FRAGILE), o), 'err-502', { errorClass: Anthropic.InternalServerError, status: 502, type: 'api_error', message: /./ });
  assert.deepEqual(fragile.answered, ['failure']);
  await refused((o) => client(gw.key).messages.create(hi(FRAGILE), o), 'err-529', { errorClass: Anthropic.OverloadedError, status: 529, type: 'overloaded_error', message: /./, retryAfter: true });
  assert.equal(fragile.received.length, 1, 'the open breaker sent nothing upstream');
});

test('an invalid body: 400 invalid_request_error naming the field, BadRequestError', async () => {
  await refused((o) => client(gw.key).messages.create({ ...hi(OPUS), max_tokens: 0 }, o), 'err-400', {
    errorClass: Anthropic.BadRequestError,
    status: 400,
    type: 'invalid_request_error',
    message: /^max_tokens: /,
  });
});

test('a streamed request refused before the stream: the same error, not an event stream', async () => {
  await refused((o) => client('pcl_not-a-key').messages.create({ ...hi(OPUS), stream: true }, o), 'err-401-stream', {
    errorClass: Anthropic.AuthenticationError,
    status: 401,
    type: 'authentication_error',
    message: 'Incorrect API key provided, or the key has been revoked.',
  });
});
