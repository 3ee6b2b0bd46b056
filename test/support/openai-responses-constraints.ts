// What a fake OpenAI Responses upstream holds a POST /v1/responses request to:
// the request body of OpenAI's API reference
// (https://platform.openai.com/docs/api-reference/responses/create), as the
// `openai` SDK 7.57 types it (ResponseCreateParamsBase, ResponseInputItem,
// Tool in test/node_modules/openai/resources/responses/responses.d.ts), and
// the errors the API answers, as quoted in public issues: "Unknown parameter:
// 'x'.", "No tool output found for function call call_x." and "No tool call
// found for function call output with call_id call_x." (both param `input`),
// "Previous response with id 'resp_x' not found.". Two things real clients
// send that the published types lack are taken, because OpenAI's API takes
// them from Codex: `client_metadata`, and an `id` on input messages.
// Tool names match ^[a-zA-Z0-9_-]{1,64}$; temperature 0 to 2, top_p 0 to 1,
// max_output_tokens at least 16.

type Json = Record<string, unknown>;

class ResponsesViolation extends Error {}

function fail(message: string): never {
  throw new ResponsesViolation(message);
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const FIELDS = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'max_tool_calls', 'temperature', 'top_p', 'top_logprobs',
  'text', 'reasoning', 'include', 'store', 'stream', 'stream_options', 'previous_response_id', 'conversation', 'metadata', 'user', 'safety_identifier',
  'prompt', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier', 'truncation', 'background', 'context_management', 'client_metadata',
]);
const INCLUDABLE = new Set([
  'file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'message.input_image.image_url', 'computer_call_output.output.image_url',
  'code_interpreter_call.outputs', 'reasoning.encrypted_content', 'message.output_text.logprobs',
]);
/** Hosted tools: offered as they are, run by OpenAI. */
const HOSTED_TOOLS = new Set(['web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'image_generation', 'computer_use_preview', 'mcp', 'local_shell', 'shell', 'apply_patch', 'tool_search', 'custom']);
const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning', 'web_search_call', 'custom_tool_call', 'custom_tool_call_output', 'item_reference'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_TOOLS = 128;

function checkKeys(value: Json, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`Unknown parameter: '${where}.${key}'.`);
}

/** A string, or an array of parts of `types`, at `where` (`input[0].content`, `input[2].output`). */
function checkParts(content: unknown, where: string, types: readonly string[]): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) fail(`Invalid type for '${where}': expected a string or an array of content parts.`);
  for (const [k, part] of content.entries()) {
    const at = `${where}[${k}]`;
    if (!isObject(part) || !types.includes(part['type'] as string)) fail(`Invalid value: '${String(isObject(part) ? part['type'] : part)}'. Supported values are: ${types.map((t) => `'${t}'`).join(', ')}. (${at}.type)`);
    if ((part['type'] === 'input_text' || part['type'] === 'output_text') && typeof part['text'] !== 'string') fail(`Missing required parameter: '${at}.text'.`);
    if (part['type'] === 'input_image' && typeof part['image_url'] !== 'string' && typeof part['file_id'] !== 'string') fail(`Missing required parameter: '${at}.image_url'.`);
  }
}

