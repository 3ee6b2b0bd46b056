// The Vercel AI SDK's generateObject and streamObject through
// `@ai-sdk/openai-compatible` and the gateway. The provider sends json_schema
// only with `supportsStructuredOutputs: true` (else json_object, with the
// schema left out and a warning); against a fake upstream that answers right,
// answers JSON that breaks the schema, and falls back; the demo provider; and
// the default policy's refusal as the SDK surfaces it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateObject, streamObject } from 'ai';
import { loadSnippet } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';
import { BAD_ANSWER, NOT_ACCEPTED_MESSAGE, PROMPT, startStructuredSetup, Weather, WEATHER_PROPERTIES, type StructuredSetup } from './structured-upstream.ts';

const TEST_TIMEOUT = { timeout: 20_000 };
const CALL = { maxRetries: 0, timeout: 10_000 } as const;

/** What generateObject / streamObject put on the wire: strict true, the name "response", the draft-07 dialect named. */
const RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: {
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: WEATHER_PROPERTIES,
      required: ['city', 'temperature', 'unit'],
      additionalProperties: false,
    },
    strict: true,
    name: 'response',
  },
};
const MESSAGES = [{ role: 'user', content: PROMPT }];

let accepting: StructuredSetup;
let defaults: StructuredSetup;
before(async () => {
  accepting = await startStructuredSetup(['json_schema']);
  defaults = await startStructuredSetup(null);
});
after(async () => {
  await accepting.close();
  await defaults.close();
});

function provider(setup: StructuredSetup, supportsStructuredOutputs = true) {
  const recorder = recordingFetch();
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL: setup.baseURL, apiKey: setup.gw.key, fetch: recorder.fetch, supportsStructuredOutputs });
  return { portcullis, sent: recorder.requests };
}

/** streamObject's partial objects and its final object (the promises settle only once the stream is read). */
async function streamed(model: Parameters<typeof streamObject>[0]['model']): Promise<{ partials: unknown[]; object: unknown; errors: unknown[] }> {
  const errors: unknown[] = [];
  const result = streamObject({ model, schema: Weather, prompt: PROMPT, ...CALL, onError: ({ error }) => void errors.push(error) });
  const partials: unknown[] = [];
  for await (const partial of result.partialObjectStream) partials.push(partial);
  const object = await result.object.catch((e: unknown) => e);
  return { partials, object, errors };
}

