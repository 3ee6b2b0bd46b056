// Validation of a Responses request body, already parsed from JSON:
// POST /v1/responses (validateResponsesRequest). Shapes and sources:
// ./response-request-types.ts; input items: ./response-request-items.ts;
// tools: ./response-request-tools.ts.
//
// The body is returned as it is, never rebuilt: an upstream speaking
// Responses receives the client's request unchanged (reasoning items with
// their encrypted_content, item ids). One walk, in the body's order; the
// first fault throws InvalidRequestError with the path as `param`
// (`input[3].content[0].image_url`), as OpenAI answers one error a request.
//
// Rules beyond the shapes:
// - the gateway is stateless: previous_response_id, conversation and
//   item_reference items name state kept by whoever stored it, so they are
//   refused saying that the gateway's response store is off (an upstream's
//   own store would show one key's conversation to every key sharing that
//   upstream account); `background: true` is refused for the same reason (a
//   background response is polled from a store);
// - service_tier beyond 'auto' and 'default', and access_programs, change
//   what a request costs or may do at OpenAI: taken only where the operator
//   lets the field through (options.extraFields);
// - a tool_choice naming a function must name one of the request's tools;
//   tool names are unique (in a namespace, within it).
// An unknown top-level field is refused unless the options name it (the
// operator's per-provider allow-list): then it is accepted unchecked, for an
// upstream speaking Responses to judge.
import {
  arrayOf,
  boolean,
  echo,
  fail,
  integerIn,
  isObject,
  missing,
  nonEmptyString,
  nullable,
  numberIn,
  object,
  objectShape,
  oneOf,
  shaped,
  string,
  stringUpTo,
  where,
  wrongType,
  type Check,
  type Cursor,
} from '../messages/message-request-checks.ts';
import { typed } from '../messages/message-request-blocks.ts';
import { checkItem, MAX_ITEMS } from './response-request-items.ts';
import { checkToolChoice, checkTools, type OfferedNames } from './response-request-tools.ts';
import type { ResponsesRequest } from './response-request-types.ts';
import { MAX_MODEL_LENGTH } from '../chat/request-validator.ts';

export interface ResponsesValidationOptions {
  /** Top-level fields outside the documented request to accept unchecked. */
  readonly extraFields: ReadonlySet<string>;
  /** The gateway's response store is on (responses.store.enabled): previous_response_id names a response it keeps. */
  readonly responseStore?: boolean;
}

/** OpenAI answers a max_output_tokens below 16 with a 400. */
const MIN_OUTPUT_TOKENS = 16;
/** Above every model's output window today (as for chat); the alias caps decide the real limit. */
const MAX_OUTPUT_TOKENS = 1_000_000;
/** As for chat's user, safety_identifier and prompt_cache_key. */
const MAX_IDENTIFIER = 256;
/** OpenAI: safety_identifier "with a maximum length of 128 characters". */
const MAX_SAFETY_IDENTIFIER = 128;
/** OpenAI: metadata is "Set of 16 key-value pairs", keys up to 64 characters, values up to 512. */
const MAX_METADATA_PAIRS = 16;
const MAX_METADATA_KEY = 64;
const MAX_METADATA_VALUE = 512;
/** client_metadata (Codex) has no documented bound: generous ones, the body's byte limit bounds the rest. */
const MAX_CLIENT_METADATA_PAIRS = 64;
const MAX_CLIENT_METADATA_KEY = 256;
const MAX_CLIENT_METADATA_VALUE = 8192;
const MAX_TOP_LOGPROBS = 20;
const MAX_CONTEXT_MANAGEMENT = 16;
/** OpenAI's json_schema format names: letters, digits, underscores and hyphens, at most 64. */
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const PASSTHROUGH_HINT = "add it to `responsesPassthrough` of an \"openai\" provider with `\"responses\": \"passthrough\"` in the gateway's config";
const STORE_OFF = "the gateway's response store is off";

