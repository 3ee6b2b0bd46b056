// Generated requests: thousands of chat requests built from the
// validator's grammar (roles, content strings and parts, blank text, images,
// refusals, tool calls with ids of every shape, tool results, tools, stops,
// sampling, limits). Every one the gateway's own validator accepts must either
// translate into a body that keeps Anthropic's documented constraints
// (./anthropic-constraints.ts), ends with a user turn and keeps the request's
// meaning (every visible text in order, every tool call and result with the
// client's own id), or be refused with a 400 that names a parameter. OpenAI's
// optional fields are generated too, under a policy that accepts them all:
// user and safety_identifier must arrive as metadata.user_id,
// parallel_tool_calls false as disable_parallel_tool_use, json_schema as
// output_config.format.
// Seeded: the seed is printed with a failing case; ANTHROPIC_GEN_SEED and
// ANTHROPIC_GEN_CASES explore others.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createFieldPolicy } from '../../src/chat/request-fields.ts';
import { checkChatRequest } from '../../src/chat/request-validator.ts';
import { REQUEST_FIELD_NAMES } from '../../src/config/request-fields-config.ts';
import type { ChatMessage, ChatRequest } from '../../src/chat/types.ts';
import { buildUpstreamRequest } from '../../src/chat/upstream-request.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { type AnthropicRequest, fromAnthropicToolId, toAnthropicRequest } from '../../src/providers/anthropic-translate.ts';
import { anthropicRequestViolation } from './anthropic-constraints.ts';
import { seededRandom } from '../upstream/seeded-random.ts';

type Json = Record<string, unknown>;


const TEXTS = ['Hi', 'What is the weather in Oslo?', ' padded ', 'line\n', 'é😀', '\u00a0x'];
const BLANK_TEXTS = ['', ' ', '\n\n', '\t', '\u3000', '\u001f', '\u0085'];
const IDS = ['call_1', 'call_2', 'toolu_01A', 'functions.get_weather:0', 'functions.get_weather:1', 'a b', 'pcl_id-x', 'call_1\nfc_2', 'id/7', 'ünï', '\ud83dx'];
const NAMES = ['get_weather', 'local_time', 'f'];
const ARGUMENTS = ['{}', '', ' ', '{"city":"Oslo"}', '{"a":{"b":[1,2]}}'];
const BAD_ARGUMENTS = ['[1]', 'not json', 'null'];
const STOPS = ['END', '\nUser:', 'x ', '\n\n###'];
const BLANK_STOPS = ['\n', '', ' ', '\t\t'];
const POLICY = createFieldPolicy({ aliases: { 'service-claude': { requestFields: null } } as never, requestFields: [...REQUEST_FIELD_NAMES] });
const IDENTIFIERS = ['user-1', 'user-2', 'a'.repeat(256)];
const OUTPUT_SCHEMAS: Json[] = [
  { type: 'object', properties: { a: { type: 'integer', minimum: 1 } }, required: ['a'], additionalProperties: false },
  { type: 'object', properties: { a: { type: ['string', 'null'], pattern: '^x' } }, required: ['a'], additionalProperties: false },
  { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } }, required: ['kids'], additionalProperties: false },
  { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
];
const SCHEMAS: (Json | undefined)[] = [undefined, { type: 'object', properties: { city: { type: 'string' } } }, {}, { properties: {} }];

