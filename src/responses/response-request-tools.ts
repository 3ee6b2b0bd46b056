// `tools` and `tool_choice` of a Responses request. Function, custom and
// namespace tools (the client runs them) are checked in full; a hosted tool
// (OpenAI runs it, or defines it for the client: web_search, file_search,
// computer, mcp, code_interpreter, shell, apply_patch, ...) is recognised by
// its type and checked for its fields and their kinds. Types and fields: Tool
// and the ToolChoice* types of openai 7.57 (./response-request-types.ts).
import { typed } from '../messages/message-request-blocks.ts';
import {
  anyJson,
  arrayOf,
  boolean,
  checkFields,
  echo,
  fail,
  isObject,
  nonEmptyString,
  nullable,
  object,
  objectShape,
  oneOf,
  string,
  where,
  wrongType,
  type Check,
  type Cursor,
  type ObjectShape,
} from '../messages/message-request-checks.ts';
import { functionName, namespaceName } from './response-request-items.ts';

/** Generous: Codex with MCP servers offers dozens; the body's byte limit bounds the rest. */
export const MAX_TOOLS = 10_000;

const TYPE = { type: string };
const allowedCallers = nullable(arrayOf(oneOf(['direct', 'programmatic']), 2));
const parameters: Check = (value, at) => {
  if (value !== null && !isObject(value)) wrongType(at, 'an object (a JSON schema) or null', value);
};

const FUNCTION_FIELDS = {
  parameters,
  strict: nullable(boolean),
  description: nullable(string),
  defer_loading: boolean,
  allowed_callers: allowedCallers,
  async: boolean,
  output_schema: nullable(object),
};
/** `parameters` is required (nullable) in the SDK's type; OpenAI's API takes a function without one as taking no arguments. */
const FUNCTION_TOOL = objectShape('a function tool', { ...TYPE, name: functionName }, FUNCTION_FIELDS);
const customFormat = typed(
  new Map([
    ['text', objectShape('a text format', TYPE)],
    ['grammar', objectShape('a grammar format', { ...TYPE, definition: string, syntax: oneOf(['lark', 'regex']) })],
  ]),
  "a custom tool's format",
);
const CUSTOM_TOOL = objectShape('a custom tool', { ...TYPE, name: functionName }, { description: string, format: customFormat, defer_loading: boolean, allowed_callers: allowedCallers, async: boolean });
const NAMESPACE_MEMBER = typed(
  new Map([
    ['function', FUNCTION_TOOL],
    ['custom', CUSTOM_TOOL],
  ]),
  "a namespace's tools",
);

/** A hosted tool: its fields by name, their insides the upstream's. */
function hosted(type: string, required: readonly string[], optional: readonly string[]): ObjectShape {
  const req: Record<string, Check> = { ...TYPE };
  for (const field of required) req[field] = anyJson;
  const opt: Record<string, Check> = {};
  for (const field of optional) opt[field] = anyJson;
  return objectShape(`a ${type} tool`, req, opt);
}

const WEB_SEARCH = ['external_web_access', 'filters', 'search_context_size', 'user_location'];
const WEB_SEARCH_PREVIEW = ['search_content_types', 'search_context_size', 'user_location'];
const MCP = ['allowed_callers', 'allowed_tools', 'authorization', 'connector_id', 'defer_loading', 'headers', 'require_approval', 'server_description', 'server_url', 'tunnel_id'];
const IMAGE_GENERATION = [
  'action',
  'background',
  'complexity',
  'frame_count',
  'frame_duration_ms',
  'input_fidelity',
  'input_image_mask',
  'model',
  'moderation',
  'output_compression',
  'output_format',
  'partial_images',
  'quality',
  'size',
  'svg',
];

/** The tools OpenAI runs or defines, by type. */
export const HOSTED_TOOLS: ReadonlyMap<string, ObjectShape> = new Map([
  ['file_search', hosted('file_search', ['vector_store_ids'], ['filters', 'max_num_results', 'ranking_options'])],
  ['computer', hosted('computer', [], [])],
  ['computer_use_preview', hosted('computer_use_preview', ['display_height', 'display_width', 'environment'], [])],
  ['web_search', hosted('web_search', [], WEB_SEARCH)],
  ['web_search_2025_08_26', hosted('web_search_2025_08_26', [], WEB_SEARCH)],
  ['web_search_preview', hosted('web_search_preview', [], WEB_SEARCH_PREVIEW)],
  ['web_search_preview_2025_03_11', hosted('web_search_preview_2025_03_11', [], WEB_SEARCH_PREVIEW)],
  ['mcp', hosted('mcp', ['server_label'], MCP)],
  ['code_interpreter', hosted('code_interpreter', ['container'], ['allowed_callers'])],
  ['programmatic_tool_calling', hosted('programmatic_tool_calling', [], [])],
  ['image_generation', hosted('image_generation', [], IMAGE_GENERATION)],
  ['local_shell', hosted('local_shell', [], [])],
  ['shell', hosted('shell', [], ['allowed_callers', 'environment'])],
  ['tool_search', hosted('tool_search', [], ['description', 'execution', 'parameters'])],
  ['apply_patch', hosted('apply_patch', [], ['allowed_callers'])],
]);

