// The structural skeleton of a chat-completion request: which fields exist at
// each place and which JSON kinds they may hold. It is the common ground of
// the two checkers: the streaming observer rejects a body at the first byte
// that breaks it, and the validator reports the same faults, in the same
// order, through the structural pass (request-structure.ts), so both report
// the same first fault. The validator's walk tests these kinds too, as it
// narrows each value (test/chat/request-prompt-bound.test.ts holds the two
// to each other).
//
// Field sets follow the spec's request, message and content-part tables,
// with the gaps filled the way OpenAI's API defines them. Kinds are the union
// over every role: what depends on the role (role comes in any order among a
// message's fields) is left to the validator's later pass.
//
// Keys that begin with a digit are never reported here. JavaScript objects
// list integer-like keys first, whatever their place in the bytes, so the
// order of such a fault cannot be agreed between the byte stream and the
// parsed value; the validator reports them in its later pass.

import type { JsonValueKind } from '../json/parser.ts';

const KindBit = { object: 1, array: 2, string: 4, number: 8, boolean: 16, null: 32 } as const;

export interface ValueShape {
  /** Accepted kinds, as a set of KindBit values. */
  readonly kinds: number;
  /** How an invalid_type message names what is accepted. */
  readonly expected: string;
  /** Known fields of an object; absent: the object's contents are not checked here. */
  readonly fields?: ReadonlyMap<string, ValueShape>;
  /** Shape of each entry of an array; absent: entries are not checked here. */
  readonly items?: ValueShape;
  /** Entries beyond this count are rejected as soon as the first of them starts. */
  readonly maxItems?: number;
}

function shape(kinds: readonly JsonValueKind[], expected: string, rest: Omit<ValueShape, 'kinds' | 'expected'> = {}): ValueShape {
  let bits = 0;
  for (const kind of kinds) bits |= KindBit[kind];
  return { kinds: bits, expected, ...rest };
}

function fields(entries: Record<string, ValueShape>): ReadonlyMap<string, ValueShape> {
  return new Map(Object.entries(entries));
}

const STRING = shape(['string'], 'a string');
const NULLABLE_STRING = shape(['string', 'null'], 'a string');
const NULLABLE_NUMBER = shape(['number', 'null'], 'a number');
const NULLABLE_INTEGER = shape(['number', 'null'], 'an integer');
const NULLABLE_BOOLEAN = shape(['boolean', 'null'], 'a boolean');
const FREE_OBJECT = shape(['object'], 'an object');
const NULLABLE_FREE_OBJECT = shape(['object', 'null'], 'an object');
const BOOLEAN = shape(['boolean'], 'a boolean');
const ANY = shape(['object', 'array', 'string', 'number', 'boolean', 'null'], 'a JSON value');

/** Spec limits (Limits table). */
export const MAX_MESSAGES = 256;
export const MAX_TOOLS = 64;
export const MAX_STOP_ENTRIES = 4;

const CONTENT_PART = shape(['object'], 'an object', {
  fields: fields({
    type: STRING,
    text: STRING,
    image_url: shape(['object'], 'an object', { fields: fields({ url: STRING, detail: STRING }) }),
    refusal: STRING,
  }),
});

const TOOL_CALL = shape(['object'], 'an object', {
  fields: fields({
    id: STRING,
    type: STRING,
    // parsed_arguments: added by the openai SDKs' parse and runTools helpers.
    function: shape(['object'], 'an object', { fields: fields({ name: STRING, arguments: STRING, parsed_arguments: ANY }) }),
  }),
});

/** Every field any role may carry; which role may carry which is checked later. */
const MESSAGE = shape(['object'], 'an object', {
  fields: fields({
    role: STRING,
    content: shape(['string', 'array', 'null'], 'a string or an array of content parts', { items: CONTENT_PART }),
    name: STRING,
    tool_call_id: STRING,
    tool_calls: shape(['array', 'null'], 'an array', { items: TOOL_CALL }),
    refusal: NULLABLE_STRING,
    // Echoed back from a response by SDK tool loops (parsed: by the openai
    // SDKs' parse and runTools helpers); accepted, never forwarded.
    annotations: shape(['array'], 'an array'),
    parsed: ANY,
    audio: shape(['object', 'null'], 'an object'),
    function_call: shape(['object', 'null'], 'null'),
    reasoning_content: NULLABLE_STRING,
  }),
});

const TOOL = shape(['object'], 'an object', {
  fields: fields({
    type: STRING,
    function: shape(['object'], 'an object', {
      fields: fields({
        name: STRING,
        description: STRING,
        // A JSON schema: its depth is bounded by the parser, never walked here.
        parameters: FREE_OBJECT,
        strict: NULLABLE_BOOLEAN,
      }),
    }),
  }),
});

