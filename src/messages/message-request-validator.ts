// Validation of an Anthropic Messages request body, already parsed from JSON:
// POST /v1/messages (validateMessagesRequest) and
// POST /v1/messages/count_tokens (validateCountTokensRequest). Shapes and
// sources: ./message-request-types.ts; blocks: ./message-request-blocks.ts;
// tools: ./message-request-tools.ts.
//
// The body is returned as it is, never rebuilt: an Anthropic upstream
// receives the client's request unchanged (thinking signatures,
// cache_control, citations). One walk, in the body's order; the first fault
// throws InvalidRequestError with the path as `param`.
//
// Rules beyond the shapes, as Anthropic's API answers them:
// - the first message uses the "user" role ("messages: first message must use
//   the "user" role"); consecutive messages of one role are allowed (the API
//   combines them); a "system" message (beta: Claude Code sends one after the
//   first user message) may not come first, holds text (or tool changes),
//   and may carry `clear_at` and a per-turn `output_config`; it needs content
//   or a non-empty output_config;
// - every message's content is non-empty, except a final assistant message
//   (a prefill may be empty);
// - tool_result blocks stand in user messages; tool_use, thinking and
//   redacted_thinking blocks in assistant messages;
// - tool names are unique, and a tool_choice of type "tool" names one;
// - anthropic-version 2026-10-21 and later (options.version): temperature,
//   top_p and top_k are refused, as are document blocks directly in
//   assistant messages and non-empty citations on text in user messages
//   (https://platform.claude.com/docs/en/api/migration-2026-10-21).
// An unknown top-level field is refused unless the options name it (the
// operator's `messagesPassthrough` of an Anthropic provider): then it is
// accepted unchecked, for an Anthropic upstream to judge.
import { cacheControl, messageBlock, MAX_BLOCKS, SERVER_BLOCKS, TEXT_BLOCK, textBlock, typed } from './message-request-blocks.ts';
import {
  anyJson,
  arrayOf,
  boolean,
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
  stringOr,
  stringUpTo,
  where,
  wrongType,
  type Check,
  type Cursor,
  type ObjectShape,
} from './message-request-checks.ts';
import { checkToolChoice, checkTools } from './message-request-tools.ts';
import type { CountTokensRequest, MessagesRequest } from './message-request-types.ts';
import { MAX_MODEL_LENGTH, MAX_OUTPUT_TOKENS_PARAM } from '../chat/request-validator.ts';

export interface MessagesValidationOptions {
  /** Top-level fields outside the documented request to accept unchecked. */
  readonly extraFields: ReadonlySet<string>;
  /** The client's anthropic-version header; absent: 2023-06-01's rules. */
  readonly version?: string;
}

/** Anthropic's documented limit of messages in one request. */
export const MAX_MESSAGES = 100_000;
/** No documented bound; generous, the body's byte limit bounds the rest. */
export const MAX_STOP_SEQUENCES = 256;
/** As for chat's user and metadata identifiers. */
const MAX_IDENTIFIER = 256;
const MAX_MCP_SERVERS = 256;
/** The first API version that removed the sampling parameters. */
const VERSION_2026_10_21 = '2026-10-21';

const PASSTHROUGH_HINT = "add it to `messagesPassthrough` of an Anthropic provider in the gateway's config";

const system = stringOr(arrayOf(textBlock, MAX_BLOCKS));
const thinking = typed(
  new Map([
    ['enabled', objectShape('an enabled thinking setting', { type: string, budget_tokens: integerIn(1024, MAX_OUTPUT_TOKENS_PARAM) }, { display: nullable(oneOf(['summarized', 'omitted'])) })],
    ['adaptive', objectShape('an adaptive thinking setting', { type: string }, { display: nullable(oneOf(['summarized', 'omitted'])) })],
    ['disabled', objectShape('a disabled thinking setting', { type: string })],
    ['between_tools', objectShape('a between_tools thinking setting', { type: string })],
  ]),
  "'thinking'",
);
const outputConfig = shaped(
  objectShape(
    'output_config',
    {},
    {
      effort: nullable(oneOf(['low', 'medium', 'high', 'xhigh', 'max'])),
      format: nullable(shaped(objectShape('an output format', { type: oneOf(['json_schema']), schema: object }))),
    },
  ),
);
const containerParam: Check = (value, at) => {
  if (value !== null && typeof value !== 'string' && !isObject(value)) wrongType(at, 'a string or an object', value);
};

