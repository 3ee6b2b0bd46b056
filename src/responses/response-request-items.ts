// The input items of a Responses request and their content parts, as data:
// for each item `type`, the fields it takes and how each is checked (the
// checks and the walk are the Messages door's: ../messages/message-request-checks.ts).
// Field sets follow ResponseInputItem of openai 7.57 (see
// ./response-request-types.ts for the sources).
//
// Items the gateway translates (messages, function_call,
// function_call_output, reasoning) are checked down to their leaves. The
// items a hosted tool or OpenAI's own state made (web_search_call,
// computer_call, mcp_call, compaction, ...) are checked for their fields and
// the kind of each; what is inside their objects is an upstream speaking
// Responses' to check, since the gateway never reads it.
//
// Text (input_text, arguments, outputs, encrypted_content) is bounded by the
// body's byte limit, like every other string the gateway does not keep;
// identifiers and names have bounds of their own, so an error echo stays short.
import { typed } from '../messages/message-request-blocks.ts';
import {
  anyJson,
  arrayOf,
  boolean,
  checkFields,
  echo,
  fail,
  isObject,
  missing,
  nonEmptyString,
  nullable,
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
  type ObjectShape,
} from '../messages/message-request-checks.ts';

/** Generous bound on the items of one request and the parts of one message; the body's byte limit bounds the rest. */
export const MAX_ITEMS = 100_000;
export const MAX_PARTS = 100_000;
/** Item ids and call ids: OpenAI's are under 100 characters. */
export const MAX_ID = 256;
/** Bound on the annotations or logprobs of one output_text part. */
const MAX_ANNOTATIONS = 10_000;

/** OpenAI's function names: letters, digits, underscores and hyphens, 1 to 64. */
export const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** A namespace's name: no pattern is documented; its functions' names for a chat upstream are made from it (./tool-names.ts). */
export const MAX_NAMESPACE_NAME = 128;

export const functionName: Check = (value, at) => {
  if (typeof value !== 'string') wrongType(at, 'a string', value);
  if (!FUNCTION_NAME.test(value)) fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(value)}'. A function name must be 1 to 64 letters, digits, underscores or hyphens.`);
};
export const namespaceName: Check = (value, at) => {
  nonEmptyString(value, at);
  if ((value as string).length > MAX_NAMESPACE_NAME) fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected at most ${MAX_NAMESPACE_NAME} characters.`);
};

const id = stringUpTo(MAX_ID);
const callId: Check = (value, at) => {
  nonEmptyString(value, at);
  if ((value as string).length > MAX_ID) fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected at most ${MAX_ID} characters.`);
};
const TYPE = { type: string };
const status = oneOf(['in_progress', 'completed', 'incomplete']);
const breakpoint = nullable(shaped(objectShape('a prompt_cache_breakpoint', { mode: oneOf(['explicit']) }, { ttl: oneOf(['30m', '12h']) })));
const caller = nullable(
  typed(
    new Map([
      ['direct', objectShape('a direct caller', TYPE)],
      ['program', objectShape('a program caller', { ...TYPE, caller_id: nonEmptyString })],
    ]),
    'a caller',
  ),
);

const INPUT_TEXT = objectShape('an input_text part', { ...TYPE, text: string }, { prompt_cache_breakpoint: breakpoint });
const detail = nullable(oneOf(['low', 'high', 'auto', 'original']));
const imageFields = { detail, image_url: nullable(nonEmptyString), file_id: nullable(nonEmptyString), prompt_cache_breakpoint: breakpoint };
const INPUT_IMAGE = objectShape('an input_image part', TYPE, imageFields);
const INPUT_FILE = objectShape(
  'an input_file part',
  TYPE,
  { detail: oneOf(['auto', 'low', 'high']), file_data: nullable(string), file_id: nullable(nonEmptyString), file_url: nullable(nonEmptyString), filename: nullable(string), prompt_cache_breakpoint: breakpoint },
);
const OUTPUT_TEXT = objectShape('an output_text part', { ...TYPE, text: string }, { annotations: arrayOf(object, MAX_ANNOTATIONS), logprobs: arrayOf(object, MAX_ANNOTATIONS) });
const REFUSAL = objectShape('a refusal part', { ...TYPE, refusal: string });

/** An image needs a URL or a file id: OpenAI refuses one with neither. */
const inputImage: Check = (value, at) => {
  const part = value as Record<string, unknown>;
  if ((part['image_url'] ?? null) === null && (part['file_id'] ?? null) === null) {
    fail(at, 'missing_required_parameter', `Missing an image in ${where(at)}: an input_image needs 'image_url' (a URL or a data: URL) or 'file_id'.`);
  }
};
const inputFile: Check = (value, at) => {
  const part = value as Record<string, unknown>;
  if ((part['file_data'] ?? null) === null && (part['file_id'] ?? null) === null && (part['file_url'] ?? null) === null) {
    fail(at, 'missing_required_parameter', `Missing a file in ${where(at)}: an input_file needs 'file_data', 'file_id' or 'file_url'.`);
  }
};