export const INCLUDABLE: readonly string[] = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
];
export const REASONING_EFFORTS: readonly string[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
const SUMMARY = nullable(oneOf(['auto', 'concise', 'detailed']));
/** Tiers that ask for the project's own default at OpenAI; every other changes the price. */
const DEFAULT_TIERS = new Set(['auto', 'default']);
const SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast'];

function stringMap(what: string, pairs: number, keyLength: number, valueLength: number): Check {
  return (value, at) => {
    if (!isObject(value)) wrongType(at, 'an object of strings', value);
    const keys = Object.keys(value);
    if (keys.length > pairs) fail(at, 'invalid_value', `Invalid value for ${where(at)}: ${what} holds at most ${pairs} pairs; got ${keys.length}.`);
    for (const key of keys) {
      at.push(key);
      if (key.length > keyLength) fail(at, 'invalid_value', `Invalid key in ${what}: '${echo(key)}' is longer than ${keyLength} characters.`);
      const entry = value[key];
      if (typeof entry !== 'string') wrongType(at, 'a string', entry);
      if (entry.length > valueLength) fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected at most ${valueLength} characters.`);
      at.pop();
    }
  };
}

const formatName: Check = (value, at) => {
  if (typeof value !== 'string') wrongType(at, 'a string', value);
  if (!FORMAT_NAME.test(value)) fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(value)}'. A format name must be 1 to 64 letters, digits, underscores or hyphens.`);
};
const TYPE = { type: string };
const textFormat = typed(
  new Map([
    ['text', objectShape('a text format', TYPE)],
    ['json_object', objectShape('a json_object format', TYPE)],
    ['json_schema', objectShape('a json_schema format', { ...TYPE, name: formatName, schema: object }, { description: string, strict: nullable(boolean) })],
  ]),
  "'text.format'",
);
const input = (value: unknown, at: Cursor, storeOn: boolean): void => {
  if (typeof value === 'string') return;
  if (!Array.isArray(value)) wrongType(at, 'a string or an array of input items', value);
  if (value.length > MAX_ITEMS) fail(at, 'array_above_max_length', `Invalid ${where(at)}: array too long. Expected at most ${MAX_ITEMS} items.`);
  for (let i = 0; i < value.length; i++) {
    at.push(i);
    checkItem(value[i], at, storeOn);
    at.pop();
  }
};
const promptVariable: Check = (value, at) => {
  if (typeof value !== 'string' && !isObject(value)) wrongType(at, 'a string or an input part', value);
};

/** Every documented top-level field the walk checks itself, but input, tools and tool_choice. */
const FIELDS: ReadonlyMap<string, Check> = new Map(
  Object.entries({
    model: (value: unknown, at: Cursor) => {
      nonEmptyString(value, at);
      if ((value as string).length > MAX_MODEL_LENGTH) fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected at most ${MAX_MODEL_LENGTH} characters.`);
    },
    instructions: nullable(string),
    parallel_tool_calls: nullable(boolean),
    max_output_tokens: nullable(integerIn(MIN_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS)),
    max_tool_calls: nullable(integerIn(1, MAX_OUTPUT_TOKENS)),
    temperature: nullable(numberIn(0, 2)),
    top_p: nullable(numberIn(0, 1)),
    top_logprobs: nullable(integerIn(0, MAX_TOP_LOGPROBS)),
    text: shaped(objectShape("'text'", {}, { format: textFormat, verbosity: nullable(oneOf(['low', 'medium', 'high'])) })),
    reasoning: nullable(
      shaped(objectShape("'reasoning'", {}, { effort: nullable(oneOf(REASONING_EFFORTS)), summary: SUMMARY, generate_summary: SUMMARY, context: nullable(oneOf(['auto', 'current_turn', 'all_turns'])), mode: stringUpTo(64) })),
    ),
    include: nullable(arrayOf(oneOf(INCLUDABLE), INCLUDABLE.length * 2)),
    store: nullable(boolean),
    stream: nullable(boolean),
    stream_options: nullable(shaped(objectShape("'stream_options'", {}, { include_obfuscation: boolean }))),
    metadata: nullable(stringMap('metadata', MAX_METADATA_PAIRS, MAX_METADATA_KEY, MAX_METADATA_VALUE)),
    client_metadata: nullable(stringMap('client_metadata', MAX_CLIENT_METADATA_PAIRS, MAX_CLIENT_METADATA_KEY, MAX_CLIENT_METADATA_VALUE)),
    user: stringUpTo(MAX_IDENTIFIER),
    safety_identifier: nullable(stringUpTo(MAX_SAFETY_IDENTIFIER)),
    prompt_cache_key: nullable(stringUpTo(MAX_IDENTIFIER)),
    prompt_cache_retention: nullable(oneOf(['in_memory', '24h'])),
    prompt_cache_options: shaped(objectShape("'prompt_cache_options'", {}, { mode: oneOf(['implicit', 'explicit']), prewarm: boolean, ttl: oneOf(['30m', '12h']) })),
    prompt: nullable(shaped(objectShape("'prompt'", { id: nonEmptyString }, { version: nullable(string), variables: nullable((value, at) => {
      if (!isObject(value)) wrongType(at, 'an object', value);
      for (const key in value) {
        at.push(key);
        promptVariable(value[key], at);
        at.pop();
      }
    }) }))),
    background: nullable(boolean),
    service_tier: nullable(oneOf(SERVICE_TIERS)),
    truncation: nullable(oneOf(['auto', 'disabled'])),
    context_management: nullable(arrayOf(shaped(objectShape('a context_management entry', { type: nonEmptyString }, { compact_threshold: nullable(integerIn(1, 100_000_000)) })), MAX_CONTEXT_MANAGEMENT)),
    moderation: nullable(shaped(objectShape("'moderation'", { model: nonEmptyString }, { policy: nullable(object) }))),
    image: shaped(objectShape("'image'", {}, { context_compression: oneOf(['auto', 'enabled', 'disabled']) })),
    access_programs: shaped(objectShape("'access_programs'", {}, { cyber: oneOf(['standard', 'daybreak_blue', 'daybreak_red']) })),
  }),
);

/**
 * Fields that change what a request costs or may do at OpenAI: taken only
 * where the operator lets them through (they then arrive as extra fields,
 * still checked for their shape).
 */
export const OPERATOR_CONSENT_FIELDS: readonly string[] = ['service_tier', 'access_programs'];

/** Stateful fields: refused while the gateway's store is off, whatever the upstream. */
const STATEFUL: ReadonlyMap<string, string> = new Map([
  ['previous_response_id', 'previous_response_id names a response stored earlier'],
  ['conversation', 'conversation names a conversation stored at OpenAI'],
]);

/** Every top-level field the validator knows (config's documented Responses fields equal it). */
export const DOCUMENTED_TOP_LEVEL_FIELDS: readonly string[] = ['input', 'tools', 'tool_choice', ...STATEFUL.keys(), ...FIELDS.keys()];

/** POST /v1/responses: the body, checked, typed. Throws InvalidRequestError for the first fault. */
export function validateResponsesRequest(body: unknown, options: ResponsesValidationOptions): ResponsesRequest {
  const at: Cursor = [];
  if (!isObject(body)) wrongType(at, 'a JSON object', body);
  let offered: OfferedNames = { functions: new Set() };
  const storeOn = options.responseStore === true;
  for (const key in body) {
    const value = body[key];
    if (value === undefined) continue;
    at.push(key);
    if (key === 'input') input(value, at, storeOn);
    else if (key === 'tools') offered = checkTools(value, at);
    else if (STATEFUL.has(key)) {
      if (key === 'previous_response_id' && storeOn) {
        if (value !== null) responseId(value, at);
      } else if (value !== null) refuseStateful(key, value, at, storeOn);
    } else if (key !== 'tool_choice') {
      const check = FIELDS.get(key);
      if (check === undefined) {
        if (!options.extraFields.has(key)) refuseField(at);
      } else {
        check(value, at);
        if (needsConsent(key, value) && !options.extraFields.has(key)) refuseConsent(key, value, at);
      }
    }
    at.pop();
  }
  if (body['model'] === undefined) missing(at, 'model');
  if (body['background'] === true) {
    at.push('background');
    const why = storeOn ? "the gateway's response store keeps only finished responses" : STORE_OFF;
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: true. A background response is polled from a response store, and ${why}. Leave 'background' out and wait for the answer, or stream it.`);
  }
  if (body['tool_choice'] !== undefined) {
    at.push('tool_choice');
    checkToolChoice(body['tool_choice'], at, offered);
    at.pop();
  }
  return body as ResponsesRequest;
}

/**
 * The top-level fields of a validated body that only a provider whose operator
 * allows them by name may receive: those the Responses API does not define
 * (the options let them through), and the consent fields with a value that
 * needs it (service_tier beyond auto/default, access_programs), which one
 * provider's consent must not open to every other.
 */
export function passthroughFields(body: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const key in body) {
    const value = body[key];
    if (value === undefined) continue;
    if (OPERATOR_CONSENT_FIELDS.includes(key)) {
      if (needsConsent(key, value)) out.push(key);
    } else if (key !== 'input' && key !== 'tools' && key !== 'tool_choice' && !STATEFUL.has(key) && !FIELDS.has(key)) {
      out.push(key);
    }
  }
  return out;
}

function needsConsent(key: string, value: unknown): boolean {
  if (key === 'service_tier') return value !== null && !DEFAULT_TIERS.has(value as string);
  return key === 'access_programs';
}

function refuseConsent(key: string, value: unknown, at: Cursor): never {
  const what = key === 'service_tier' ? `service_tier '${value as string}'` : key;
  fail(
    at,
    'unknown_parameter',
    `Field ${where(at)}: ${what} changes what the request costs or may do at OpenAI, so the gateway passes it only where its operator allows it. Remove it, or, for the gateway's operator to allow it, ${PASSTHROUGH_HINT}.`,
  );
}

/** OpenAI's ids are `resp_` and 50 hex digits; the bound keeps a client's string out of error echoes at size. */
const MAX_RESPONSE_ID = 256;

function responseId(value: unknown, at: Cursor): void {
  if (typeof value !== 'string') wrongType(at, 'a string', value);
  if (value.length === 0 || value.length > MAX_RESPONSE_ID) fail(at, 'invalid_value', `Invalid value for ${where(at)}: a response id is 1 to ${MAX_RESPONSE_ID} characters; got ${value.length}.`);
}

function refuseStateful(key: string, value: unknown, at: Cursor, storeOn: boolean): never {
  if (typeof value !== 'string' && !(key === 'conversation' && isObject(value))) wrongType(at, key === 'conversation' ? 'a string or an object' : 'a string', value);
  if (storeOn) {
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: ${STATEFUL.get(key) as string}, and the gateway's response store keeps responses, not conversations. Continue with 'previous_response_id', or send the whole conversation in 'input'.`);
  }
  fail(
    at,
    'invalid_value',
    `Invalid value for ${where(at)}: ${STATEFUL.get(key) as string}, and ${STORE_OFF}, so the gateway holds no earlier turns. Send the whole conversation in 'input' instead (with 'store': false, as Codex does), or ask the gateway's operator to turn the response store on.`,
  );
}

function refuseField(at: Cursor): never {
  fail(at, 'unknown_parameter', `Unknown field ${where(at)}: the Responses API defines no such field. Remove it, or, for the gateway's operator to pass it to an upstream speaking Responses unchecked, ${PASSTHROUGH_HINT}.`);
}
