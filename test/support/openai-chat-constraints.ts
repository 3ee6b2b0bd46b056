// What a fake OpenAI-compatible upstream holds a chat completions request to,
// from OpenAI's API reference (https://platform.openai.com/docs/api-reference/chat/create)
// and the errors the API answers, as quoted in public issues: "Unrecognized
// request argument supplied: X", "Invalid parameter: messages with role 'tool'
// must be a response to a preceeding message with 'tool_calls'." (OpenAI's
// spelling), "An assistant message with 'tool_calls' must be followed by tool
// messages responding to each 'tool_call_id'. The following tool_call_ids did
// not have response messages: ...", "The 'stream_options' parameter is only
// allowed when 'stream' is enabled.", tool names matching ^[a-zA-Z0-9_-]{1,64}$,
// function arguments a JSON string, temperature 0 to 2, top_p 0 to 1.

type Json = Record<string, unknown>;

class ChatViolation extends Error {}

function fail(message: string): never {
  throw new ChatViolation(message);
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const FIELDS = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n', 'stop', 'tools', 'tool_choice',
  'parallel_tool_calls', 'user', 'seed', 'response_format', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'metadata',
  'store', 'reasoning_effort', 'service_tier', 'modalities', 'prediction', 'safety_identifier', 'prompt_cache_key', 'verbosity',
]);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_TOOLS = 128;

function checkKeys(value: Json, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`Unrecognized request argument supplied: ${where}.${key}`);
}

function checkParts(content: unknown, where: string, types: readonly string[]): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content) || content.length === 0) fail(`Invalid '${where}.content': expected a string or a non-empty array of parts.`);
  for (const [k, part] of content.entries()) {
    if (!isObject(part) || !types.includes(part['type'] as string)) fail(`Invalid value: '${String(isObject(part) ? part['type'] : part)}'. Supported values are: ${types.map((t) => `'${t}'`).join(' and ')}. (${where}.content[${k}].type)`);
    if (part['type'] === 'text' && typeof part['text'] !== 'string') fail(`Missing required parameter: '${where}.content[${k}].text'.`);
    if (part['type'] === 'image_url' && !(isObject(part['image_url']) && typeof part['image_url']['url'] === 'string')) fail(`Missing required parameter: '${where}.content[${k}].image_url.url'.`);
  }
}

function checkToolCalls(calls: unknown, where: string): string[] {
  if (!Array.isArray(calls) || calls.length === 0) fail(`Invalid '${where}.tool_calls': empty array. Expected an array with minimum length 1.`);
  return calls.map((call, k) => {
    const at = `${where}.tool_calls[${k}]`;
    if (!isObject(call)) fail(`Invalid type for '${at}': expected an object.`);
    checkKeys(call, ['id', 'type', 'function'], at);
    if (typeof call['id'] !== 'string' || call['id'] === '') fail(`Missing required parameter: '${at}.id'.`);
    if (call['type'] !== 'function') fail(`Missing required parameter: '${at}.type'.`);
    const fn = call['function'];
    if (!isObject(fn) || typeof fn['name'] !== 'string') fail(`Missing required parameter: '${at}.function.name'.`);
    checkKeys(fn, ['name', 'arguments'], `${at}.function`);
    if (typeof fn['arguments'] !== 'string') fail(`Invalid type for '${at}.function.arguments': expected a string, but got ${typeof fn['arguments']} instead.`);
    return call['id'];
  });
}

