// `tools` and `tool_choice` of a Messages request. Custom tools (no `type`,
// or "custom") are checked in full; a server tool is recognised by its type,
// a known family with an optional version date (`web_search_20260318`,
// `bash_20250124`, `mcp_toolset`), so a newer version of a known tool passes
// to the upstream that decides whether it exists. Families and fields:
// BetaToolUnion of @anthropic-ai/sdk 1.14.
import { cacheControl } from './message-request-blocks.ts';
import {
  anyJson,
  arrayOf,
  boolean,
  checkFields,
  echo,
  fail,
  isObject,
  listQuoted,
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
} from './message-request-checks.ts';

/** Generous: Claude Code with MCP servers and tool search carries hundreds; the body's byte limit bounds the rest. */
export const MAX_TOOLS = 10_000;
/** Anthropic's custom tool names: letters, digits, underscores and hyphens, 1 to 128. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

const toolName: Check = (value, at) => {
  if (typeof value !== 'string') wrongType(at, 'a string', value);
  if (!TOOL_NAME.test(value)) fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(value)}'. A tool name must be 1 to 128 letters, digits, underscores or hyphens.`);
};

const inputSchema: Check = (value, at) => {
  if (!isObject(value)) wrongType(at, 'an object (a JSON schema)', value);
  if (value['type'] !== 'object') {
    at.push('type');
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: a tool's input_schema must have "type": "object".`);
  }
};

const allowedCallers = arrayOf(string, 16);

const CUSTOM_TOOL = objectShape(
  'a custom tool',
  { name: toolName, input_schema: inputSchema },
  {
    type: nullable(oneOf(['custom'])),
    description: string,
    cache_control: cacheControl,
    strict: boolean,
    defer_loading: boolean,
    input_examples: arrayOf(object, 64),
    eager_input_streaming: nullable(boolean),
    allowed_callers: allowedCallers,
  },
);

const SERVER_TOOL_FAMILIES = [
  'web_search',
  'web_fetch',
  'code_execution',
  'bash',
  'text_editor',
  'computer',
  'computer_toolset',
  'browser_toolset',
  'memory',
  'advisor',
  'tool_search_tool_regex',
  'tool_search_tool_bm25',
  'mcp_toolset',
];
const FAMILIES = new Set(SERVER_TOOL_FAMILIES);
/** `family` or `family_YYYYMMDD`. */
const VERSIONED = /^([a-z0-9_]+?)(?:_(\d{8}))?$/;

/** The fields any server tool takes; each tool's own rules are the upstream's. */
const SERVER_TOOL = objectShape(
  'a server tool',
  { type: string },
  {
    name: string,
    cache_control: cacheControl,
    defer_loading: boolean,
    strict: boolean,
    allowed_callers: allowedCallers,
    input_examples: arrayOf(object, 64),
    configs: anyJson,
    default_config: anyJson,
    tools: anyJson,
    mcp_server_name: string,
    display_height_px: anyJson,
    display_width_px: anyJson,
    display_number: anyJson,
    enable_zoom: anyJson,
    max_characters: anyJson,
    allowed_domains: anyJson,
    blocked_domains: anyJson,
    max_uses: anyJson,
    user_location: anyJson,
    citations: anyJson,
    max_content_tokens: anyJson,
    url_sources: anyJson,
    use_cache: anyJson,
    response_inclusion: anyJson,
    model: anyJson,
    caching: anyJson,
    max_tokens: anyJson,
  },
);

/** Whether `type` names a server tool the gateway knows the family of. */
export function isServerToolType(type: string): boolean {
  const match = VERSIONED.exec(type);
  return match !== null && FAMILIES.has(match[1] as string);
}

function checkTool(value: unknown, at: Cursor): void {
  if (!isObject(value)) wrongType(at, 'an object', value);
  const type = value['type'];
  if (type === undefined || type === null || type === 'custom') {
    checkFields(value, CUSTOM_TOOL, at);
    return;
  }
  at.push('type');
  if (typeof type !== 'string') wrongType(at, 'a string', type);
  if (!isServerToolType(type)) {
    fail(
      at,
      'invalid_value',
      `Invalid value for ${where(at)}: '${echo(type)}' is not a tool type the Messages API defines. Leave 'type' out (or set "custom") for a tool your client runs, or name a server tool: ${listQuoted(SERVER_TOOL_FAMILIES)}, with its version date (such as web_search_20260318).`,
    );
  }
  at.pop();
  checkFields(value, SERVER_TOOL, at);
}

/** Checks `tools` and returns the names they define (a tool_choice names one of them). */
export function checkTools(value: unknown, at: Cursor): Set<string> {
  if (!Array.isArray(value)) wrongType(at, 'an array of tools', value);
  if (value.length > MAX_TOOLS) fail(at, 'array_above_max_length', `Invalid ${where(at)}: array too long. Expected an array with at most ${MAX_TOOLS} entries.`);
  const names = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    at.push(i);
    const tool = value[i];
    checkTool(tool, at);
    const name = (tool as Record<string, unknown>)['name'];
    if (typeof name === 'string') {
      if (names.has(name)) {
        at.push('name');
        fail(at, 'invalid_value', `Invalid value for ${where(at)}: the tool name '${echo(name)}' is used by more than one tool; tool names must be unique.`);
      }
      names.add(name);
    }
    at.pop();
  }
  return names;
}

const PARALLEL = { disable_parallel_tool_use: boolean };
const TOOL_CHOICES: ReadonlyMap<string, ObjectShape> = new Map([
  ['auto', objectShape('an auto tool_choice', { type: string }, PARALLEL)],
  ['any', objectShape('an any tool_choice', { type: string }, PARALLEL)],
  ['tool', objectShape('a tool tool_choice', { type: string, name: string }, PARALLEL)],
  ['none', objectShape('a none tool_choice', { type: string })],
]);

/** `tool_choice`, and for type "tool" that `tools` defines the name. */
export function checkToolChoice(value: unknown, at: Cursor, toolNames: ReadonlySet<string>): void {
  if (!isObject(value)) wrongType(at, 'an object', value);
  at.push('type');
  const type = value['type'];
  if (type === undefined) fail(at, 'missing_required_parameter', `Missing required field ${where(at)}. Supported values are: 'auto', 'any', 'tool', 'none'.`);
  oneOf(['auto', 'any', 'tool', 'none'])(type, at);
  at.pop();
  checkFields(value, TOOL_CHOICES.get(type as string) as ObjectShape, at);
  const name = value['name'];
  if (type === 'tool' && typeof name === 'string' && !toolNames.has(name)) {
    at.push('name');
    fail(at, 'invalid_value', `Invalid value for ${where(at)}: no tool named '${echo(name)}' is defined in 'tools'.`);
  }
}