/** Fields both endpoints take (messages and tools are walked apart). */
const COMMON_FIELDS: Record<string, Check> = {
  model: (value, at) => {
    nonEmptyString(value, at);
    if ((value as string).length > MAX_MODEL_LENGTH) fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected at most ${MAX_MODEL_LENGTH} characters.`);
  },
  system,
  thinking,
  output_config: outputConfig,
  cache_control: cacheControl,
  // Beta settings an OpenAI-compatible upstream never sees: their inside is the Anthropic upstream's to check.
  context_management: nullable(object),
  mcp_servers: arrayOf(object, MAX_MCP_SERVERS),
  compaction: nullable(object),
  output_format: nullable(object),
};

const CREATE_FIELDS: ReadonlyMap<string, Check> = new Map(
  Object.entries({
    ...COMMON_FIELDS,
    max_tokens: integerIn(0, MAX_OUTPUT_TOKENS_PARAM),
    stream: boolean,
    stop_sequences: arrayOf(string, MAX_STOP_SEQUENCES),
    metadata: shaped(objectShape('metadata', {}, { user_id: nullable(stringUpTo(MAX_IDENTIFIER)) })),
    service_tier: oneOf(['auto', 'standard_only']),
    temperature: numberIn(0, 1),
    top_p: numberIn(0, 1),
    top_k: integerIn(0, MAX_OUTPUT_TOKENS_PARAM),
    container: containerParam,
    diagnostics: nullable(shaped(objectShape('diagnostics', {}, { previous_message_id: nullable(string) }))),
    thread: nullable(object),
  }),
);

/**
 * Anthropic's fields that change what a request costs or where it runs at
 * Anthropic: other models it may fall back to (with their own max_tokens),
 * their credit and billing, a faster (dearer) mode, the region. A client
 * may send them only to a provider whose operator names them in
 * `messagesPassthrough` (they then arrive as extra fields).
 */
export const OPERATOR_CONSENT_FIELDS: readonly string[] = ['fallbacks', 'fallback_credit_token', 'billing_policy', 'speed', 'inference_geo'];
const CONSENT = new Set(OPERATOR_CONSENT_FIELDS);

/** Every top-level field of a create request the validator checks itself: the
 * documented request but OPERATOR_CONSENT_FIELDS (config's DOCUMENTED_MESSAGES_FIELDS equals it). */
export const DOCUMENTED_TOP_LEVEL_FIELDS: readonly string[] = ['messages', 'tools', 'tool_choice', ...CREATE_FIELDS.keys()];
const COUNT_FIELDS: ReadonlyMap<string, Check> = new Map(Object.entries(COMMON_FIELDS));
const SAMPLING = new Set(['temperature', 'top_p', 'top_k']);

interface Endpoint {
  readonly name: string;
  readonly fields: ReadonlyMap<string, Check>;
  readonly required: readonly string[];
}

const CREATE: Endpoint = { name: 'POST /v1/messages', fields: CREATE_FIELDS, required: ['model', 'messages', 'max_tokens'] };
const COUNT: Endpoint = { name: 'POST /v1/messages/count_tokens', fields: COUNT_FIELDS, required: ['model', 'messages'] };

/** POST /v1/messages: the body, checked, typed. Throws InvalidRequestError for the first fault. */
export function validateMessagesRequest(body: unknown, options: MessagesValidationOptions): MessagesRequest {
  return validate(body, options, CREATE) as MessagesRequest;
}

/** POST /v1/messages/count_tokens: as a create request without the generation fields. */
export function validateCountTokensRequest(body: unknown, options: MessagesValidationOptions): CountTokensRequest {
  return validate(body, options, COUNT) as CountTokensRequest;
}

/**
 * The top-level fields of a validated body that the Messages API does not
 * define (those the options let through): what the Messages origin's
 * `extraFields` lists, for only an Anthropic provider allowing them by name.
 */
export function passthroughFields(body: Readonly<Record<string, unknown>>, endpoint: 'create' | 'count_tokens' = 'create'): string[] {
  const fields = endpoint === 'create' ? CREATE_FIELDS : COUNT_FIELDS;
  const out: string[] = [];
  for (const key in body) {
    if (body[key] !== undefined && key !== 'messages' && key !== 'tools' && key !== 'tool_choice' && !fields.has(key)) out.push(key);
  }
  return out;
}

function validate(body: unknown, options: MessagesValidationOptions, endpoint: Endpoint): Record<string, unknown> {
  const at: Cursor = [];
  if (!isObject(body)) wrongType(at, 'a JSON object', body);
  const modern = options.version !== undefined && options.version >= VERSION_2026_10_21;
  let toolNames: Set<string> = new Set();
  for (const key in body) {
    const value = body[key];
    if (value === undefined) continue;
    at.push(key);
    if (key === 'messages') {
      checkMessages(value, at, modern);
    } else if (key === 'tools') {
      toolNames = checkTools(value, at);
    } else if (key !== 'tool_choice') {
      const check = endpoint.fields.get(key);
      if (check !== undefined && !(modern && SAMPLING.has(key))) check(value, at);
      else if (!options.extraFields.has(key)) refuseField(key, at, endpoint, modern);
    }
    at.pop();
  }
  for (const key of endpoint.required) if (body[key] === undefined) missing(at, key);
  if (body['tool_choice'] !== undefined) {
    at.push('tool_choice');
    checkToolChoice(body['tool_choice'], at, toolNames);
    at.pop();
  }
  return body;
}

function refuseField(key: string, at: Cursor, endpoint: Endpoint, modern: boolean): never {
  if (modern && SAMPLING.has(key)) {
    fail(at, 'unknown_parameter', `Unsupported field ${where(at)}: anthropic-version ${VERSION_2026_10_21} and later removed temperature, top_p and top_k. Remove it, or send anthropic-version: 2023-06-01.`);
  }
  if (CONSENT.has(key)) {
    fail(
      at,
      'unknown_parameter',
      `Field ${where(at)} changes what the request costs or where it runs at Anthropic, so the gateway passes it only where its operator allows it. Remove it, or, for the gateway's operator to allow it, ${PASSTHROUGH_HINT}.`,
    );
  }
  if (endpoint === COUNT && CREATE_FIELDS.has(key)) {
    fail(at, 'unknown_parameter', `Unknown field ${where(at)}: ${endpoint.name} does not take it (it counts the prompt only). Remove it.`);
  }
  fail(at, 'unknown_parameter', `Unknown field ${where(at)}: the Messages API defines no such field. Remove it, or, for the gateway's operator to pass it to an Anthropic upstream unchecked, ${PASSTHROUGH_HINT}.`);
}