function generator(random: () => number): () => Json {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const chance = (p: number): boolean => random() < p;

  const text = (): string => (chance(0.15) ? pick(BLANK_TEXTS) : pick(TEXTS));
  const stop = (): string => (chance(0.1) ? pick(BLANK_STOPS) : pick(STOPS));

  function textContent(role: string): string | Json[] {
    if (chance(0.5)) return text();
    const parts: Json[] = [];
    const count = 1 + Math.floor(random() * 3);
    for (let k = 0; k < count; k++) {
      if (role === 'user' && chance(0.25)) parts.push({ type: 'image_url', image_url: chance(0.5) ? { url: 'https://example.com/a.png' } : { url: 'https://example.com/b.jpg', detail: 'low' } });
      else if (role === 'assistant' && chance(0.15)) parts.push({ type: 'refusal', refusal: text() });
      else parts.push({ type: 'text', text: text() });
    }
    return parts;
  }

  return () => {
    const messages: Json[] = [];
    const count = 1 + Math.floor(random() * 7);
    let pending: string[] = [];
    for (let i = 0; i < count; i++) {
      // Answer the last assistant's calls most of the time, so conversations
      // with tools often pair up and reach the constraints, not only refusals.
      if (pending.length > 0 && chance(0.85)) {
        for (const id of pending) if (chance(0.9)) messages.push({ role: 'tool', tool_call_id: id, content: textContent('tool') });
        pending = [];
        continue;
      }
      const role = pick(['system', 'developer', 'user', 'user', 'assistant', 'assistant', 'assistant', chance(0.3) ? 'tool' : 'user']);
      const message: Json = { role };
      if (role === 'tool') {
        message['tool_call_id'] = pick(IDS); // mostly answering no call: refused
        message['content'] = textContent(role);
      } else if (role === 'assistant') {
        const calls: Json[] = [];
        if (chance(0.45)) {
          const n = 1 + Math.floor(random() * 2);
          for (let j = 0; j < n; j++) calls.push({ id: pick(IDS), type: 'function', function: { name: pick(NAMES), arguments: chance(0.03) ? pick(BAD_ARGUMENTS) : pick(ARGUMENTS) } });
          message['tool_calls'] = calls;
          pending = calls.map((c) => c['id'] as string);
        }
        message['content'] = calls.length > 0 && chance(0.5) ? null : textContent(role);
        if (chance(0.1)) message['refusal'] = text();
      } else {
        message['content'] = textContent(role);
      }
      if (role !== 'tool' && chance(0.1)) message['name'] = 'ana';
      messages.push(message);
    }
    if (chance(0.75)) messages.push({ role: 'user', content: textContent('user') });

    const body: Json = { model: 'service-claude', messages };
    if (chance(0.4)) {
      const tools = NAMES.slice(0, 1 + Math.floor(random() * NAMES.length)).map((name) => {
        const schema = chance(0.03) ? { type: 'string' } : pick(SCHEMAS);
        return { type: 'function', function: schema === undefined ? { name } : { name, parameters: schema } };
      });
      body['tools'] = tools;
      if (chance(0.5)) body['tool_choice'] = chance(0.5) ? pick(['none', 'auto', 'required']) : { type: 'function', function: { name: NAMES[0] } };
    }
    if (chance(0.4)) body['temperature'] = pick([0, 0.3, 1, 1.5, 2]);
    if (chance(0.25)) body['top_p'] = pick([0, 0.9, 1]);
    if (chance(0.4)) body['stop'] = chance(0.3) ? stop() : Array.from({ length: Math.floor(random() * 5) }, stop);
    if (chance(0.3)) body[chance(0.5) ? 'max_tokens' : 'max_completion_tokens'] = pick([1, 64, 4096]);
    if (chance(0.5)) {
      body['stream'] = true;
      if (chance(0.5)) body['stream_options'] = { include_usage: true };
    }
    if (chance(0.1)) body['response_format'] = { type: pick(['text', 'json_object']) };
    if (chance(0.1)) body['n'] = 1;
    if (chance(0.15)) body['user'] = pick(IDENTIFIERS);
    if (chance(0.1)) body['safety_identifier'] = pick(IDENTIFIERS);
    if (chance(0.2)) body['parallel_tool_calls'] = chance(0.7) ? false : true;
    if (chance(0.1)) body[pick(['seed', 'store', 'logprobs', 'frequency_penalty', 'reasoning_effort', 'metadata'])] = pick<unknown>([0, 1, false, true, 'low', {}, { k: 'v' }]);
    if (chance(0.15)) body['response_format'] = { type: 'json_schema', json_schema: { name: 'out', schema: pick(OUTPUT_SCHEMAS), ...(chance(0.7) ? { strict: true } : {}) } };
    // A few the validator must refuse itself: they never reach the translation.
    if (chance(0.03)) body[pick(['n', 'temperature', 'presence_penalty'])] = 3;
    return body;
  };
}

function texts(content: ChatMessage['content']): string[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [content];
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
}

const BLANK = /^[\s\u001c-\u001f\u0085]*$/;
const visible = (list: string[]): string[] => list.filter((text) => !BLANK.test(text));