/** Parts by type, with a check of the whole part after its fields. */
function parts(shapes: ReadonlyMap<string, ObjectShape>, here: string): Check {
  const byType = typed(shapes, here);
  return arrayOf((value, at) => {
    byType(value, at);
    const type = (value as Record<string, unknown>)['type'];
    if (type === 'input_image') inputImage(value, at);
    else if (type === 'input_file') inputFile(value, at);
  }, MAX_PARTS);
}

const INPUT_PARTS = new Map([
  ['input_text', INPUT_TEXT],
  ['input_image', INPUT_IMAGE],
  ['input_file', INPUT_FILE],
]);
/** The content of a user, system or developer message. */
export const inputParts = parts(INPUT_PARTS, 'input message content');
/** An assistant message echoed back: its own output parts, or input_text as EasyInputMessage allows. */
const assistantParts = parts(new Map([['output_text', OUTPUT_TEXT], ['refusal', REFUSAL], ['input_text', INPUT_TEXT]]), 'assistant message content');
/** What a function returned: text, or parts. */
const functionOutput: Check = (value, at) => {
  if (typeof value === 'string') return;
  if (!Array.isArray(value)) wrongType(at, 'a string or an array of input parts', value);
  inputParts(value, at);
};

const MESSAGE_FIELDS: ReadonlyMap<string, Check> = new Map([
  ['type', oneOf(['message'])],
  ['role', anyJson],
  ['content', anyJson],
  ['id', id],
  ['status', status],
  ['phase', nullable(oneOf(['commentary', 'final_answer']))],
]);
const MESSAGE_LISTED = "'type', 'role', 'content', 'id', 'status', 'phase'";
const ROLES = oneOf(['user', 'assistant', 'system', 'developer']);

/** A message item: EasyInputMessage, an input message, or an output message echoed back. */
function checkMessage(item: Record<string, unknown>, at: Cursor): void {
  for (const key in item) {
    const value = item[key];
    if (value === undefined) continue;
    const check = MESSAGE_FIELDS.get(key);
    at.push(key);
    if (check === undefined) fail(at, 'unknown_parameter', `Unknown field ${where(at)}: a message item takes only ${MESSAGE_LISTED}. Remove it.`);
    check(value, at);
    at.pop();
  }
  const role = item['role'];
  if (role === undefined) missing(at, 'role');
  at.push('role');
  ROLES(role, at);
  at.pop();
  const content = item['content'];
  if (content === undefined) missing(at, 'content');
  at.push('content');
  if (typeof content !== 'string') {
    if (!Array.isArray(content)) wrongType(at, 'a string or an array of content parts', content);
    if (role === 'assistant') assistantParts(content, at);
    else inputParts(content, at);
  }
  at.pop();
}

const FUNCTION_CALL = objectShape(
  'a function_call item',
  { ...TYPE, call_id: callId, name: functionName, arguments: string },
  { namespace: namespaceName, id, async: boolean, caller, status },
);
const FUNCTION_CALL_OUTPUT = objectShape(
  'a function_call_output item',
  { ...TYPE, output: functionOutput },
  { call_id: nullable(callId), id: nullable(id), name: nullable(functionName), namespace: nullable(namespaceName), caller, status: nullable(status) },
);
/**
 * `id` is required in the SDK's type, but Codex replays reasoning items
 * without one (with store false there is nothing for an id to name), and
 * OpenAI takes them; `content` may hold `text` parts as well as
 * `reasoning_text` (what some models answer with).
 */
const REASONING_TEXT = objectShape('a reasoning_text part', { ...TYPE, text: string });
const REASONING = objectShape(
  'a reasoning item',
  { ...TYPE, summary: arrayOf(typed(new Map([['summary_text', objectShape('a summary_text part', { ...TYPE, text: string })]]), 'a reasoning summary'), MAX_PARTS) },
  {
    id: nullable(id),
    content: nullable(arrayOf(typed(new Map([['reasoning_text', REASONING_TEXT], ['text', objectShape('a text part', { ...TYPE, text: string })]]), 'a reasoning content'), MAX_PARTS)),
    encrypted_content: nullable(string),
    status,
  },
);

/**
 * An item only an upstream speaking Responses understands: its fields by name
 * (`required`: what the SDK's type marks required; `optional`: the rest), the
 * inside of its objects the upstream's. Only `type` is enforced here, and
 * every item may carry `id` and `status`: a client replaying a conversation
 * statelessly leaves ids and statuses out (Codex does), and which others the
 * upstream needs is the upstream's to say; an upstream speaking only chat
 * completions never receives the item (the translation refuses it).
 */
function hosted(name: string, required: readonly string[], optional: readonly string[]): ObjectShape {
  const fields: Record<string, Check> = {};
  for (const field of ['id', ...required, ...optional, 'status']) fields[field] = field === 'id' || field === 'call_id' ? nullable(id) : anyJson;
  return objectShape(name, TYPE, fields);
}

