// OpenAI's request fields beyond the contract's table under a field policy:
// accepted only where the operator's requestFields says, each checked with
// its documented bounds, refused with the setting named otherwise, and the
// early (streaming) checker agreeing with the validator.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createFieldPolicy, requestFieldsUsed, type FieldPolicy } from '../../src/chat/request-fields.ts';
import { createChatRequestObserver, validateChatRequest } from '../../src/chat/request-validator.ts';
import { measurePrompt } from '../../src/chat/request-prompt-bound.ts';
import { REQUEST_FIELD_NAMES, type RequestFieldName } from '../../src/config/request-fields-config.ts';
import type { AliasConfig } from '../../src/config/config.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { createJsonParser } from '../../src/json/parser.ts';
import { body, MODEL, USER, WEATHER_TOOL } from './request-fixtures.ts';

function alias(requestFields: readonly RequestFieldName[] | null): AliasConfig {
  return { kind: 'chat', targets: [], maxOutputTokens: null, contextWindow: null, capabilities: [], price: null, imageTokens: 2000, requestFields, guard: null };
}

const ALL = createFieldPolicy({ aliases: { [MODEL]: alias(null) }, requestFields: [...REQUEST_FIELD_NAMES] });

/** service-chat takes seed and json_schema itself; service-other takes the top level's user. */
const SPLIT = createFieldPolicy({ aliases: { [MODEL]: alias(['seed', 'json_schema']), 'service-other': alias(null) }, requestFields: ['user'] });

function rejection(value: unknown, policy: FieldPolicy): { message: string; param: string | null; code: string | null } {
  try {
    validateChatRequest(value, policy);
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError, String(err));
    return { message: err.message, param: err.param, code: err.code };
  }
  assert.fail('the request was accepted');
}

/** What the streaming observer throws for `text`, or null when the parse completes. */
function early(text: string, policy: FieldPolicy): { message: string; param: string | null } | null {
  const parser = createJsonParser({ observer: createChatRequestObserver(policy), rejectDuplicateKeys: true });
  try {
    parser.feed(Buffer.from(text));
    return null;
  } catch (err) {
    assert.ok(err instanceof InvalidRequestError, String(err));
    return { message: err.message, param: err.param };
  }
}

describe('accepted fields reach the request as checked values', () => {
  test('every field at a valid value', () => {
    const fields = {
      seed: -42,
      user: 'user-1',
      safety_identifier: 'h-0f3a',
      prompt_cache_key: 'k1',
      metadata: { team: 'a', run: '7' },
      parallel_tool_calls: false,
      logprobs: true,
      top_logprobs: 20,
      frequency_penalty: -2,
      presence_penalty: 2,
      logit_bias: { '50256': -100, '0': 100 },
      reasoning_effort: 'xhigh',
      service_tier: 'flex',
      prediction: { type: 'content', content: [{ type: 'text', text: 'fn main() {}' }] },
      verbosity: 'low',
      store: false,
    };
    const request = validateChatRequest(body({ ...fields, tools: [WEATHER_TOOL] }), ALL);
    assert.deepEqual(request, { model: MODEL, messages: [USER], tools: [WEATHER_TOOL], ...fields });
    assert.deepEqual(requestFieldsUsed(request), REQUEST_FIELD_NAMES.filter((n) => n !== 'json_schema'));
  });

  test('null is absent where OpenAI allows null', () => {
    const nulls = { seed: null, metadata: null, logprobs: null, top_logprobs: null, frequency_penalty: null, logit_bias: null, reasoning_effort: null, service_tier: null, prediction: null, verbosity: null, store: null };
    assert.deepEqual(validateChatRequest(body(nulls), ALL), { model: MODEL, messages: [USER] });
    assert.deepEqual(rejection(body({ user: null }), ALL), { message: "Invalid type for 'user': expected a string, but got null instead.", param: 'user', code: 'invalid_type' });
  });

  test('a metadata key named __proto__ is kept as a key, never a prototype', () => {
    const request = validateChatRequest(JSON.parse('{"model":"service-chat","messages":[{"role":"user","content":"Hi"}],"metadata":{"__proto__":"x","a":"b"}}'), ALL);
    assert.equal(JSON.stringify(request.metadata), '{"__proto__":"x","a":"b"}');
    assert.equal(Object.getPrototypeOf(request.metadata), Object.prototype);
  });

  test('json_schema: null is absent only for strict; a null name or description is the wrong type, early and late alike', () => {
    const format = (json_schema: Record<string, unknown>) => body({ response_format: { type: 'json_schema', json_schema } });
    assert.deepEqual(validateChatRequest(format({ name: 'x', strict: null }), ALL).response_format, { type: 'json_schema', json_schema: { name: 'x' } });
    for (const key of ['name', 'description', 'schema']) {
      const value = format({ name: 'x', [key]: null });
      const late = rejection(value, ALL);
      assert.equal(late.code, 'invalid_type', key);
      assert.equal(late.param, `response_format.json_schema.${key}`);
      assert.deepEqual(early(JSON.stringify(value), ALL), { message: late.message, param: late.param });
    }
  });

  test('a fresh copy is forwarded: nothing the client added inside a field passes', () => {
    const request = validateChatRequest(body({ prediction: { type: 'content', content: [{ type: 'text', text: 'x' }] } }), ALL);
    assert.deepEqual(request.prediction, { type: 'content', content: [{ type: 'text', text: 'x' }] });
    assert.deepEqual(rejection(body({ prediction: { type: 'content', content: 'x', extra: 1 } }), ALL), {
      message: 'Unrecognized request argument supplied: prediction.extra',
      param: 'prediction.extra',
      code: 'unknown_parameter',
    });
  });
});