/**
 * OpenAI's request fields beyond the contract's table, as OpenAI's API defines
 * them (nullable where it marks them so). The skeleton knows them so their
 * kinds are checked as the body arrives; whether a request may carry one at
 * all is the operator's field policy (request-fields.ts).
 */
export const OPTIONAL_FIELD_SHAPES: ReadonlyMap<string, ValueShape> = fields({
  seed: NULLABLE_INTEGER,
  user: STRING,
  safety_identifier: STRING,
  prompt_cache_key: STRING,
  metadata: NULLABLE_FREE_OBJECT,
  parallel_tool_calls: BOOLEAN,
  logprobs: NULLABLE_BOOLEAN,
  top_logprobs: NULLABLE_INTEGER,
  frequency_penalty: NULLABLE_NUMBER,
  presence_penalty: NULLABLE_NUMBER,
  logit_bias: NULLABLE_FREE_OBJECT,
  reasoning_effort: NULLABLE_STRING,
  service_tier: NULLABLE_STRING,
  prediction: shape(['object', 'null'], 'an object', {
    fields: fields({ type: STRING, content: shape(['string', 'array'], 'a string or an array of text parts', { items: CONTENT_PART }) }),
  }),
  verbosity: NULLABLE_STRING,
  store: NULLABLE_BOOLEAN,
});

/** Spec: chat completion request table; nullable where OpenAI's API marks it so. */
export const REQUEST_SHAPE: ValueShape = shape(['object'], 'an object', {
  fields: fields({
    model: STRING,
    messages: shape(['array'], 'an array of messages', { items: MESSAGE, maxItems: MAX_MESSAGES }),
    tools: shape(['array'], 'an array of tools', { items: TOOL, maxItems: MAX_TOOLS }),
    tool_choice: shape(['string', 'object'], 'a string or an object', {
      fields: fields({ type: STRING, function: shape(['object'], 'an object', { fields: fields({ name: STRING }) }) }),
    }),
    response_format: shape(['object'], 'an object', {
      fields: fields({
        type: STRING,
        json_schema: shape(['object'], 'an object', {
          // A JSON schema: bounded by the parser; strict ones are checked by src/schema/.
          fields: fields({ name: STRING, description: STRING, schema: FREE_OBJECT, strict: NULLABLE_BOOLEAN }),
        }),
      }),
    }),
    temperature: NULLABLE_NUMBER,
    top_p: NULLABLE_NUMBER,
    max_tokens: NULLABLE_INTEGER,
    max_completion_tokens: NULLABLE_INTEGER,
    stop: shape(['string', 'array', 'null'], 'a string or an array of strings', { items: STRING, maxItems: MAX_STOP_ENTRIES }),
    stream: NULLABLE_BOOLEAN,
    stream_options: shape(['object', 'null'], 'an object', { fields: fields({ include_usage: shape(['boolean'], 'a boolean') }) }),
    n: NULLABLE_INTEGER,
    ...Object.fromEntries(OPTIONAL_FIELD_SHAPES),
  }),
});

function depthOf(s: ValueShape): number {
  let deepest = 0;
  if (s.fields !== undefined) for (const child of s.fields.values()) deepest = Math.max(deepest, depthOf(child));
  if (s.items !== undefined) deepest = Math.max(deepest, depthOf(s.items));
  return deepest + 1;
}

/** Longest path (in segments) that reaches a checked value: deeper values are never looked at. */
export const MAX_SHAPED_PATH_LENGTH = depthOf(REQUEST_SHAPE) - 1;

export function acceptsKind(s: ValueShape, kind: JsonValueKind): boolean {
  return (s.kinds & KindBit[kind]) !== 0;
}

/** See the file comment: such keys are left to the validator's later pass. */
export function isIndexLikeKey(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 0x30 && c <= 0x39;
}

/**
 * The shape of the value at `path[0 .. length)`, or undefined when that value
 * is not checked structurally. At most MAX_SHAPED_PATH_LENGTH map lookups.
 */
export function shapeAt(path: readonly (string | number)[], length: number): ValueShape | undefined {
  let current: ValueShape | undefined = REQUEST_SHAPE;
  for (let i = 0; i < length && current !== undefined; i++) {
    const segment = path[i];
    current = typeof segment === 'number' ? current.items : current.fields?.get(segment as string);
  }
  return current;
}

/** A JSON object: what the skeleton calls 'object' (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON kind of a parsed value; undefined for what JSON cannot hold. */
export function jsonKindOf(value: unknown): JsonValueKind | undefined {
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return value === null ? 'null' : Array.isArray(value) ? 'array' : 'object';
    default:
      return undefined;
  }
}