const TOOL_TYPES = `'function', 'custom', 'namespace', ${[...HOSTED_TOOLS.keys()].map((t) => `'${t}'`).join(', ')}`;

/** The names a request's tools give the model to call: what tool_choice may name. */
export interface OfferedNames {
  /** Function and custom tools, at the top level or in a namespace. */
  readonly functions: ReadonlySet<string>;
}

/** Checks `tools`, each in the body's order; returns the names tool_choice may name. */
export function checkTools(value: unknown, at: Cursor): OfferedNames {
  if (!Array.isArray(value)) wrongType(at, 'an array of tools', value);
  if (value.length > MAX_TOOLS) fail(at, 'array_above_max_length', `Invalid ${where(at)}: array too long. Expected at most ${MAX_TOOLS} tools.`);
  const topLevel = new Set<string>();
  const namespaces = new Set<string>();
  const functions = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    at.push(i);
    const tool = value[i];
    if (!isObject(tool)) wrongType(at, 'an object (a tool)', tool);
    const type = tool['type'];
    at.push('type');
    if (type === undefined) fail(at, 'missing_required_parameter', `Missing required field ${where(at)}. Accepted: ${TOOL_TYPES}.`);
    if (typeof type !== 'string') wrongType(at, 'a string', type);
    at.pop();
    if (type === 'function' || type === 'custom') {
      checkFields(tool, type === 'function' ? FUNCTION_TOOL : CUSTOM_TOOL, at);
      unique(tool['name'] as string, topLevel, at, 'Tool names must be unique.');
      functions.add(tool['name'] as string);
    } else if (type === 'namespace') {
      checkNamespace(tool, at, functions);
      unique(tool['name'] as string, namespaces, at, 'Namespace names must be unique.');
    } else {
      const shape = HOSTED_TOOLS.get(type);
      if (shape === undefined) {
        at.push('type');
        fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(type)}' is not a tool type. Accepted: ${TOOL_TYPES}.`);
      }
      checkFields(tool, shape, at);
    }
    at.pop();
  }
  return { functions };
}

const NAMESPACE_TOOL = objectShape('a namespace tool', { ...TYPE, name: namespaceName, description: string, tools: anyJson });

function checkNamespace(tool: Record<string, unknown>, at: Cursor, functions: Set<string>): void {
  checkFields(tool, NAMESPACE_TOOL, at);
  const members = tool['tools'];
  at.push('tools');
  arrayOf(NAMESPACE_MEMBER, MAX_TOOLS, 1)(members, at);
  const names = new Set<string>();
  const list = members as Array<Record<string, unknown>>;
  for (let i = 0; i < list.length; i++) {
    at.push(i);
    unique((list[i] as Record<string, unknown>)['name'] as string, names, at, 'Names within a namespace must be unique.');
    functions.add((list[i] as Record<string, unknown>)['name'] as string);
    at.pop();
  }
  at.pop();
}

function unique(name: string, seen: Set<string>, at: Cursor, rule: string): void {
  if (seen.has(name)) {
    at.push('name');
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(name)}' is already the name of an earlier tool. ${rule}`);
  }
  seen.add(name);
}

const named = (what: string): ObjectShape => objectShape(`a tool_choice of type '${what}'`, { ...TYPE, name: nonEmptyString }, {});
const bare = (type: string): [string, ObjectShape] => [type, objectShape(`a tool_choice of type '${type}'`, TYPE)];

const TOOL_CHOICE_OBJECT = typed(
  new Map([
    ['function', named('function')],
    ['custom', named('custom')],
    ['allowed_tools', objectShape("a tool_choice of type 'allowed_tools'", { ...TYPE, mode: oneOf(['auto', 'required']), tools: arrayOf(object, MAX_TOOLS) })],
    ['mcp', objectShape("a tool_choice of type 'mcp'", { ...TYPE, server_label: nonEmptyString }, { name: nullable(string) })],
    ...['file_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'computer', 'computer_use_preview', 'computer_use', 'image_generation', 'code_interpreter', 'apply_patch', 'shell', 'programmatic_tool_calling'].map(bare),
  ]),
  'tool_choice',
);
const TOOL_CHOICE_MODE = oneOf(['none', 'auto', 'required']);

/** Checks tool_choice; one that names a function or custom tool must name one the request offers. */
export function checkToolChoice(value: unknown, at: Cursor, offered: OfferedNames): void {
  if (typeof value === 'string') {
    TOOL_CHOICE_MODE(value, at);
    return;
  }
  if (!isObject(value)) wrongType(at, "'none', 'auto', 'required' or an object", value);
  TOOL_CHOICE_OBJECT(value, at);
  const type = value['type'];
  if ((type === 'function' || type === 'custom') && !offered.functions.has(value['name'] as string)) {
    at.push('name');
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(value['name'] as string)}' is not the name of a tool in 'tools'. Name one of the request's function or custom tools.`);
  }
}