/** The hosted tools' call and output items, and the items of OpenAI's own state (compaction, item references, programs). */
export const HOSTED_ITEMS: ReadonlyMap<string, ObjectShape> = new Map([
  ['file_search_call', hosted('a file_search_call item', ['id', 'queries', 'status'], ['results'])],
  ['computer_call', hosted('a computer_call item', ['id', 'call_id', 'pending_safety_checks', 'status'], ['action', 'actions'])],
  ['computer_call_output', hosted('a computer_call_output item', ['call_id', 'output'], ['id', 'acknowledged_safety_checks', 'status'])],
  ['web_search_call', hosted('a web_search_call item', ['id', 'action', 'status'], [])],
  ['tool_search_call', hosted('a tool_search_call item', ['arguments'], ['id', 'call_id', 'execution', 'status'])],
  ['tool_search_output', hosted('a tool_search_output item', ['tools'], ['id', 'call_id', 'execution', 'status'])],
  ['additional_tools', hosted('an additional_tools item', ['role', 'tools'], ['id'])],
  ['configuration_update', hosted('a configuration_update item', [], ['id', 'reasoning', 'text'])],
  ['compaction', hosted('a compaction item', ['encrypted_content'], ['id'])],
  ['compaction_trigger', hosted('a compaction_trigger item', [], ['id'])],
  ['image_generation_call', hosted('an image_generation_call item', ['id', 'result', 'status'], ['action', 'background', 'error', 'output_format', 'quality', 'revised_prompt', 'size', 'svg_usage'])],
  ['code_interpreter_call', hosted('a code_interpreter_call item', ['id', 'code', 'container_id', 'outputs', 'status'], [])],
  ['local_shell_call', hosted('a local_shell_call item', ['id', 'action', 'call_id', 'status'], [])],
  ['local_shell_call_output', hosted('a local_shell_call_output item', ['id', 'output'], ['status'])],
  ['shell_call', hosted('a shell_call item', ['action', 'call_id'], ['id', 'caller', 'environment', 'status'])],
  ['shell_call_output', hosted('a shell_call_output item', ['call_id', 'output'], ['id', 'caller', 'max_output_length', 'status'])],
  ['apply_patch_call', hosted('an apply_patch_call item', ['call_id', 'operation', 'status'], ['id', 'caller'])],
  ['apply_patch_call_output', hosted('an apply_patch_call_output item', ['call_id', 'status'], ['id', 'caller', 'output'])],
  ['mcp_list_tools', hosted('an mcp_list_tools item', ['id', 'server_label', 'tools'], ['error'])],
  ['mcp_approval_request', hosted('an mcp_approval_request item', ['id', 'arguments', 'name', 'server_label'], [])],
  ['mcp_approval_response', hosted('an mcp_approval_response item', ['approval_request_id', 'approve'], ['id', 'reason'])],
  ['mcp_call', hosted('an mcp_call item', ['id', 'arguments', 'name', 'server_label'], ['approval_request_id', 'error', 'output', 'status'])],
  ['custom_tool_call', hosted('a custom_tool_call item', ['call_id', 'input', 'name'], ['id', 'async', 'caller', 'namespace'])],
  ['custom_tool_call_output', hosted('a custom_tool_call_output item', ['call_id', 'output'], ['id', 'caller'])],
  ['program', hosted('a program item', ['id', 'call_id', 'code', 'fingerprint'], [])],
  ['program_output', hosted('a program_output item', ['id', 'call_id', 'result', 'status'], [])],
]);

const ITEMS: ReadonlyMap<string, ObjectShape> = new Map([
  ['function_call', FUNCTION_CALL],
  ['function_call_output', FUNCTION_CALL_OUTPUT],
  ['reasoning', REASONING],
  ...HOSTED_ITEMS,
]);
const ACCEPTED_ITEMS = `'message', ${[...ITEMS.keys()].map((type) => `'${type}'`).join(', ')}`;

/**
 * One input item. A message may leave `type` out (EasyInputMessage); an
 * item_reference names an item stored at OpenAI, which the gateway refuses
 * (./response-request-validator.ts says why); `storeOn`: the gateway's response
 * store is on, which continues whole responses, not items.
 */
export function checkItem(item: unknown, at: Cursor, storeOn = false): void {
  if (!isObject(item)) wrongType(at, 'an object (an input item)', item);
  const type = item['type'];
  if (type === undefined || type === 'message') {
    if (type === undefined && item['role'] === undefined && item['id'] !== undefined) refuseItemReference(at, storeOn);
    checkMessage(item, at);
    return;
  }
  at.push('type');
  if (typeof type !== 'string') wrongType(at, 'a string', type);
  if (type === 'item_reference') refuseItemReference(at.slice(0, -1), storeOn);
  const shape = ITEMS.get(type);
  if (shape === undefined) fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(type)}' is not an input item type. Accepted: ${ACCEPTED_ITEMS}.`);
  at.pop();
  checkFields(item, shape, at);
}

function refuseItemReference(at: Cursor, storeOn: boolean): never {
  if (storeOn) {
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: an item_reference names one item stored with a previous response, and the gateway's response store continues whole responses. Send the item itself, or continue with 'previous_response_id'.`);
  }
  fail(
    at,
    'invalid_value',
    `Invalid value for ${where(at)}: an item_reference names an item stored with a previous response, and the gateway's response store is off. Send the item itself instead.`,
  );
}
