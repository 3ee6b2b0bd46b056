// Invalid chat-completion request bodies, each with the exact error the client
// must get, shared by the validator tests and the observer tests (which check
// that early rejection gives the same error). `early` says whether the
// streaming observer can reject the body before it is complete.

export interface Rejection {
  name: string;
  /** JSON text of the body. */
  text: string;
  param: string | null;
  code: string;
  message: string;
  early: boolean;
}

export const MODEL = 'service-chat';
export const USER = { role: 'user', content: 'Hi' } as const;

/** A body with model and one user message, plus `extra` fields. */
export function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: MODEL, messages: [USER], ...extra };
}

/** A body whose only message is `message`. */
function withMessage(message: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: MODEL, messages: [message], ...extra };
}

function userParts(...parts: unknown[]): Record<string, unknown> {
  return withMessage({ role: 'user', content: parts });
}

function image(imageUrl: unknown): Record<string, unknown> {
  return userParts({ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: imageUrl });
}

const CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

function assistantCall(call: unknown): Record<string, unknown> {
  return withMessage({ role: 'assistant', content: null, tool_calls: [call] });
}

export const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

function tool(fn: Record<string, unknown>): Record<string, unknown> {
  return { type: 'function', function: fn };
}

function manyMessages(count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` }));
}

const SUPPORTED_ROLES = "'system', 'developer', 'user', 'assistant' and 'tool'";
const ASSISTANT_HINT = 'An assistant message needs content unless it has tool_calls or a refusal.';

interface Case {
  name: string;
  /** A value to serialise, or (a string) JSON text as is. */
  body: unknown;
  param: string | null;
  code: string;
  message: string;
  early: boolean;
}

function unknown(name: string, value: unknown, param: string, early: boolean): Case {
  return { name, body: value, param, code: 'unknown_parameter', message: `Unrecognized request argument supplied: ${param}`, early };
}

/** A field OpenAI defines that the default field policy (the contract's table alone) refuses, naming the setting. */
function notAccepted(name: string, value: unknown, field: string): Case {
  const message = `Unsupported parameter: '${field}' is not accepted by this gateway. The gateway's operator can accept it by adding "${field}" to "requestFields" in the gateway's config.`;
  return { name, body: value, param: field, code: 'unknown_parameter', message, early: true };
}

function wrongType(name: string, value: unknown, param: string, expected: string, got: string, early: boolean): Case {
  return { name, body: value, param, code: 'invalid_type', message: `Invalid type for '${param}': expected ${expected}, but got ${got} instead.`, early };
}

function missing(name: string, value: unknown, param: string, hint = ''): Case {
  return { name, body: value, param, code: 'missing_required_parameter', message: `Missing required parameter: '${param}'.${hint}`, early: false };
}

function badValue(name: string, value: unknown, param: string, detail: string): Case {
  return { name, body: value, param, code: 'invalid_value', message: `Invalid value for '${param}': ${detail}`, early: false };
}

const CASES: Case[] = [
  // The body itself.
  { name: 'root is an array', body: '[]', param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected an object, but got an array instead.', early: true },
  { name: 'root is a string', body: '"hi"', param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected an object, but got a string instead.', early: true },
  { name: 'root is null', body: 'null', param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected an object, but got null instead.', early: true },

  // Rule 7: unknown fields, at every level.
  unknown('rule 7: unknown top-level field', body({ foo: 1 }), 'foo', true),
  notAccepted('rule 7: OpenAI field outside the spec (user)', body({ user: 'u1' }), 'user'),
  notAccepted('rule 7: OpenAI field outside the spec (seed)', body({ seed: 7 }), 'seed'),
  notAccepted('rule 7: OpenAI field outside the spec, even null (seed)', body({ seed: null }), 'seed'),
  notAccepted('rule 7: OpenAI field outside the spec (parallel_tool_calls)', body({ parallel_tool_calls: false }), 'parallel_tool_calls'),
  notAccepted('rule 7: OpenAI field outside the spec, before a later fault (metadata)', body({ metadata: { a: 1 }, temperature: 9 }), 'metadata'),
  {
    name: 'rule 7: an OpenAI field the gateway never takes (audio)',
    body: body({ audio: { voice: 'alloy', format: 'mp3' } }),
    param: 'audio',
    code: 'unknown_parameter',
    message: "Unsupported parameter: 'audio' is not supported by this gateway: the gateway answers text only.",
    early: true,
  },
  unknown('rule 7: __proto__ key', '{"__proto__":{"x":1},"model":"service-chat","messages":[{"role":"user","content":"Hi"}]}', '__proto__', true),
  {
    name: 'rule 7: a long unknown key is echoed cut to 64 characters',
    body: body({ ['k'.repeat(5000)]: 1 }),
    param: `${'k'.repeat(64)}...`,
    code: 'unknown_parameter',
    message: `Unrecognized request argument supplied: ${'k'.repeat(64)}...`,
    early: true,
  },
  unknown('rule 7: constructor key', body({ constructor: {} }), 'constructor', true),
  unknown('rule 7: integer-like key (reported late)', body({ 1: true }), '1', false),
  unknown('unknown message field', withMessage({ role: 'user', content: 'Hi', foo: 1 }), 'messages[0].foo', true),
  unknown('tool_call_id on a user message', withMessage({ role: 'user', content: 'Hi', tool_call_id: 'c' }), 'messages[0].tool_call_id', false),
  unknown('parsed on a user message', withMessage({ role: 'user', content: 'Hi', parsed: null }), 'messages[0].parsed', false),
  unknown('tool_calls on a user message', withMessage({ role: 'user', content: 'Hi', tool_calls: [] }), 'messages[0].tool_calls', false),
  unknown('tool_call_id on an assistant message', withMessage({ role: 'assistant', content: 'x', tool_call_id: 'c' }), 'messages[0].tool_call_id', false),
  unknown('refusal on a system message', withMessage({ role: 'system', content: 'x', refusal: null }), 'messages[0].refusal', false),
  unknown('unknown content part field (cache_control)', userParts({ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }), 'messages[0].content[0].cache_control', true),
  unknown('image_url field on a text part', userParts({ type: 'text', text: 'a', image_url: { url: 'https://x.test/a.png' } }), 'messages[0].content[0].image_url', false),
  unknown('unknown image_url field', image({ url: 'https://x.test/a.png', size: 1 }), 'messages[0].content[1].image_url.size', true),
  unknown('unknown tool call field', assistantCall({ ...CALL, index: 0 }), 'messages[0].tool_calls[0].index', true),
  unknown('unknown tool call function field', assistantCall({ ...CALL, function: { ...CALL.function, strict: true } }), 'messages[0].tool_calls[0].function.strict', true),
  unknown('unknown tool field', body({ tools: [{ ...WEATHER_TOOL, name: 'x' }] }), 'tools[0].name', true),
  unknown('unknown function definition field', body({ tools: [tool({ name: 'f', returns: {} })] }), 'tools[0].function.returns', true),
  unknown('unknown tool_choice field', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'allowed_tools', allowed_tools: {} } }), 'tool_choice.allowed_tools', true),
  unknown('unknown tool_choice function field', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_weather', x: 1 } } }), 'tool_choice.function.x', true),
  unknown('json_schema beside type json_object', body({ response_format: { type: 'json_object', json_schema: {} } }), 'response_format.json_schema', false),
  unknown('unknown response_format field', body({ response_format: { type: 'text', strict: true } }), 'response_format.strict', true),
  unknown('unknown stream_options field', body({ stream: true, stream_options: { include_usage: true, include_obfuscation: false } }), 'stream_options.include_obfuscation', true),
  unknown('unknown key that begins with a digit in a message', withMessage({ role: 'user', content: 'Hi', '2x': 1 }), 'messages[0].2x', false),
  // Integer-like keys are reported late everywhere (see request-shape.ts).
  unknown('integer-like key in a content part', userParts({ type: 'text', text: 'a', 0: 1 }), 'messages[0].content[0].0', false),
  unknown('integer-like key in image_url', image({ url: 'https://x.test/a.png', 0: 1 }), 'messages[0].content[1].image_url.0', false),
  unknown('integer-like key in a tool call', assistantCall({ ...CALL, 0: 1 }), 'messages[0].tool_calls[0].0', false),
  unknown('integer-like key in a tool call function', assistantCall({ ...CALL, function: { ...CALL.function, 0: 1 } }), 'messages[0].tool_calls[0].function.0', false),
  unknown('integer-like key in a tool', body({ tools: [{ ...WEATHER_TOOL, 0: 1 }] }), 'tools[0].0', false),
  unknown('integer-like key in a function definition', body({ tools: [tool({ name: 'f', 0: 1 })] }), 'tools[0].function.0', false),
  unknown('integer-like key in tool_choice', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_weather' }, 0: 1 } }), 'tool_choice.0', false),
  unknown('integer-like key in tool_choice.function', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_weather', 0: 1 } } }), 'tool_choice.function.0', false),
  unknown('integer-like key in response_format', body({ response_format: { type: 'text', 0: 1 } }), 'response_format.0', false),
  unknown('integer-like key in stream_options', body({ stream: true, stream_options: { include_usage: true, 0: 1 } }), 'stream_options.0', false),

  // model.
  missing('model missing', { messages: [USER] }, 'model'),
  wrongType('model is a number', body({ model: 5 }), 'model', 'a string', 'a number', true),
  wrongType('model is null', body({ model: null }), 'model', 'a string', 'null', true),
  badValue('model is empty', body({ model: '' }), 'model', 'expected a non-empty string.'),
  badValue('model is too long', body({ model: 'm'.repeat(257) }), 'model', 'expected at most 256 characters.'),

  // messages: 1 to 256.
  missing('messages missing', { model: MODEL }, 'messages'),
  wrongType('messages is a string', body({ messages: 'Hi' }), 'messages', 'an array of messages', 'a string', true),
  wrongType('messages is null', body({ messages: null }), 'messages', 'an array of messages', 'null', true),
  { name: 'messages is empty', body: body({ messages: [] }), param: 'messages', code: 'array_below_min_length', message: "Invalid 'messages': empty array. Expected an array with at least 1 entry.", early: false },
  { name: 'messages has 257 entries', body: body({ messages: manyMessages(257) }), param: 'messages', code: 'array_above_max_length', message: "Invalid 'messages': array too long. Expected an array with at most 256 entries.", early: true },
  unknown('a fault in the first 256 messages comes before the overflow', body({ messages: [...manyMessages(3), { role: 'user', content: 'x', foo: 1 }, ...manyMessages(300)] }), 'messages[3].foo', true),
  wrongType('message is a number', body({ messages: [1] }), 'messages[0]', 'an object', 'a number', true),

  // role.
  missing('role missing', withMessage({ content: 'Hi' }), 'messages[0].role'),
  badValue('role function', withMessage({ role: 'function', content: 'x', name: 'f' }), 'messages[0].role', `'function'. Supported values are: ${SUPPORTED_ROLES}.`),
  wrongType('role is a number', withMessage({ role: 1, content: 'x' }), 'messages[0].role', 'a string', 'a number', true),

  // content.
  missing('user content missing', withMessage({ role: 'user' }), 'messages[0].content'),
  missing('system content missing', withMessage({ role: 'system' }), 'messages[0].content'),
  wrongType('user content null', withMessage({ role: 'user', content: null }), 'messages[0].content', 'a string or an array of content parts', 'null', false),
  wrongType('tool content null', withMessage({ role: 'tool', tool_call_id: 'c', content: null }), 'messages[0].content', 'a string or an array of content parts', 'null', false),
  wrongType('content is a number', withMessage({ role: 'user', content: 5 }), 'messages[0].content', 'a string or an array of content parts', 'a number', true),
  wrongType('content is an object', withMessage({ role: 'user', content: { type: 'text', text: 'a' } }), 'messages[0].content', 'a string or an array of content parts', 'an object', true),
  { name: 'content is an empty array', body: withMessage({ role: 'user', content: [] }), param: 'messages[0].content', code: 'array_below_min_length', message: "Invalid 'messages[0].content': empty array. Expected an array with at least 1 entry.", early: false },
  wrongType('content part is a string', userParts('Hi'), 'messages[0].content[0]', 'an object', 'a string', true),
  missing('content part type missing', userParts({ text: 'a' }), 'messages[0].content[0].type'),
  badValue('content part type input_audio', userParts({ type: 'input_audio', text: 'a' }), 'messages[0].content[0].type', "'input_audio'. Supported values are: 'text' and 'image_url'."),
  badValue('content part type in a tool message', withMessage({ role: 'tool', tool_call_id: 'c', content: [{ type: 'file' }] }), 'messages[0].content[0].type', "'file'. Supported values are: 'text'."),
  badValue('image part in a system message', withMessage({ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }), 'messages[0].content[0].type', "'image_url' content parts are not allowed in system messages."),
  badValue('image part in an assistant message', withMessage({ role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }), 'messages[0].content[0].type', "'image_url' content parts are not allowed in assistant messages."),
  badValue('refusal part in a user message', userParts({ type: 'refusal', refusal: 'no' }), 'messages[0].content[0].type', "'refusal' content parts are not allowed in user messages."),
  missing('text part without text', userParts({ type: 'text' }), 'messages[0].content[0].text'),
  wrongType('text part text is a number', userParts({ type: 'text', text: 5 }), 'messages[0].content[0].text', 'a string', 'a number', true),
  missing('image part without image_url', userParts({ type: 'image_url' }), 'messages[0].content[0].image_url'),
  wrongType('image_url is a string', image('https://x.test/a.png'), 'messages[0].content[1].image_url', 'an object', 'a string', true),
  missing('image_url without url', image({ detail: 'low' }), 'messages[0].content[1].image_url.url'),
  badValue('image detail ultra', image({ url: 'https://x.test/a.png', detail: 'ultra' }), 'messages[0].content[1].image_url.detail', "'ultra'. Supported values are: 'auto', 'low' and 'high'."),

  // Rule 5: images by https URL only.
  badValue('rule 5: data URL', image({ url: 'data:image/png;base64,iVBORw0KGgo=' }), 'messages[0].content[1].image_url.url', 'data: URLs are not accepted; pass the image as an https:// URL.'),
  badValue('rule 5: data URL in capitals after a space', image({ url: ' DATA:image/png;base64,iVBORw0KGgo=' }), 'messages[0].content[1].image_url.url', 'data: URLs are not accepted; pass the image as an https:// URL.'),
  badValue('rule 5: http URL', image({ url: 'http://x.test/a.png' }), 'messages[0].content[1].image_url.url', 'only https:// image URLs are accepted.'),
  badValue('rule 5: file URL', image({ url: 'file:///etc/passwd' }), 'messages[0].content[1].image_url.url', 'only https:// image URLs are accepted.'),
  badValue('rule 5: relative URL', image({ url: '/a.png' }), 'messages[0].content[1].image_url.url', 'expected an absolute https:// URL.'),

  // Rule 4: tool messages.
  missing('rule 4: tool message without tool_call_id', withMessage({ role: 'tool', content: '22 C' }), 'messages[0].tool_call_id'),
  badValue('tool_call_id empty', withMessage({ role: 'tool', tool_call_id: '', content: '22 C' }), 'messages[0].tool_call_id', 'expected a non-empty string.'),
  wrongType('tool_call_id is a number', withMessage({ role: 'tool', tool_call_id: 1, content: '22 C' }), 'messages[0].tool_call_id', 'a string', 'a number', true),

  // Assistant messages.
  missing('assistant without content or tool calls', withMessage({ role: 'assistant' }), 'messages[0].content', ` ${ASSISTANT_HINT}`),
  missing('assistant with null content and no tool calls', withMessage({ role: 'assistant', content: null, tool_calls: [], refusal: null }), 'messages[0].content', ` ${ASSISTANT_HINT}`),
  badValue('assistant function_call object', withMessage({ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }), 'messages[0].function_call', "the deprecated 'function_call' is not supported; use 'tool_calls'."),
  wrongType('assistant function_call number', withMessage({ role: 'assistant', content: 'x', function_call: 1 }), 'messages[0].function_call', 'null', 'a number', true),
  wrongType('assistant refusal number', withMessage({ role: 'assistant', content: 'x', refusal: 1 }), 'messages[0].refusal', 'a string', 'a number', true),
  wrongType('assistant annotations object', withMessage({ role: 'assistant', content: 'x', annotations: {} }), 'messages[0].annotations', 'an array', 'an object', true),
  wrongType('assistant reasoning_content number', withMessage({ role: 'assistant', content: 'x', reasoning_content: 1 }), 'messages[0].reasoning_content', 'a string', 'a number', true),
  wrongType('tool_calls is a string', withMessage({ role: 'assistant', content: null, tool_calls: 'x' }), 'messages[0].tool_calls', 'an array', 'a string', true),
  wrongType('tool call is a string', assistantCall('x'), 'messages[0].tool_calls[0]', 'an object', 'a string', true),
  missing('tool call without id', assistantCall({ type: 'function', function: CALL.function }), 'messages[0].tool_calls[0].id'),
  badValue('tool call id empty', assistantCall({ ...CALL, id: '' }), 'messages[0].tool_calls[0].id', 'expected a non-empty string.'),
  missing('tool call without type', assistantCall({ id: 'c', function: CALL.function }), 'messages[0].tool_calls[0].type'),
  badValue('tool call type custom', assistantCall({ ...CALL, type: 'custom' }), 'messages[0].tool_calls[0].type', "'custom'. Supported values are: 'function'."),
  missing('tool call without function', assistantCall({ id: 'c', type: 'function' }), 'messages[0].tool_calls[0].function'),
  missing('tool call function without name', assistantCall({ ...CALL, function: { arguments: '{}' } }), 'messages[0].tool_calls[0].function.name'),
  badValue('tool call function name empty', assistantCall({ ...CALL, function: { name: '', arguments: '{}' } }), 'messages[0].tool_calls[0].function.name', 'expected a non-empty string.'),
  missing('tool call function without arguments', assistantCall({ ...CALL, function: { name: 'f' } }), 'messages[0].tool_calls[0].function.arguments'),
  wrongType('tool call arguments as an object', assistantCall({ ...CALL, function: { name: 'f', arguments: { city: 'Paris' } } }), 'messages[0].tool_calls[0].function.arguments', 'a string', 'an object', true),

  // tools: at most 64, type function.
  wrongType('tools is an object', body({ tools: WEATHER_TOOL }), 'tools', 'an array of tools', 'an object', true),
  wrongType('tools is null', body({ tools: null }), 'tools', 'an array of tools', 'null', true),
  {
    name: 'tools has 65 entries',
    body: body({ tools: Array.from({ length: 65 }, (_, i) => tool({ name: `t${i}` })) }),
    param: 'tools',
    code: 'array_above_max_length',
    message: "Invalid 'tools': array too long. Expected an array with at most 64 entries.",
    early: true,
  },
  badValue('tool type custom', body({ tools: [{ type: 'custom', function: { name: 'f' } }] }), 'tools[0].type', "'custom'. Supported values are: 'function'."),
  missing('tool without type', body({ tools: [{ function: { name: 'f' } }] }), 'tools[0].type'),
  missing('tool without function', body({ tools: [{ type: 'function' }] }), 'tools[0].function'),
  missing('function without name', body({ tools: [tool({ description: 'd' })] }), 'tools[0].function.name'),
  badValue('function name with a space', body({ tools: [tool({ name: 'get weather' })] }), 'tools[0].function.name', "'get weather'. A function name must be 1 to 64 letters, digits, underscores or hyphens."),
  badValue('function name of 65 characters', body({ tools: [tool({ name: 'f'.repeat(65) })] }), 'tools[0].function.name', `'${'f'.repeat(64)}...'. A function name must be 1 to 64 letters, digits, underscores or hyphens.`),
  badValue('function name empty', body({ tools: [tool({ name: '' })] }), 'tools[0].function.name', "''. A function name must be 1 to 64 letters, digits, underscores or hyphens."),
  badValue('duplicate tool names', body({ tools: [tool({ name: 'f' }), tool({ name: 'g' }), tool({ name: 'f' })] }), 'tools[2].function.name', "the tool name 'f' is used by more than one tool; tool names must be unique."),
  wrongType('parameters is an array', body({ tools: [tool({ name: 'f', parameters: [] })] }), 'tools[0].function.parameters', 'an object', 'an array', true),
  wrongType('strict is a string', body({ tools: [tool({ name: 'f', strict: 'yes' })] }), 'tools[0].function.strict', 'a boolean', 'a string', true),
  wrongType('description is a number', body({ tools: [tool({ name: 'f', description: 1 })] }), 'tools[0].function.description', 'a string', 'a number', true),

  // tool_choice.
  badValue('tool_choice sometimes', body({ tools: [WEATHER_TOOL], tool_choice: 'sometimes' }), 'tool_choice', "'sometimes'. Supported values are: 'none', 'auto' and 'required'."),
  wrongType('tool_choice is a number', body({ tools: [WEATHER_TOOL], tool_choice: 1 }), 'tool_choice', 'a string or an object', 'a number', true),
  wrongType('tool_choice is null', body({ tools: [WEATHER_TOOL], tool_choice: null }), 'tool_choice', 'a string or an object', 'null', true),
  badValue('tool_choice auto without tools', body({ tool_choice: 'auto' }), 'tool_choice', "'tool_choice' is only allowed when 'tools' are specified."),
  badValue('tool_choice required with empty tools', body({ tools: [], tool_choice: 'required' }), 'tool_choice', "'tool_choice' is only allowed when 'tools' are specified."),
  badValue('named tool_choice without tools', body({ tool_choice: { type: 'function', function: { name: 'get_weather' } } }), 'tool_choice', "'tool_choice' is only allowed when 'tools' are specified."),
  badValue('named tool_choice naming an undefined tool', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_time' } } }), 'tool_choice.function.name', "no tool named 'get_time' is defined in 'tools'."),
  badValue('tool_choice type custom', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'custom', function: { name: 'get_weather' } } }), 'tool_choice.type', "'custom'. Supported values are: 'function'."),
  missing('tool_choice without type', body({ tools: [WEATHER_TOOL], tool_choice: { function: { name: 'get_weather' } } }), 'tool_choice.type'),
  missing('tool_choice without function', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'function' } }), 'tool_choice.function'),
  missing('tool_choice function without name', body({ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: {} } }), 'tool_choice.function.name'),

  // response_format.
  badValue(
    'response_format json_schema',
    body({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }),
    'response_format.type',
    `'json_schema' is not accepted by this gateway. The gateway's operator can accept it by adding "json_schema" to "requestFields" in the gateway's config.`,
  ),
  badValue('response_format xml', body({ response_format: { type: 'xml' } }), 'response_format.type', "'xml'. Supported values are: 'text' and 'json_object'."),
  missing('response_format without type', body({ response_format: {} }), 'response_format.type'),
  wrongType('response_format is a string', body({ response_format: 'json_object' }), 'response_format', 'an object', 'a string', true),

  // temperature 0..2, top_p 0..1.
  badValue('temperature above 2', body({ temperature: 2.5 }), 'temperature', '2.5. Expected a number from 0 to 2.'),
  badValue('temperature below 0', body({ temperature: -0.1 }), 'temperature', '-0.1. Expected a number from 0 to 2.'),
  wrongType('temperature is a string', body({ temperature: '0.5' }), 'temperature', 'a number', 'a string', true),
  wrongType('temperature is a boolean', body({ temperature: true }), 'temperature', 'a number', 'a boolean', true),
  badValue('top_p above 1', body({ top_p: 1.5 }), 'top_p', '1.5. Expected a number from 0 to 1.'),
  badValue('top_p below 0', body({ top_p: -1 }), 'top_p', '-1. Expected a number from 0 to 1.'),
  wrongType('top_p is a string', body({ top_p: '1' }), 'top_p', 'a number', 'a string', true),

  // max_tokens, max_completion_tokens; rule 3.
  badValue('max_tokens 0', body({ max_tokens: 0 }), 'max_tokens', '0. Expected an integer from 1 to 1000000.'),
  badValue('max_completion_tokens above the bound', body({ max_completion_tokens: 1_000_001 }), 'max_completion_tokens', '1000001. Expected an integer from 1 to 1000000.'),
  wrongType('max_tokens decimal', body({ max_tokens: 1.5 }), 'max_tokens', 'an integer', 'a decimal', false),
  wrongType('max_tokens is a string', body({ max_tokens: '100' }), 'max_tokens', 'an integer', 'a string', true),
  badValue('rule 3: max_tokens and max_completion_tokens', body({ max_tokens: 100, max_completion_tokens: 100 }), 'max_completion_tokens', "'max_tokens' and 'max_completion_tokens' are mutually exclusive; set only one of them."),

  // stop: string or up to 4 strings.
  { name: 'stop has 5 entries', body: body({ stop: ['a', 'b', 'c', 'd', 'e'] }), param: 'stop', code: 'array_above_max_length', message: "Invalid 'stop': array too long. Expected an array with at most 4 entries.", early: true },
  wrongType('stop entry is a number', body({ stop: ['a', 1] }), 'stop[1]', 'a string', 'a number', true),
  wrongType('stop is a number', body({ stop: 1 }), 'stop', 'a string or an array of strings', 'a number', true),

  // stream, stream_options; rule 6.
  wrongType('stream is a string', body({ stream: 'true' }), 'stream', 'a boolean', 'a string', true),
  badValue('rule 6: stream_options without stream', body({ stream_options: { include_usage: true } }), 'stream_options', "'stream_options' is only allowed when 'stream' is true."),
  badValue('rule 6: stream_options with stream false', body({ stream: false, stream_options: { include_usage: true } }), 'stream_options', "'stream_options' is only allowed when 'stream' is true."),
  badValue('rule 6: stream_options with stream null', body({ stream: null, stream_options: { include_usage: false } }), 'stream_options', "'stream_options' is only allowed when 'stream' is true."),
  wrongType('stream_options is a string', body({ stream: true, stream_options: 'usage' }), 'stream_options', 'an object', 'a string', true),
  wrongType('include_usage is a string', body({ stream: true, stream_options: { include_usage: 'yes' } }), 'stream_options.include_usage', 'a boolean', 'a string', true),
  wrongType('include_usage is null', body({ stream: true, stream_options: { include_usage: null } }), 'stream_options.include_usage', 'a boolean', 'null', true),

  // Rule 2: n = 1 only.
  badValue('rule 2: n 2', body({ n: 2 }), 'n', '2. Only n = 1 is supported.'),
  badValue('rule 2: n 0', body({ n: 0 }), 'n', '0. Only n = 1 is supported.'),
  wrongType('n decimal', body({ n: 1.5 }), 'n', 'an integer', 'a decimal', false),
  wrongType('n is a string', body({ n: '1' }), 'n', 'an integer', 'a string', true),

  // Which fault is reported when there are several.
  unknown('a certain early fault beats an earlier late one', { messages: [{ role: 'tool', content: 'x' }], model: MODEL, foo: 1 }, 'foo', true),
  wrongType('early faults in document order', { temperature: 'x', foo: 1, model: MODEL, messages: [USER] }, 'temperature', 'a number', 'a string', true),
  wrongType('an integer-like key before an early fault', '{"1":true,"temperature":"x","model":"service-chat","messages":[{"role":"user","content":"Hi"}]}', 'temperature', 'a number', 'a string', true),
  wrongType('an integer-like key after an early fault', '{"temperature":"x","1":true,"model":"service-chat","messages":[{"role":"user","content":"Hi"}]}', 'temperature', 'a number', 'a string', true),
  badValue('late faults in document order', body({ top_p: 2, temperature: 3 }), 'top_p', '2. Expected a number from 0 to 1.'),
  missing('a message role before its other faults', withMessage({ content: null, tool_call_id: '' }), 'messages[0].role'),
  badValue('per-field faults before the cross-field rules', body({ max_tokens: 1, max_completion_tokens: 1, n: 3 }), 'n', '3. Only n = 1 is supported.'),
  badValue('missing fields after the fields present', { model: MODEL, temperature: 9 }, 'temperature', '9. Expected a number from 0 to 2.'),
];

export const REJECTIONS: readonly Rejection[] = CASES.map((c) => ({
  name: c.name,
  text: typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
  param: c.param,
  code: c.code,
  message: c.message,
  early: c.early,
}));