describe('with "requestFields": ["json_schema"]', () => {
  test('ai-sdk-structured.mjs: as shown, on the demo provider and on an upstream', TEST_TIMEOUT, async () => {
    const run = await loadSnippet('ai-sdk-structured.mjs');
    const target = { baseURL: accepting.baseURL, apiKey: accepting.gw.key };
    const demo = { city: PROMPT, temperature: 0, unit: 'C' };
    const good = { city: 'Oslo', temperature: 4, unit: 'C' };
    assert.deepEqual(await run(target), { object: demo, streamed: demo });
    assert.deepEqual(await run({ ...target, model: 'service-good' }), { object: good, streamed: good });
    assert.equal(accepting.received().length, 2);
  });

  test('generateObject: the json_schema reaches the upstream as the SDK sent it; the application gets the object', TEST_TIMEOUT, async () => {
    const { portcullis, sent } = provider(accepting);
    const result = await generateObject({ model: portcullis('service-good'), schema: Weather, prompt: PROMPT, ...CALL });
    assert.deepEqual(sent.map((r) => r.body), [{ model: 'service-good', response_format: RESPONSE_FORMAT, messages: MESSAGES }]);
    assert.deepEqual(accepting.received(), [{ model: 'good-model', response_format: RESPONSE_FORMAT, messages: MESSAGES, max_tokens: 4096 }]);
    assert.deepEqual(result.object, { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.equal(result.finishReason, 'stop');
  });

  test('streamObject: the same json_schema with stream true; partial objects, then the whole', TEST_TIMEOUT, async () => {
    const { portcullis, sent } = provider(accepting);
    const { partials, object, errors } = await streamed(portcullis('service-good'));
    assert.deepEqual(sent.map((r) => r.body), [{ model: 'service-good', response_format: RESPONSE_FORMAT, messages: MESSAGES, stream: true }]);
    assert.deepEqual(accepting.received(), [
      { model: 'good-model', response_format: RESPONSE_FORMAT, messages: MESSAGES, stream: true, max_tokens: 4096, stream_options: { include_usage: true } },
    ]);
    assert.deepEqual(object, { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.deepEqual(partials.at(-1), object);
    assert.ok(partials.length >= 2, JSON.stringify(partials));
    assert.deepEqual(errors, []);
  });

  test('without supportsStructuredOutputs the SDK sends json_object and no schema at all', TEST_TIMEOUT, async () => {
    const { portcullis, sent } = provider(accepting, false);
    const result = await generateObject({ model: portcullis('service-good'), schema: Weather, prompt: PROMPT, ...CALL });
    assert.deepEqual(sent.map((r) => r.body), [{ model: 'service-good', response_format: { type: 'json_object' }, messages: MESSAGES }]);
    assert.deepEqual(result.object, { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.deepEqual(result.warnings?.map((w) => w.type), ['unsupported']);
    accepting.received();
  });

  test('the demo provider answers the schema\'s instance, the prompt in its first free string', TEST_TIMEOUT, async () => {
    const { portcullis } = provider(accepting);
    const expected = { city: PROMPT, temperature: 0, unit: 'C' };
    const result = await generateObject({ model: portcullis('service-chat'), schema: Weather, prompt: PROMPT, ...CALL });
    assert.deepEqual(result.object, expected);
    assert.deepEqual((await streamed(portcullis('service-chat'))).object, expected);
    assert.equal(accepting.received().length, 0);
  });
});

// The answer checked against the strict schema: these need the gateway's check of answers.
describe('an answer that breaks the strict schema', () => {
  test('generateObject: APICallError 502 upstream_schema_mismatch naming $.temperature', TEST_TIMEOUT, async () => {
    const { portcullis } = provider(accepting);
    const error = await generateObject({ model: portcullis('service-bad'), schema: Weather, prompt: PROMPT, ...CALL }).then(
      () => assert.fail(`the application got ${BAD_ANSWER}`),
      (e: unknown) => e,
    );
    assert.ok(APICallError.isInstance(error), String(error));
    const envelope = (error.data as { error?: { code?: string; type?: string } } | undefined)?.error;
    assert.deepEqual([error.statusCode, envelope?.type, envelope?.code], [502, 'upstream_error', 'upstream_schema_mismatch']);
    assert.match(error.message, /\$\.temperature/);
    assert.deepEqual(accepting.received().map((b) => (b as { model: string }).model), ['bad-model']);
  });

  test('generateObject: a second target that answers right is used instead', TEST_TIMEOUT, async () => {
    const { portcullis } = provider(accepting);
    const result = await generateObject({ model: portcullis('service-fallback'), schema: Weather, prompt: PROMPT, ...CALL });
    assert.deepEqual(result.object, { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.deepEqual(accepting.received().map((b) => (b as { model: string }).model), ['bad-model', 'good-model']);
  });

  test('streamObject: no object; onError gets the error naming $.temperature', TEST_TIMEOUT, async () => {
    const { portcullis } = provider(accepting);
    const { object, errors } = await streamed(portcullis('service-bad'));
    assert.ok(object instanceof Error, `the application got ${JSON.stringify(object)}`);
    assert.equal(errors.length, 1);
    assert.match(String((errors[0] as Error).message), /\$\.temperature/);
    accepting.received();
  });
});

describe('the default policy', () => {
  test('generateObject and streamObject are refused with 400 naming "requestFields" (APICallError; streamObject through onError)', TEST_TIMEOUT, async () => {
    const { portcullis } = provider(defaults);
    const error = await generateObject({ model: portcullis('service-good'), schema: Weather, prompt: PROMPT, ...CALL }).then(() => assert.fail('accepted'), (e: unknown) => e);
    assert.ok(APICallError.isInstance(error), String(error));
    assert.deepEqual(
      { status: error.statusCode, message: error.message, error: (error.data as { error?: unknown }).error, retryable: error.isRetryable },
      {
        status: 400,
        message: NOT_ACCEPTED_MESSAGE,
        error: { message: NOT_ACCEPTED_MESSAGE, type: 'invalid_request_error', param: 'response_format.type', code: 'invalid_value' },
        retryable: false,
      },
    );
    const { partials, object, errors } = await streamed(portcullis('service-good'));
    assert.deepEqual(partials, []);
    assert.ok(object instanceof Error);
    assert.equal(errors.length, 1);
    assert.ok(APICallError.isInstance(errors[0]));
    assert.equal((errors[0] as APICallError).message, NOT_ACCEPTED_MESSAGE);
    assert.deepEqual(defaults.received(), []);
  });
});