const ROLES = oneOf(['user', 'assistant', 'system']);
const ASSISTANT_ONLY = new Set(['tool_use', 'thinking', 'redacted_thinking']);

function checkMessages(value: unknown, at: Cursor, modern: boolean): void {
  if (!Array.isArray(value)) wrongType(at, 'an array of messages', value);
  if (value.length === 0) fail(at, 'array_below_min_length', `Invalid ${where(at)}: empty array. Expected at least one message.`);
  if (value.length > MAX_MESSAGES) fail(at, 'array_above_max_length', `Invalid ${where(at)}: array too long. Expected at most ${MAX_MESSAGES} messages.`);
  const last = value.length - 1;
  for (let i = 0; i <= last; i++) {
    at.push(i);
    checkMessage(value[i], at, i, i === last, modern);
    at.pop();
  }
}

/** A system message (beta): text, or tool changes; a per-turn effort; how long it stays. */
const SYSTEM_MESSAGE_FIELDS: ReadonlyMap<string, Check> = new Map([
  ['clear_at', nullable(oneOf(['next_user_message', 'never']))],
  ['output_config', nullable(shaped(objectShape('a system message output_config', {}, { effort: nullable(oneOf(['low', 'medium', 'high', 'xhigh', 'max'])) })))],
]);
const systemMessageContent = stringOr(arrayOf(typed(new Map([['text', TEXT_BLOCK], ['tool_addition', SERVER_BLOCKS.get('tool_addition') as ObjectShape], ['tool_removal', SERVER_BLOCKS.get('tool_removal') as ObjectShape]]), 'system message content'), MAX_BLOCKS));