function checkMessages(messages: unknown): void {
  if (!Array.isArray(messages) || messages.length === 0) fail("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.");
  /** tool_call_ids of the latest assistant message still waiting for their tool message. */
  let open: string[] = [];
  let answerable = new Set<string>();
  for (const [n, message] of messages.entries()) {
    const where = `messages[${n}]`;
    if (!isObject(message)) fail(`Invalid type for '${where}': expected an object.`);
    const role = message['role'];
    if (role !== 'tool' && open.length > 0) {
      fail(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`);
    }
    switch (role) {
      case 'system':
      case 'developer':
        checkKeys(message, ['role', 'content', 'name'], where);
        checkParts(message['content'], where, ['text']);
        answerable = new Set();
        break;
      case 'user':
        checkKeys(message, ['role', 'content', 'name'], where);
        checkParts(message['content'], where, ['text', 'image_url', 'input_audio', 'file']);
        answerable = new Set();
        break;
      case 'assistant': {
        checkKeys(message, ['role', 'content', 'name', 'tool_calls', 'refusal', 'audio'], where);
        const calls = message['tool_calls'];
        if (calls === undefined && (message['content'] === undefined || message['content'] === null)) fail(`Invalid value for '${where}.content': expected a string, got null.`);
        if (message['content'] !== undefined && message['content'] !== null) checkParts(message['content'], where, ['text', 'refusal']);
        open = calls === undefined ? [] : checkToolCalls(calls, where);
        answerable = new Set(open);
        break;
      }
      case 'tool': {
        checkKeys(message, ['role', 'content', 'tool_call_id'], where);
        const id = message['tool_call_id'];
        if (typeof id !== 'string' || !answerable.has(id)) fail("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.");
        checkParts(message['content'], where, ['text']);
        open = open.filter((waiting) => waiting !== id);
        answerable.delete(id);
        break;
      }
      default:
        fail(`Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'developer'. (${where}.role)`);
    }
  }
  if (open.length > 0) fail(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`);
}

function checkTools(tools: unknown, choice: unknown): void {
  const names = new Set<string>();
  if (tools !== undefined) {
    if (!Array.isArray(tools)) fail("Invalid type for 'tools': expected an array.");
    if (tools.length > MAX_TOOLS) fail(`Invalid 'tools': array too long. Expected an array with maximum length ${MAX_TOOLS}, but got an array with length ${tools.length} instead.`);
    for (const [k, tool] of tools.entries()) {
      const at = `tools[${k}]`;
      if (!isObject(tool) || tool['type'] !== 'function') fail(`Missing required parameter: '${at}.type'.`);
      checkKeys(tool, ['type', 'function'], at);
      const fn = tool['function'];
      if (!isObject(fn)) fail(`Missing required parameter: '${at}.function'.`);
      checkKeys(fn, ['name', 'description', 'parameters', 'strict'], `${at}.function`);
      if (typeof fn['name'] !== 'string' || !TOOL_NAME.test(fn['name'])) fail(`Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`);
      if (fn['parameters'] !== undefined && !isObject(fn['parameters'])) fail(`Invalid type for '${at}.function.parameters': expected an object.`);
      names.add(fn['name']);
    }
  }
  if (choice === undefined) return;
  if (typeof choice === 'string') {
    if (!['none', 'auto', 'required'].includes(choice)) fail(`Invalid value: '${choice}'. Supported values are: 'none', 'auto', and 'required'. (tool_choice)`);
    if (choice === 'required' && names.size === 0) fail("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.");
    return;
  }
  if (!isObject(choice) || choice['type'] !== 'function' || !isObject(choice['function']) || !names.has(choice['function']['name'] as string)) {
    fail("Invalid value for 'tool_choice': the named function is not in 'tools'.");
  }
}

function checkNumbers(body: Json): void {
  const range = (key: string, low: number, high: number): void => {
    const value = body[key];
    if (value === undefined || value === null) return;
    if (typeof value !== 'number' || value < low || value > high) fail(`Invalid '${key}': expected a number from ${low} to ${high}.`);
  };
  range('temperature', 0, 2);
  range('top_p', 0, 1);
  range('presence_penalty', -2, 2);
  range('frequency_penalty', -2, 2);
  for (const key of ['max_tokens', 'max_completion_tokens', 'n']) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) fail(`Invalid '${key}': integer below minimum value. Expected a value >= 1.`);
  }
}

/** The first constraint the request breaks, in OpenAI's words; undefined when it keeps them all. */
export function chatRequestViolation(body: unknown): string | undefined {
  try {
    if (!isObject(body)) fail('We could not parse the JSON body of your request.');
    for (const key of Object.keys(body)) if (!FIELDS.has(key)) fail(`Unrecognized request argument supplied: ${key}`);
    if (typeof body['model'] !== 'string' || body['model'] === '') fail("Missing required parameter: 'model'.");
    if (body['stream'] !== undefined && typeof body['stream'] !== 'boolean') fail("Invalid type for 'stream': expected a boolean.");
    if (body['stream_options'] !== undefined && body['stream_options'] !== null && body['stream'] !== true) fail("The 'stream_options' parameter is only allowed when 'stream' is enabled.");
    checkMessages(body['messages']);
    checkTools(body['tools'], body['tool_choice']);
    checkNumbers(body);
    return undefined;
  } catch (error) {
    if (error instanceof ChatViolation) return error.message;
    throw error;
  }
}