/** Checks `input`: every function call answered by an output after it, every output answering a call before it. */
function checkInput(input: unknown, issuedReasoning: ((id: string, encrypted: string) => boolean) | undefined): void {
  if (typeof input === 'string') return;
  if (!Array.isArray(input)) fail("Invalid type for 'input': expected a string or an array of input items.");
  const calls: string[] = [];
  const answered = new Set<string>();
  for (const [n, item] of input.entries()) {
    const where = `input[${n}]`;
    if (!isObject(item)) fail(`Invalid type for '${where}': expected an object.`);
    const type = item['type'] ?? (item['role'] !== undefined ? 'message' : undefined);
    if (typeof type !== 'string' || !ITEM_TYPES.includes(type)) fail(`Invalid value: '${String(type)}'. Supported values are: ${ITEM_TYPES.map((t) => `'${t}'`).join(', ')}. (${where}.type)`);
    switch (type) {
      case 'message': {
        checkKeys(item, ['type', 'role', 'content', 'id', 'status', 'phase'], where);
        const role = item['role'];
        if (!['user', 'assistant', 'system', 'developer'].includes(role as string)) fail(`Invalid value: '${String(role)}'. Supported values are: 'user', 'assistant', 'system', and 'developer'. (${where}.role)`);
        checkParts(item['content'], `${where}.content`, role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file']);
        break;
      }
      case 'function_call': {
        checkKeys(item, ['type', 'id', 'call_id', 'name', 'arguments', 'status', 'namespace'], where);
        if (typeof item['call_id'] !== 'string' || item['call_id'] === '') fail(`Missing required parameter: '${where}.call_id'.`);
        if (typeof item['name'] !== 'string' || item['name'] === '') fail(`Missing required parameter: '${where}.name'.`);
        if (typeof item['arguments'] !== 'string') fail(`Invalid type for '${where}.arguments': expected a string.`);
        calls.push(item['call_id']);
        break;
      }
      case 'function_call_output': {
        checkKeys(item, ['type', 'id', 'call_id', 'output', 'status'], where);
        const id = item['call_id'];
        if (typeof id !== 'string' || !calls.includes(id)) fail(`No tool call found for function call output with call_id ${String(id)}.`);
        checkParts(item['output'], `${where}.output`, ['input_text', 'input_image', 'input_file']);
        answered.add(id);
        break;
      }
      case 'reasoning': {
        checkKeys(item, ['type', 'id', 'summary', 'content', 'encrypted_content', 'status'], where);
        if (!Array.isArray(item['summary'])) fail(`Missing required parameter: '${where}.summary'.`);
        const encrypted = item['encrypted_content'];
        if (typeof encrypted === 'string' && issuedReasoning !== undefined && !issuedReasoning(String(item['id']), encrypted)) fail(`The encrypted content for item ${String(item['id'])} could not be verified.`);
        break;
      }
      default:
        break;
    }
  }
  for (const id of calls) if (!answered.has(id)) fail(`No tool output found for function call ${id}.`);
}

function checkFunctionTool(tool: Json, at: string, names: Set<string>): void {
  checkKeys(tool, ['type', 'name', 'description', 'parameters', 'strict', 'defer_loading'], at);
  if (typeof tool['name'] !== 'string' || !TOOL_NAME.test(tool['name'])) fail(`Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`);
  if (tool['parameters'] !== undefined && tool['parameters'] !== null && !isObject(tool['parameters'])) fail(`Invalid type for '${at}.parameters': expected an object.`);
  if (tool['strict'] !== undefined && tool['strict'] !== null && typeof tool['strict'] !== 'boolean') fail(`Invalid type for '${at}.strict': expected a boolean.`);
  names.add(tool['name']);
}

function checkTools(tools: unknown, choice: unknown): void {
  const names = new Set<string>();
  if (tools !== undefined) {
    if (!Array.isArray(tools)) fail("Invalid type for 'tools': expected an array.");
    if (tools.length > MAX_TOOLS) fail(`Invalid 'tools': array too long. Expected an array with maximum length ${MAX_TOOLS}, but got an array with length ${tools.length} instead.`);
    for (const [k, tool] of tools.entries()) {
      const at = `tools[${k}]`;
      if (!isObject(tool) || typeof tool['type'] !== 'string') fail(`Missing required parameter: '${at}.type'.`);
      if (tool['type'] === 'function') checkFunctionTool(tool, at, names);
      else if (tool['type'] === 'namespace') {
        checkKeys(tool, ['type', 'name', 'description', 'tools'], at);
        if (typeof tool['name'] !== 'string' || !TOOL_NAME.test(tool['name'])) fail(`Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`);
        if (!Array.isArray(tool['tools']) || tool['tools'].length === 0) fail(`Missing required parameter: '${at}.tools'.`);
        for (const [j, inner] of tool['tools'].entries()) {
          if (!isObject(inner) || (inner['type'] !== 'function' && inner['type'] !== 'custom')) fail(`Invalid value: '${String(isObject(inner) ? inner['type'] : inner)}'. Supported values are: 'function' and 'custom'. (${at}.tools[${j}].type)`);
          if (inner['type'] === 'function') checkFunctionTool(inner, `${at}.tools[${j}]`, new Set());
        }
      } else if (!HOSTED_TOOLS.has(tool['type'])) fail(`Invalid value: '${tool['type']}'. Supported values are: 'function', 'namespace', ${[...HOSTED_TOOLS].map((t) => `'${t}'`).join(', ')}. (${at}.type)`);
    }
  }
  if (choice === undefined || choice === null) return;
  if (typeof choice === 'string') {
    if (!['none', 'auto', 'required'].includes(choice)) fail(`Invalid value: '${choice}'. Supported values are: 'none', 'auto', and 'required'. (tool_choice)`);
    if (choice === 'required' && names.size === 0) fail("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.");
    return;
  }
  if (isObject(choice) && choice['type'] === 'function' && !names.has(choice['name'] as string)) fail(`Tool choice '${String(choice['name'])}' not found in 'tools' parameter.`);
}

function checkScalars(body: Json): void {
  const range = (key: string, low: number, high: number): void => {
    const value = body[key];
    if (value === undefined || value === null) return;
    if (typeof value !== 'number' || value < low || value > high) fail(`Invalid '${key}': expected a number from ${low} to ${high}.`);
  };
  range('temperature', 0, 2);
  range('top_p', 0, 1);
  const max = body['max_output_tokens'];
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 16)) fail("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.");
  for (const key of ['stream', 'store', 'parallel_tool_calls', 'background']) {
    const value = body[key];
    if (value !== undefined && value !== null && typeof value !== 'boolean') fail(`Invalid type for '${key}': expected a boolean.`);
  }
  for (const key of ['instructions', 'user', 'prompt_cache_key', 'safety_identifier']) {
    const value = body[key];
    if (value !== undefined && value !== null && typeof value !== 'string') fail(`Invalid type for '${key}': expected a string.`);
  }
  if (body['stream_options'] !== undefined && body['stream_options'] !== null && body['stream'] !== true) fail("The 'stream_options' parameter is only allowed when 'stream' is enabled.");
  const include = body['include'];
  if (include !== undefined && include !== null) {
    if (!Array.isArray(include)) fail("Invalid type for 'include': expected an array.");
    for (const [k, value] of include.entries()) if (!INCLUDABLE.has(value as string)) fail(`Invalid value: '${String(value)}'. Supported values are: ${[...INCLUDABLE].map((v) => `'${v}'`).join(', ')}. (include[${k}])`);
  }
  const reasoning = body['reasoning'];
  if (reasoning !== undefined && reasoning !== null) {
    if (!isObject(reasoning)) fail("Invalid type for 'reasoning': expected an object.");
    checkKeys(reasoning, ['effort', 'summary', 'generate_summary'], 'reasoning');
    const summary = reasoning['summary'];
    if (summary !== undefined && summary !== null && !['auto', 'concise', 'detailed'].includes(summary as string)) fail(`Invalid value: '${String(summary)}'. Supported values are: 'auto', 'concise', and 'detailed'. (reasoning.summary)`);
  }
  const metadata = body['metadata'];
  if (metadata !== undefined && metadata !== null) {
    if (!isObject(metadata) || Object.keys(metadata).length > 16 || Object.values(metadata).some((v) => typeof v !== 'string' || v.length > 512)) fail("Invalid 'metadata': expected at most 16 string values of at most 512 characters.");
  }
}

export interface ResponsesChecks {
  /** Whether an encrypted reasoning item that came back is one this upstream issued, unaltered; default: any is taken. */
  reasoningValid?: (id: string, encrypted: string) => boolean;
}

/** The first constraint the request breaks, in OpenAI's words; undefined when it keeps them all. */
export function responsesRequestViolation(body: unknown, checks: ResponsesChecks = {}): string | undefined {
  try {
    if (!isObject(body)) fail('We could not parse the JSON body of your request.');
    for (const key of Object.keys(body)) if (!FIELDS.has(key)) fail(`Unknown parameter: '${key}'.`);
    if (typeof body['model'] !== 'string' || body['model'] === '') fail("Missing required parameter: 'model'.");
    if (body['input'] === undefined && body['previous_response_id'] === undefined && body['prompt'] === undefined) fail("Missing required parameter: 'input'.");
    if (typeof body['previous_response_id'] === 'string') fail(`Previous response with id '${body['previous_response_id']}' not found.`);
    checkInput(body['input'], checks.reasoningValid);
    checkTools(body['tools'], body['tool_choice']);
    checkScalars(body);
    return undefined;
  } catch (error) {
    if (error instanceof ResponsesViolation) return error.message;
    throw error;
  }
}