/** Meaning kept: every visible text in order, every image, each call and result with the client's own id. */
function assertFaithful(request: ChatRequest, body: AnthropicRequest): void {
  const system: string[] = [];
  const said: string[] = [];
  const calls: string[] = [];
  const results: string[] = [];
  let images = 0;
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') system.push(...visible(texts(message.content)));
    else if (message.role === 'tool') results.push(message.tool_call_id as string);
    else {
      said.push(...visible(texts(message.content)));
      if (message.role === 'assistant' && typeof message.refusal === 'string') said.push(...visible([message.refusal]));
      for (const call of message.tool_calls ?? []) calls.push(call.id);
      if (Array.isArray(message.content)) images += message.content.filter((part) => part.type === 'image_url').length;
    }
  }
  assert.deepEqual((body.system ?? []).map((block) => block.text), system, 'system texts');
  const blocks = body.messages.flatMap((turn) => turn.content);
  assert.deepEqual(blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])), said, 'visible texts, in order');
  assert.equal(blocks.filter((block) => block.type === 'image').length, images, 'images');
  assert.deepEqual(blocks.flatMap((block) => (block.type === 'tool_use' ? [fromAnthropicToolId(block.id)] : [])), calls, 'tool calls');
  assert.deepEqual([...blocks.flatMap((block) => (block.type === 'tool_result' ? [fromAnthropicToolId(block.tool_use_id)] : []))].sort(), [...results].sort(), 'tool results');
  assert.equal(body.messages.at(-1)?.role, 'user', 'the last turn is the user: no prefill');
  const userId = request.safety_identifier ?? request.user;
  assert.deepEqual(body.metadata, userId === undefined ? undefined : { user_id: userId }, 'user and safety_identifier');
  const limited = request.parallel_tool_calls === false && body.tools !== undefined && request.tool_choice !== 'none';
  assert.equal(body.tool_choice !== undefined && 'disable_parallel_tool_use' in body.tool_choice, limited, 'parallel_tool_calls false');
  assert.equal(body.output_config !== undefined, request.response_format?.type === 'json_schema', 'json_schema');
}

test('every generated request the validator accepts translates within the constraints, or is a 400 naming a parameter', () => {
  const seed = Number(process.env['ANTHROPIC_GEN_SEED'] ?? 160016);
  const cases = Number(process.env['ANTHROPIC_GEN_CASES'] ?? 4000);
  const next = generator(seededRandom(seed));
  const tally = { invalid: 0, translated: 0, refused: 0 };
  const refusedParams = new Set<string>();
  for (let n = 0; n < cases; n++) {
    const raw = next();
    try {
      const check = checkChatRequest(raw, POLICY);
      if (!check.ok) {
        tally.invalid++;
        continue;
      }
      const { request } = buildUpstreamRequest(check.request, { model: 'claude-test-1', maxOutputTokens: null, maxTokensParam: 'max_tokens' });
      let body: AnthropicRequest;
      try {
        body = toAnthropicRequest(request);
      } catch (error) {
        assert.ok(error instanceof ApiError, `not an ApiError: ${String(error)}`);
        assert.equal(error.status, 400);
        assert.equal(error.toBody().error.type, 'invalid_request_error');
        assert.ok(typeof error.param === 'string' && error.param.length > 0, 'the 400 names a parameter');
        assert.ok(error.message.includes(`'${error.param}'`), 'the message names the parameter');
        refusedParams.add(error.param.replace(/\[\d+\]/g, '[]'));
        tally.refused++;
        continue;
      }
      assert.equal(anthropicRequestViolation(JSON.parse(JSON.stringify(body))), undefined, 'Anthropic would refuse the translation');
      assertFaithful(request, body);
      tally.translated++;
    } catch (error) {
      assert.fail(`seed ${seed}, case ${n}: ${(error as Error).message}\nrequest: ${JSON.stringify(raw)}`);
    }
  }
  if (process.env["ANTHROPIC_GEN_DEBUG"] !== undefined) console.log(tally, [...refusedParams]);
  // The generator must reach every outcome, or the test proves nothing.
  assert.ok(tally.invalid > 0, `seed ${seed}: the validator refused none`);
  assert.ok(tally.translated >= cases / 10, `seed ${seed}: only ${tally.translated} of ${cases} translated`);
  assert.ok(tally.refused >= cases / 10, `seed ${seed}: only ${tally.refused} of ${cases} refused`);
  for (const param of ['stop[]', 'top_p', 'messages[].role', 'messages[].content', 'messages[].tool_call_id', 'messages[].tool_calls[].id', 'user', 'response_format.json_schema.schema.properties.kids.items.$ref']) {
    assert.ok(refusedParams.has(param), `seed ${seed}: no case refused at ${param}`);
  }
});
