// The `openai` SDK's structured outputs through the gateway:
// chat.completions.parse() and chat.completions.stream() with
// zodResponseFormat, against a fake upstream that answers right, answers JSON
// that breaks the schema, and falls back; the demo provider; and the default
// policy's refusal as the SDK surfaces it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { sampleValue } from '../../src/schema/sample-value.ts';
import { loadSnippet } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';
import { BAD_ANSWER, GOOD_ANSWER, NOT_ACCEPTED_MESSAGE, PROMPT, startStructuredSetup, Weather, WEATHER_PROPERTIES, type StructuredSetup } from './structured-upstream.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

/** What zodResponseFormat(Weather, 'weather') puts on the wire: strict true, the draft-07 dialect named. */
const RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: {
    name: 'weather',
    strict: true,
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: WEATHER_PROPERTIES,
      required: ['city', 'temperature', 'unit'],
      additionalProperties: false,
    },
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

function client(setup: StructuredSetup) {
  const recorder = recordingFetch();
  const openai = new OpenAI({ baseURL: setup.baseURL, apiKey: setup.gw.key, maxRetries: 0, timeout: 10_000, fetch: recorder.fetch });
  return { openai, sent: recorder.requests };
}

const parse = (openai: OpenAI, model: string) => openai.chat.completions.parse({ model, messages: [{ role: 'user', content: PROMPT }], response_format: zodResponseFormat(Weather, 'weather') });
const stream = (openai: OpenAI, model: string) => openai.chat.completions.stream({ model, messages: [{ role: 'user', content: PROMPT }], response_format: zodResponseFormat(Weather, 'weather') });

describe('with "requestFields": ["json_schema"]', () => {
  test('openai-structured.mjs: as shown, on the demo provider and on an upstream', TEST_TIMEOUT, async () => {
    const run = await loadSnippet('openai-structured.mjs');
    const target = { baseURL: accepting.baseURL, apiKey: accepting.gw.key };
    const demo = { city: PROMPT, temperature: 0, unit: 'C' };
    const good = { city: 'Oslo', temperature: 4, unit: 'C' };
    assert.deepEqual(await run(target), { parsed: demo, streamed: demo });
    assert.deepEqual(await run({ ...target, model: 'service-good' }), { parsed: good, streamed: good });
    assert.equal(accepting.received().length, 2);
  });

  test('parse(): the json_schema reaches the upstream as the SDK sent it; the application gets the parsed object', TEST_TIMEOUT, async () => {
    const { openai, sent } = client(accepting);
    const completion = await parse(openai, 'service-good');
    assert.deepEqual(sent.map((r) => r.body), [{ model: 'service-good', messages: MESSAGES, response_format: RESPONSE_FORMAT }]);
    // the gateway adds its output bound (max_tokens) and, when streaming, asks for usage
    assert.deepEqual(accepting.received(), [{ model: 'good-model', messages: MESSAGES, response_format: RESPONSE_FORMAT, max_tokens: 4096 }]);
    const message = completion.choices[0]?.message;
    assert.equal(message?.content, GOOD_ANSWER);
    assert.deepEqual(message?.parsed, { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.equal(message?.refusal, null);
  });

  test('stream(): the same json_schema with stream true; the final message parsed', TEST_TIMEOUT, async () => {
    const { openai, sent } = client(accepting);
    const runner = stream(openai, 'service-good');
    const deltas: string[] = [];
    runner.on('content.delta', ({ delta }) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    assert.deepEqual(sent.map((r) => r.body), [{ model: 'service-good', messages: MESSAGES, response_format: RESPONSE_FORMAT, stream: true }]);
    assert.deepEqual(accepting.received(), [
      { model: 'good-model', messages: MESSAGES, response_format: RESPONSE_FORMAT, stream: true, max_tokens: 4096, stream_options: { include_usage: true } },
    ]);
    assert.equal(deltas.join(''), GOOD_ANSWER);
    assert.ok(deltas.length >= 3);
    assert.deepEqual(final.choices[0]?.message.parsed, { city: 'Oslo', temperature: 4, unit: 'C' });
  });

  test('the demo provider answers the schema\'s instance, the prompt in its first free string', TEST_TIMEOUT, async () => {
    const { openai } = client(accepting);
    const expected = { city: PROMPT, temperature: 0, unit: 'C' };
    assert.deepEqual(sampleValue(RESPONSE_FORMAT.json_schema.schema, PROMPT), expected);
    const completion = await parse(openai, 'service-chat');
    assert.deepEqual(completion.choices[0]?.message.parsed, expected);
    assert.equal(completion.model, 'service-chat');
    const final = await stream(openai, 'service-chat').finalChatCompletion();
    assert.deepEqual(final.choices[0]?.message.parsed, expected);
    assert.equal(accepting.received().length, 0);
  });
});

// The answer checked against the strict schema: these need the gateway's check of answers.
describe('an answer that breaks the strict schema', () => {
  test('parse(): 502 upstream_schema_mismatch naming $.temperature, never the bad JSON', TEST_TIMEOUT, async () => {
    const { openai } = client(accepting);
    const error = await parse(openai, 'service-bad').then(() => assert.fail(`the application got ${BAD_ANSWER}`), (e: unknown) => e);
    assert.ok(error instanceof OpenAI.InternalServerError, String(error));
    assert.deepEqual([error.status, error.type, error.code], [502, 'upstream_error', 'upstream_schema_mismatch']);
    assert.match(String(error.error && (error.error as { message?: string }).message), /\$\.temperature/);
    assert.deepEqual(accepting.received().map((b) => (b as { model: string }).model), ['bad-model']);
  });

  test('parse(): a second target that answers right is used instead', TEST_TIMEOUT, async () => {
    const { openai } = client(accepting);
    const completion = await parse(openai, 'service-fallback');
    assert.deepEqual(completion.choices[0]?.message.parsed, { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.deepEqual(accepting.received().map((b) => (b as { model: string }).model), ['bad-model', 'good-model']);
  });

  test('stream(): the stream ends with an error the SDK throws, naming $.temperature', TEST_TIMEOUT, async () => {
    const { openai } = client(accepting);
    const error = await stream(openai, 'service-bad').finalChatCompletion().then(() => assert.fail(`the application got ${BAD_ANSWER}`), (e: unknown) => e);
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.match(error.message, /\$\.temperature/);
    accepting.received();
  });
});

describe('the default policy', () => {
  test('parse() and stream() are refused with 400 naming "requestFields"; nothing reaches the upstream', TEST_TIMEOUT, async () => {
    const { openai } = client(defaults);
    for (const attempt of [() => parse(openai, 'service-good'), () => stream(openai, 'service-good').finalChatCompletion()]) {
      const error = await attempt().then(() => assert.fail('accepted'), (e: unknown) => e);
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.deepEqual([error.status, error.type, error.code, error.param], [400, 'invalid_request_error', 'invalid_value', 'response_format.type']);
      assert.equal(error.message, `400 ${NOT_ACCEPTED_MESSAGE}`);
    }
    assert.deepEqual(defaults.received(), []);
  });
});