function checkMessage(message: unknown, at: Cursor, index: number, isLast: boolean, modern: boolean): void {
  if (!isObject(message)) wrongType(at, 'an object', message);
  const role = message['role'];
  if (role === undefined) missing(at, 'role');
  at.push('role');
  ROLES(role, at);
  if (index === 0 && role !== 'user') {
    const hint = role === 'system' ? " Put the system prompt in the top-level 'system' field." : '';
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${role as string}'. The first message must use the 'user' role.${hint}`);
  }
  at.pop();
  for (const key in message) {
    const value = message[key];
    if (key === 'role' || key === 'content' || value === undefined) continue;
    const check = role === 'system' ? SYSTEM_MESSAGE_FIELDS.get(key) : undefined;
    at.push(key);
    if (check === undefined) {
      const takes = role === 'system' ? "'role', 'content', 'clear_at' and 'output_config'" : "'role' and 'content'";
      fail(at, 'unknown_parameter', `Unknown field ${where(at)}: ${role as string} messages take only ${takes}. Remove it.`);
    }
    check(value, at);
    at.pop();
  }
  const content = message['content'];
  if (role === 'system') {
    const config = message['output_config'];
    if (content === undefined && !(isObject(config) && Object.keys(config).length > 0)) missing(at, 'content', 'A system message needs content or an output_config.');
    if (content === undefined) return;
  } else if (content === undefined) {
    missing(at, 'content');
  }
  at.push('content');
  if (role === 'system') systemMessageContent(content, at);
  else if (typeof content !== 'string') checkBlocks(content, at, role as string, modern);
  const mayBeEmpty = isLast && role === 'assistant';
  if (!mayBeEmpty && (content === '' || (Array.isArray(content) && content.length === 0))) {
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: a message's content must be non-empty (only a final assistant message may be empty).`);
  }
  at.pop();
}

function checkBlocks(content: unknown, at: Cursor, role: string, modern: boolean): void {
  if (!Array.isArray(content)) wrongType(at, 'a string or an array of content blocks', content);
  if (content.length > MAX_BLOCKS) fail(at, 'array_above_max_length', `Invalid ${where(at)}: array too long. Expected at most ${MAX_BLOCKS} blocks.`);
  for (let i = 0; i < content.length; i++) {
    at.push(i);
    const block = content[i];
    messageBlock(block, at);
    checkPlacement(block as Record<string, unknown>, at, role, modern);
    at.pop();
  }
}

/** Where a (shape-checked) block may stand. */
function checkPlacement(block: Record<string, unknown>, at: Cursor, role: string, modern: boolean): void {
  const type = block['type'] as string;
  if (role === 'user' && ASSISTANT_ONLY.has(type)) {
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: ${type} blocks belong in assistant messages, not in user messages.`);
  }
  if (role === 'assistant' && type === 'tool_result') {
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: tool_result blocks belong in user messages, not in assistant messages.`);
  }
  if (!modern) return;
  if (role === 'assistant' && type === 'document') {
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: with anthropic-version ${VERSION_2026_10_21} and later, document blocks belong in user messages. Move it, or send anthropic-version: 2023-06-01.`);
  }
  if (role === 'user') {
    if (type === 'text') refuseUserCitations(block, at);
    else if (type === 'search_result') {
      const inner = block['content'] as Array<Record<string, unknown>>;
      at.push('content');
      for (let i = 0; i < inner.length; i++) {
        at.push(i);
        refuseUserCitations(inner[i] as Record<string, unknown>, at);
        at.pop();
      }
      at.pop();
    }
  }
}

function refuseUserCitations(text: Record<string, unknown>, at: Cursor): void {
  const citations = text['citations'];
  if (Array.isArray(citations) && citations.length > 0) {
    at.push('citations');
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: with anthropic-version ${VERSION_2026_10_21} and later, text in user messages may not carry citations. Remove them, or send anthropic-version: 2023-06-01.`);
  }
}

