// LangChain's withStructuredOutput(zodSchema) with its default method
// (json_schema) through the gateway: invoke and stream against a fake
// upstream that answers right, answers JSON that breaks the schema, and falls
// back; the demo provider; and the default policy's refusal as LangChain
// surfaces it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { loadSnippet } from './client-snippets.ts';
import { recordingFetch } from './recording-fetch.ts';
import { BAD_ANSWER, NOT_ACCEPTED_MESSAGE, PROMPT, startStructuredSetup, Weather, type StructuredSetup } from './structured-upstream.ts';

const TEST_TIMEOUT = { timeout: 20_000 };

/**
 * What withStructuredOutput(Weather) puts on the wire, invoked or streamed
 * alike: strict true, the name "extract", the 2020-12 dialect named, and the
 * name again as a title on the root and on every property.
 */
const RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: {
    name: 'extract',
    strict: true,
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        city: { type: 'string', title: 'extract' },
        temperature: { type: 'number', title: 'extract' },
        unit: { type: 'string', enum: ['C', 'F'], title: 'extract' },
      },
      required: ['city', 'temperature', 'unit'],
      additionalProperties: false,
      title: 'extract',
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

function structured(setup: StructuredSetup, model: string) {
  const recorder = recordingFetch();
  const chat = new ChatOpenAI({ model, apiKey: setup.gw.key, maxRetries: 0, timeout: 10_000, configuration: { baseURL: setup.baseURL, fetch: recorder.fetch } });
  return { runnable: chat.withStructuredOutput(Weather), sent: recorder.requests };
}

async function streamed(runnable: ReturnType<typeof structured>['runnable']): Promise<unknown[]> {
  const chunks: unknown[] = [];
  for await (const chunk of await runnable.stream(PROMPT)) chunks.push(chunk);
  return chunks;
}

describe('with "requestFields": ["json_schema"]', () => {
  test('langchain-structured.mjs: as shown, on the demo provider and on an upstream', TEST_TIMEOUT, async () => {
    const run = await loadSnippet('langchain-structured.mjs');
    const target = { baseURL: accepting.baseURL, apiKey: accepting.gw.key };
    const demo = { city: PROMPT, temperature: 0, unit: 'C' };
    const good = { city: 'Oslo', temperature: 4, unit: 'C' };
    assert.deepEqual(await run(target), { object: demo, streamed: demo });
    assert.deepEqual(await run({ ...target, model: 'service-good' }), { object: good, streamed: good });
    assert.equal(accepting.received().length, 2);
  });

  test('invoke: the json_schema reaches the upstream as LangChain sent it; the application gets the parsed object', TEST_TIMEOUT, async () => {
    const { runnable, sent } = structured(accepting, 'service-good');
    assert.deepEqual(await runnable.invoke(PROMPT), { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.deepEqual(sent.map((r) => r.body), [{ model: 'service-good', stream: false, response_format: RESPONSE_FORMAT, messages: MESSAGES }]);
    assert.deepEqual(accepting.received(), [{ model: 'good-model', stream: false, response_format: RESPONSE_FORMAT, messages: MESSAGES, max_tokens: 4096 }]);
  });

  test('stream: strict true as well (LangChain 1.6 does not drop it when streaming); one parsed object at the end', TEST_TIMEOUT, async () => {
    const { runnable, sent } = structured(accepting, 'service-good');
    const chunks = await streamed(runnable);
    assert.deepEqual(sent.map((r) => r.body), [
      { model: 'service-good', stream: true, response_format: RESPONSE_FORMAT, stream_options: { include_usage: true }, messages: MESSAGES },
    ]);
    assert.deepEqual(accepting.received(), [
      { model: 'good-model', stream: true, response_format: RESPONSE_FORMAT, stream_options: { include_usage: true }, messages: MESSAGES, max_tokens: 4096 },
    ]);
    assert.deepEqual(chunks, [{ city: 'Oslo', temperature: 4, unit: 'C' }]);
  });

  test('the demo provider answers the schema\'s instance, the prompt in its first free string', TEST_TIMEOUT, async () => {
    const { runnable } = structured(accepting, 'service-chat');
    const expected = { city: PROMPT, temperature: 0, unit: 'C' };
    assert.deepEqual(await runnable.invoke(PROMPT), expected);
    assert.deepEqual(await streamed(runnable), [expected]);
    assert.equal(accepting.received().length, 0);
  });
});

// The answer checked against the strict schema: these need the gateway's check of answers.
describe('an answer that breaks the strict schema', () => {
  test('invoke: 502 upstream_schema_mismatch naming $.temperature, never the bad JSON', TEST_TIMEOUT, async () => {
    const { runnable } = structured(accepting, 'service-bad');
    const error = await runnable.invoke(PROMPT).then(() => assert.fail(`the application got ${BAD_ANSWER}`), (e: unknown) => e);
    const e = error as { status?: number; code?: string; type?: string; message: string };
    assert.deepEqual([e.status, e.type, e.code], [502, 'upstream_error', 'upstream_schema_mismatch'], String(error));
    assert.match(e.message, /\$\.temperature/);
    assert.deepEqual(accepting.received().map((b) => (b as { model: string }).model), ['bad-model']);
  });

  test('invoke: a second target that answers right is used instead', TEST_TIMEOUT, async () => {
    const { runnable } = structured(accepting, 'service-fallback');
    assert.deepEqual(await runnable.invoke(PROMPT), { city: 'Oslo', temperature: 4, unit: 'C' });
    assert.deepEqual(accepting.received().map((b) => (b as { model: string }).model), ['bad-model', 'good-model']);
  });

  test('stream: the iterator throws an error naming $.temperature', TEST_TIMEOUT, async () => {
    const { runnable } = structured(accepting, 'service-bad');
    const error = await streamed(runnable).then((chunks) => assert.fail(`the application got ${JSON.stringify(chunks)}`), (e: unknown) => e);
    assert.match((error as Error).message, /\$\.temperature/);
    accepting.received();
  });
});

describe('the default policy', () => {
  test('invoke and stream are refused with 400 naming "requestFields", thrown as the openai package\'s BadRequestError', TEST_TIMEOUT, async () => {
    const { runnable } = structured(defaults, 'service-good');
    for (const attempt of [() => runnable.invoke(PROMPT), () => streamed(runnable)]) {
      const error = await attempt().then(() => assert.fail('accepted'), (e: unknown) => e);
      const e = error as { constructor: { name: string }; status: number; code: string; param: string; message: string; lc_error_code?: string };
      assert.deepEqual(
        { name: e.constructor.name, status: e.status, code: e.code, param: e.param, message: e.message, lc_error_code: e.lc_error_code },
        { name: 'BadRequestError', status: 400, code: 'invalid_value', param: 'response_format.type', message: `400 ${NOT_ACCEPTED_MESSAGE}`, lc_error_code: undefined },
      );
    }
    assert.deepEqual(defaults.received(), []);
  });
});