describe("each field's bounds, with OpenAI's wording", () => {
  const cases: Array<[string, Record<string, unknown>, string, string, string]> = [
    ['seed decimal', { seed: 1.5 }, 'seed', 'invalid_type', "Invalid type for 'seed': expected an integer, but got a decimal instead."],
    ['seed beyond a double', { seed: 2 ** 60 }, 'seed', 'invalid_value', `Invalid value for 'seed': ${2 ** 60}. Expected an integer from -9007199254740991 to 9007199254740991.`],
    ['seed a string', { seed: '7' }, 'seed', 'invalid_type', "Invalid type for 'seed': expected an integer, but got a string instead."],
    ['user too long', { user: 'u'.repeat(257) }, 'user', 'invalid_value', "Invalid value for 'user': expected at most 256 characters."],
    ['metadata 17 pairs', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', 'invalid_value', "Invalid value for 'metadata': expected at most 16 entries."],
    ['metadata value a number', { metadata: { a: 1 } }, 'metadata.a', 'invalid_type', "Invalid type for 'metadata.a': expected a string, but got a number instead."],
    ['metadata key too long', { metadata: { ['k'.repeat(65)]: 'v' } }, `metadata.${'k'.repeat(64)}...`, 'invalid_value', `Invalid value for 'metadata.${'k'.repeat(64)}...': expected at most 64 characters.`],
    ['metadata value too long', { metadata: { a: 'v'.repeat(513) } }, 'metadata.a', 'invalid_value', "Invalid value for 'metadata.a': expected at most 512 characters."],
    ['parallel_tool_calls null', { parallel_tool_calls: null }, 'parallel_tool_calls', 'invalid_type', "Invalid type for 'parallel_tool_calls': expected a boolean, but got null instead."],
    ['top_logprobs 21', { logprobs: true, top_logprobs: 21 }, 'top_logprobs', 'invalid_value', "Invalid value for 'top_logprobs': 21. Expected an integer from 0 to 20."],
    ['top_logprobs without logprobs', { top_logprobs: 2 }, 'top_logprobs', 'invalid_value', "Invalid value for 'top_logprobs': 'top_logprobs' is only allowed when 'logprobs' is true."],
    ['frequency_penalty 2.5', { frequency_penalty: 2.5 }, 'frequency_penalty', 'invalid_value', "Invalid value for 'frequency_penalty': 2.5. Expected a number from -2 to 2."],
    ['presence_penalty -3', { presence_penalty: -3 }, 'presence_penalty', 'invalid_value', "Invalid value for 'presence_penalty': -3. Expected a number from -2 to 2."],
    ['logit_bias key not a token', { logit_bias: { abc: 1 } }, 'logit_bias.abc', 'invalid_value', `Invalid value for 'logit_bias.abc': 'abc' is not a token id; the keys of logit_bias are token ids as decimal strings, such as "50256".`],
    ['logit_bias 101', { logit_bias: { '5': 101 } }, 'logit_bias.5', 'invalid_value', "Invalid value for 'logit_bias.5': 101. Expected an integer from -100 to 100."],
    ['logit_bias 0.5', { logit_bias: { '5': 0.5 } }, 'logit_bias.5', 'invalid_type', "Invalid type for 'logit_bias.5': expected an integer, but got a decimal instead."],
    ['logit_bias 301 entries', { logit_bias: Object.fromEntries(Array.from({ length: 301 }, (_, i) => [String(i), 1])) }, 'logit_bias', 'invalid_value', "Invalid value for 'logit_bias': expected at most 300 entries."],
    ['reasoning_effort maximal', { reasoning_effort: 'maximal' }, 'reasoning_effort', 'invalid_value', "Invalid value for 'reasoning_effort': 'maximal'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high' and 'xhigh'."],
    ['service_tier turbo', { service_tier: 'turbo' }, 'service_tier', 'invalid_value', "Invalid value for 'service_tier': 'turbo'. Supported values are: 'auto', 'default', 'flex', 'scale' and 'priority'."],
    ['verbosity max', { verbosity: 'max' }, 'verbosity', 'invalid_value', "Invalid value for 'verbosity': 'max'. Supported values are: 'low', 'medium' and 'high'."],
    ['store a string', { store: 'yes' }, 'store', 'invalid_type', "Invalid type for 'store': expected a boolean, but got a string instead."],
    ['prediction type', { prediction: { type: 'diff', content: 'x' } }, 'prediction.type', 'invalid_value', "Invalid value for 'prediction.type': 'diff'. Supported values are: 'content'."],
    ['prediction without content', { prediction: { type: 'content' } }, 'prediction.content', 'missing_required_parameter', "Missing required parameter: 'prediction.content'."],
    ['prediction image part', { prediction: { type: 'content', content: [{ type: 'image_url', image_url: { url: 'https://a.test/x.png' } }] } }, 'prediction.content[0].type', 'invalid_value', "Invalid value for 'prediction.content[0].type': 'image_url'. Supported values are: 'text'."],
    ['prediction empty parts', { prediction: { type: 'content', content: [] } }, 'prediction.content', 'array_below_min_length', "Invalid 'prediction.content': empty array. Expected an array with at least 1 entry."],
  ];
  for (const [name, fields, param, code, message] of cases) {
    test(name, () => assert.deepEqual(rejection(body(fields), ALL), { message, param, code }));
  }
});

describe('response_format json_schema', () => {
  const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
  const format = (json_schema: Record<string, unknown>) => body({ response_format: { type: 'json_schema', json_schema } });

  test('strict: the schema is compiled and carried, not enumerable; the request holds the schema as sent', () => {
    const request = validateChatRequest(format({ name: 'weather', description: 'd', schema: SCHEMA, strict: true }), ALL);
    assert.deepEqual(request.response_format, { type: 'json_schema', json_schema: { name: 'weather', description: 'd', schema: SCHEMA, strict: true } });
    assert.ok(request.answerSchema !== undefined);
    assert.equal(Object.keys(request).includes('answerSchema'), false);
    assert.equal(request.answerSchema.check({ city: 'Oslo' }), null);
    assert.deepEqual(request.answerSchema.check({ city: 3 }), { path: '$.city', message: '$.city: expected string, got integer 3' });
    assert.deepEqual(requestFieldsUsed(request), ['json_schema']);
  });

  test('not strict: forwarded, never compiled, whatever its keywords', () => {
    const loose = { type: 'object', properties: { a: { oneOf: [{ type: 'string' }] } } };
    const request = validateChatRequest(format({ name: 'x', schema: loose }), ALL);
    assert.equal(request.answerSchema, undefined);
    assert.deepEqual(validateChatRequest(format({ name: 'x', schema: loose, strict: false }), ALL).response_format, {
      type: 'json_schema',
      json_schema: { name: 'x', schema: loose, strict: false },
    });
  });

  test('refusals: a strict schema outside the subset names its keyword; name and schema rules', () => {
    assert.deepEqual(rejection(format({ name: 'x', strict: true, schema: { type: 'object', properties: { a: { type: 'string', minLength: 1 } }, required: ['a'], additionalProperties: false } }), ALL), {
      message: `Invalid schema for response_format 'x': $.properties.a.minLength: "minLength" is not supported in strict mode.`,
      param: 'response_format.json_schema.schema',
      code: 'unsupported_schema',
    });
    assert.deepEqual(rejection(format({ schema: SCHEMA }), ALL), { message: "Missing required parameter: 'response_format.json_schema.name'.", param: 'response_format.json_schema.name', code: 'missing_required_parameter' });
    assert.deepEqual(rejection(format({ name: 'a b', schema: SCHEMA }), ALL).param, 'response_format.json_schema.name');
    assert.deepEqual(rejection(format({ name: 'x', strict: true }), ALL), {
      message: "Missing required parameter: 'response_format.json_schema.schema'. A json_schema with strict true needs its schema.",
      param: 'response_format.json_schema.schema',
      code: 'missing_required_parameter',
    });
    assert.deepEqual(rejection(body({ response_format: { type: 'json_schema' } }), ALL), { message: "Missing required parameter: 'response_format.json_schema'.", param: 'response_format.json_schema', code: 'missing_required_parameter' });
    assert.deepEqual(rejection(format({ name: 'x', schema: SCHEMA, extra: 1 }), ALL), { message: 'Unrecognized request argument supplied: response_format.json_schema.extra', param: 'response_format.json_schema.extra', code: 'unknown_parameter' });
    assert.deepEqual(rejection(body({ response_format: { type: 'xml' } }), ALL).message, "Invalid value for 'response_format.type': 'xml'. Supported values are: 'text', 'json_object' and 'json_schema'.");
  });

  test('the schema counts toward the prompt bound, byte for byte', () => {
    const plain = validateChatRequest(body(), ALL);
    const shaped = validateChatRequest(format({ name: 'weather', schema: SCHEMA, strict: true }), ALL);
    const bytes = JSON.stringify({ type: 'json_schema', json_schema: { name: 'weather', schema: SCHEMA, strict: true } }).length;
    assert.equal(shaped.promptBound?.tokens, (plain.promptBound?.tokens ?? 0) + bytes);
    assert.deepEqual(measurePrompt(shaped), shaped.promptBound);
  });
});

describe('the policy per model', () => {
  test("an alias's own list replaces the top level's; the refusal names the model and its setting", () => {
    assert.equal(validateChatRequest(body({ seed: 1 }), SPLIT).seed, 1);
    assert.equal(validateChatRequest({ ...body({ user: 'u' }), model: 'service-other' }, SPLIT).user, 'u');
    assert.deepEqual(rejection(body({ user: 'u' }), SPLIT), {
      message: `Unsupported parameter: 'user' is not accepted for model 'service-chat'. The gateway's operator can accept it by adding "user" to "aliases.service-chat.requestFields" in the gateway's config.`,
      param: 'user',
      code: 'unknown_parameter',
    });
    assert.deepEqual(rejection({ ...body({ seed: 1 }), model: 'service-other' }, SPLIT), {
      message: `Unsupported parameter: 'seed' is not accepted for model 'service-other'. The gateway's operator can accept it by adding "seed" to "requestFields" or "aliases.service-other.requestFields" in the gateway's config.`,
      param: 'seed',
      code: 'unknown_parameter',
    });
    assert.deepEqual(rejection({ ...body({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }), model: 'service-other' }, SPLIT).message,
      `Invalid value for 'response_format.type': 'json_schema' is not accepted for model 'service-other'. The gateway's operator can accept it by adding "json_schema" to "requestFields" or "aliases.service-other.requestFields" in the gateway's config.`);
  });

  test('service-auto takes what any alias takes; an unknown model, the top level', () => {
    const auto = validateChatRequest({ ...body({ seed: 1, user: 'u' }), model: 'service-auto' }, SPLIT);
    assert.deepEqual(requestFieldsUsed(auto), ['seed', 'user']);
    assert.equal(validateChatRequest({ ...body({ user: 'u' }), model: 'nope' }, SPLIT).user, 'u');
    assert.equal(rejection({ ...body({ seed: 1 }), model: 'nope' }, SPLIT).code, 'unknown_parameter');
  });

  test('an embeddings alias takes no part: its fields are judged as for service-auto, so routing answers with its kind', () => {
    const embed: AliasConfig = { ...alias(null), kind: 'embeddings' };
    // Every chat alias has its own list: the top level's user reaches none of them.
    const policy = createFieldPolicy({ aliases: { [MODEL]: alias(['seed']), 'text-embed': embed }, requestFields: ['user'] });
    assert.deepEqual([...policy.anywhere], ['seed']);
    assert.deepEqual([...policy.acceptedFor('text-embed')], ['seed']);
    assert.deepEqual([...policy.acceptedFor('service-auto')], ['seed']);
    assert.equal(validateChatRequest({ ...body({ seed: 1 }), model: 'text-embed' }, policy).seed, 1);
    assert.equal(early(JSON.stringify({ ...body({ user: 'u' }), model: 'text-embed' }), policy)?.param, 'user');
  });

  test('a field no model takes is refused as its key arrives; one some model takes waits for the whole body', () => {
    const noneTakesIt = `{"messages":[],"store":true`;
    assert.deepEqual(early(noneTakesIt, SPLIT), {
      // service-chat has a list of its own, which the top level's does not reach: both are named.
      message: `Unsupported parameter: 'store' is not accepted by this gateway. The gateway's operator can accept it by adding "store" to "requestFields" or "aliases.NAME.requestFields" in the gateway's config.`,
      param: 'store',
    });
    assert.equal(early(JSON.stringify(body({ user: 'u', seed: 1 })), SPLIT), null);
    assert.deepEqual(early(`{"model":"m","web_search_options":{}}`, ALL), {
      message: "Unsupported parameter: 'web_search_options' is not supported by this gateway: a web search would run outside the gateway.",
      param: 'web_search_options',
    });
    // The validator reports the same first fault as the observer.
    assert.deepEqual(rejection(body({ temperature: 9, store: true }), SPLIT).param, 'store');
    assert.deepEqual(rejection(body({ temperature: 9, user: 'u' }), SPLIT).param, 'temperature');
  });
});
