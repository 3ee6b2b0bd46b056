import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { DOCUMENTED_TOP_LEVEL_FIELDS, passthroughFields, validateResponsesRequest, type ResponsesValidationOptions } from '../../src/responses/response-request-validator.ts';
import { capturedRequest, capturedRequestNames } from './captured-requests.ts';

const NO_EXTRAS: ResponsesValidationOptions = { extraFields: new Set() };

function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'service-chat', input: 'Hi', ...extra };
}

function withInput(...input: unknown[]): Record<string, unknown> {
  return body({ input });
}

const WEATHER = { type: 'function', name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true };

interface Expected {
  param: string | null;
  code: string;
  message: string;
}

function refused(value: unknown, expected: Expected, options: ResponsesValidationOptions = NO_EXTRAS): void {
  assert.throws(
    () => validateResponsesRequest(value, options),
    (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError, String(error));
      assert.deepEqual(
        { status: error.status, type: error.type, code: error.code, param: error.param, message: error.message },
        { status: 400, type: 'invalid_request_error', ...expected },
      );
      return true;
    },
  );
}

const PASSTHROUGH_HINT = "add it to `responsesPassthrough` of an \"openai\" provider with `\"responses\": \"passthrough\"` in the gateway's config";
const STORE_OFF_TAIL = "and the gateway's response store is off, so the gateway holds no earlier turns. Send the whole conversation in 'input' instead (with 'store': false, as Codex does), or ask the gateway's operator to turn the response store on.";

describe('validateResponsesRequest: real clients', () => {
  test('every captured POST is here: Codex CLI, the openai SDK and the Agents SDK', () => {
    assert.deepEqual(capturedRequestNames(), [
      'agents-stream-tool-call.json',
      'agents-stream-tool-output.json',
      'agents-tool-call.json',
      'agents-tool-output.json',
      'codex-exec-plain.json',
      'codex-exec-tool-call.json',
      'codex-exec-tool-output.json',
      'sdk-create.json',
      'sdk-function-call-output.json',
      'sdk-function-call.json',
      'sdk-stream.json',
    ]);
  });

  for (const name of capturedRequestNames()) {
    test(`${name} passes as it was sent, and comes back as the same object`, () => {
      const captured = capturedRequest(name);
      assert.equal(validateResponsesRequest(captured.body, NO_EXTRAS), captured.body);
      assert.deepEqual(passthroughFields(captured.body), []);
    });
  }

  test("Codex's body carries what the issue names: a developer message, ids on items, a namespace tool, web_search, client_metadata", () => {
    const { body: codex, headers } = capturedRequest('codex-exec-tool-output.json');
    assert.equal(headers['originator'], 'codex_exec');
    const input = codex['input'] as Array<Record<string, unknown>>;
    assert.deepEqual(
      input.map((item) => [item['type'], item['role'] ?? null, typeof item['id']]),
      [
        ['message', 'developer', 'string'],
        ['message', 'developer', 'string'],
        ['message', 'user', 'string'],
        ['message', 'user', 'string'],
        ['function_call', null, 'string'],
        ['function_call_output', null, 'string'],
      ],
    );
    const tools = codex['tools'] as Array<Record<string, unknown>>;
    assert.deepEqual(
      tools.map((tool) => `${tool['type'] as string}:${(tool['name'] as string | undefined) ?? ''}`),
      ['function:exec_command', 'function:write_stdin', 'function:request_user_input', 'function:view_image', 'namespace:multi_agent_v1', 'function:get_goal', 'function:create_goal', 'function:update_goal', 'web_search:'],
    );
    assert.deepEqual(
      { store: codex['store'], include: codex['include'], reasoning: codex['reasoning'], parallel: codex['parallel_tool_calls'], stream: codex['stream'] },
      { store: false, include: ['reasoning.encrypted_content'], reasoning: { summary: 'auto' }, parallel: true, stream: true },
    );
    assert.equal(typeof codex['prompt_cache_key'], 'string');
    assert.equal(typeof (codex['client_metadata'] as Record<string, unknown>)['x-codex-turn-metadata'], 'string');
  });

  test("the Agents SDK sends instructions, an empty include and strict tools with a $schema", () => {
    const { body: agents } = capturedRequest('agents-tool-output.json');
    assert.deepEqual(agents['include'], []);
    assert.equal(agents['instructions'], 'Answer with the weather tool.');
    assert.equal(((agents['tools'] as Array<Record<string, unknown>>)[0] as Record<string, unknown>)['strict'], true);
  });
});

describe('validateResponsesRequest: the top level', () => {
  test('a body that is not an object', () => {
    refused([], { param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected a JSON object, but got an array instead.' });
  });

  test('model is required; input is not (OpenAI takes a request without one)', () => {
    refused({ input: 'Hi' }, { param: 'model', code: 'missing_required_parameter', message: "Missing required field 'model'." });
    assert.deepEqual(validateResponsesRequest({ model: 'm' }, NO_EXTRAS), { model: 'm' });
  });

  test('an unknown field is a 400 naming it, unless the operator lets it through; passthroughFields lists it', () => {
    refused(body({ frobnicate: 1 }), {
      param: 'frobnicate',
      code: 'unknown_parameter',
      message: `Unknown field 'frobnicate': the Responses API defines no such field. Remove it, or, for the gateway's operator to pass it to an upstream speaking Responses unchecked, ${PASSTHROUGH_HINT}.`,
    });
    const allowed = body({ frobnicate: { any: ['thing'] } });
    assert.equal(validateResponsesRequest(allowed, { extraFields: new Set(['frobnicate']) }), allowed);
    assert.deepEqual(passthroughFields(allowed), ['frobnicate']);
  });

  test('a field holding undefined is absent', () => {
    assert.ok(validateResponsesRequest(body({ temperature: undefined, frobnicate: undefined }), NO_EXTRAS));
  });

  test('previous_response_id and conversation: a 400 saying the store is off; null says nothing', () => {
    refused(body({ previous_response_id: 'resp_123' }), { param: 'previous_response_id', code: 'invalid_value', message: `Invalid value for 'previous_response_id': previous_response_id names a response stored earlier, ${STORE_OFF_TAIL}` });
    refused(body({ conversation: { id: 'conv_1' } }), { param: 'conversation', code: 'invalid_value', message: `Invalid value for 'conversation': conversation names a conversation stored at OpenAI, ${STORE_OFF_TAIL}` });
    refused(body({ previous_response_id: 5 }), { param: 'previous_response_id', code: 'invalid_type', message: "Invalid type for 'previous_response_id': expected a string, but got an integer instead." });
    assert.ok(validateResponsesRequest(body({ previous_response_id: null, conversation: null }), NO_EXTRAS));
  });

  test('background true: a 400 (a background response is polled from a store); false passes', () => {
    refused(body({ background: true }), {
      param: 'background',
      code: 'invalid_value',
      message: "Invalid value for 'background': true. A background response is polled from a response store, and the gateway's response store is off. Leave 'background' out and wait for the answer, or stream it.",
    });
    assert.ok(validateResponsesRequest(body({ background: false }), NO_EXTRAS));
  });

  test("service_tier beyond 'auto' and 'default', and access_programs, need the operator's consent", () => {
    assert.ok(validateResponsesRequest(body({ service_tier: 'auto' }), NO_EXTRAS));
    assert.ok(validateResponsesRequest(body({ service_tier: 'default' }), NO_EXTRAS));
    refused(body({ service_tier: 'priority' }), {
      param: 'service_tier',
      code: 'unknown_parameter',
      message: `Field 'service_tier': service_tier 'priority' changes what the request costs or may do at OpenAI, so the gateway passes it only where its operator allows it. Remove it, or, for the gateway's operator to allow it, ${PASSTHROUGH_HINT}.`,
    });
    assert.ok(validateResponsesRequest(body({ service_tier: 'priority' }), { extraFields: new Set(['service_tier']) }));
    // One provider's consent opens it for that provider only: the field is listed for each provider's own check.
    assert.deepEqual(passthroughFields(body({ service_tier: 'priority', access_programs: { cyber: 'standard' } })), ['service_tier', 'access_programs']);
    assert.deepEqual(passthroughFields(body({ service_tier: 'auto' })), []);
    refused(body({ service_tier: 'turbo' }), { param: 'service_tier', code: 'invalid_value', message: "Invalid value for 'service_tier': 'turbo'. Supported values are: 'auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast'." }, { extraFields: new Set(['service_tier']) });
    refused(body({ access_programs: { cyber: 'standard' } }), {
      param: 'access_programs',
      code: 'unknown_parameter',
      message: `Field 'access_programs': access_programs changes what the request costs or may do at OpenAI, so the gateway passes it only where its operator allows it. Remove it, or, for the gateway's operator to allow it, ${PASSTHROUGH_HINT}.`,
    });
  });

  test('numbers are bounded as OpenAI bounds them', () => {
    refused(body({ temperature: 2.5 }), { param: 'temperature', code: 'invalid_value', message: "Invalid value for 'temperature': 2.5. Expected a number from 0 to 2." });
    refused(body({ top_p: -0.1 }), { param: 'top_p', code: 'invalid_value', message: "Invalid value for 'top_p': -0.1. Expected a number from 0 to 1." });
    refused(body({ max_output_tokens: 8 }), { param: 'max_output_tokens', code: 'invalid_value', message: "Invalid value for 'max_output_tokens': 8. Expected an integer from 16 to 1000000." });
    refused(body({ max_output_tokens: 100.5 }), { param: 'max_output_tokens', code: 'invalid_type', message: "Invalid type for 'max_output_tokens': expected an integer, but got a number instead." });
    refused(body({ top_logprobs: 21 }), { param: 'top_logprobs', code: 'invalid_value', message: "Invalid value for 'top_logprobs': 21. Expected an integer from 0 to 20." });
    assert.ok(validateResponsesRequest(body({ temperature: null, top_p: null, max_output_tokens: null }), NO_EXTRAS));
  });

  test('strings and maps are bounded', () => {
    refused(body({ model: 'm'.repeat(257) }), { param: 'model', code: 'invalid_value', message: "Invalid value for 'model': expected at most 256 characters." });
    refused(body({ safety_identifier: 's'.repeat(129) }), { param: 'safety_identifier', code: 'invalid_value', message: "Invalid value for 'safety_identifier': expected at most 128 characters." });
    refused(body({ prompt_cache_key: 'k'.repeat(257) }), { param: 'prompt_cache_key', code: 'invalid_value', message: "Invalid value for 'prompt_cache_key': expected at most 256 characters." });
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    refused(body({ metadata: seventeen }), { param: 'metadata', code: 'invalid_value', message: "Invalid value for 'metadata': metadata holds at most 16 pairs; got 17." });
    refused(body({ metadata: { tier: 3 } }), { param: 'metadata.tier', code: 'invalid_type', message: "Invalid type for 'metadata.tier': expected a string, but got an integer instead." });
    refused(body({ metadata: { note: 'x'.repeat(513) } }), { param: 'metadata.note', code: 'invalid_value', message: "Invalid value for 'metadata.note': expected at most 512 characters." });
    refused(body({ client_metadata: { k: 'x'.repeat(8193) } }), { param: 'client_metadata.k', code: 'invalid_value', message: "Invalid value for 'client_metadata.k': expected at most 8192 characters." });
  });

  test('include, reasoning and text name what they accept', () => {
    refused(body({ include: ['reasoning.everything'] }), {
      param: 'include[0]',
      code: 'invalid_value',
      message:
        "Invalid value for 'include[0]': 'reasoning.everything'. Supported values are: 'file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs', 'reasoning.encrypted_content', 'message.output_text.logprobs'.",
    });
    refused(body({ reasoning: { effort: 'extreme' } }), { param: 'reasoning.effort', code: 'invalid_value', message: "Invalid value for 'reasoning.effort': 'extreme'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'." });
    refused(body({ reasoning: { budget: 5 } }), { param: 'reasoning.budget', code: 'unknown_parameter', message: "Unknown field 'reasoning.budget': 'reasoning' takes only 'effort', 'summary', 'generate_summary', 'context', 'mode'. Remove it." });
    refused(body({ text: { format: { type: 'json_schema', name: 'my answer', schema: {} } } }), {
      param: 'text.format.name',
      code: 'invalid_value',
      message: "Invalid value for 'text.format.name': 'my answer'. A format name must be 1 to 64 letters, digits, underscores or hyphens.",
    });
    refused(body({ text: { format: { type: 'json_schema', name: 'answer' } } }), { param: 'text.format.schema', code: 'missing_required_parameter', message: "Missing required field 'text.format.schema'." });
    refused(body({ text: { format: { type: 'yaml' } } }), { param: 'text.format.type', code: 'invalid_value', message: "Invalid value for 'text.format.type': 'yaml' is not accepted in 'text.format'. Accepted: 'text', 'json_object', 'json_schema'." });
  });

  test('DOCUMENTED_TOP_LEVEL_FIELDS holds every field the validator knows, once', () => {
    assert.equal(new Set(DOCUMENTED_TOP_LEVEL_FIELDS).size, DOCUMENTED_TOP_LEVEL_FIELDS.length);
    assert.deepEqual(
      [...DOCUMENTED_TOP_LEVEL_FIELDS].sort(),
      [
        'access_programs', 'background', 'client_metadata', 'context_management', 'conversation', 'image', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'metadata', 'model',
        'moderation', 'parallel_tool_calls', 'previous_response_id', 'prompt', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'reasoning', 'safety_identifier', 'service_tier',
        'store', 'stream', 'stream_options', 'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user',
      ],
    );
  });
});

describe('validateResponsesRequest: input items', () => {
  test('the path of a fault deep in an item: input[3].content[0].image_url', () => {
    const ok = { role: 'user', content: 'Hi' };
    refused(withInput(ok, ok, ok, { role: 'user', content: [{ type: 'input_image', image_url: 5 }] }), {
      param: 'input[3].content[0].image_url',
      code: 'invalid_type',
      message: "Invalid type for 'input[3].content[0].image_url': expected a string, but got an integer instead.",
    });
  });

  test('an input_image needs image_url or file_id; an input_file needs data, an id or a URL', () => {
    refused(withInput({ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }), {
      param: 'input[0].content[0]',
      code: 'missing_required_parameter',
      message: "Missing an image in 'input[0].content[0]': an input_image needs 'image_url' (a URL or a data: URL) or 'file_id'.",
    });
    refused(withInput({ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }), {
      param: 'input[0].content[0]',
      code: 'missing_required_parameter',
      message: "Missing a file in 'input[0].content[0]': an input_file needs 'file_data', 'file_id' or 'file_url'.",
    });
  });

  test('a message: its role, its fields, and parts by role', () => {
    refused(withInput({ role: 'tool', content: 'x' }), { param: 'input[0].role', code: 'invalid_value', message: "Invalid value for 'input[0].role': 'tool'. Supported values are: 'user', 'assistant', 'system', 'developer'." });
    refused(withInput({ role: 'user', content: 'x', name: 'bob' }), {
      param: 'input[0].name',
      code: 'unknown_parameter',
      message: "Unknown field 'input[0].name': a message item takes only 'type', 'role', 'content', 'id', 'status', 'phase'. Remove it.",
    });
    refused(withInput({ role: 'user', content: [{ type: 'output_text', text: 'x' }] }), {
      param: 'input[0].content[0].type',
      code: 'invalid_value',
      message: "Invalid value for 'input[0].content[0].type': 'output_text' is not accepted in input message content. Accepted: 'input_text', 'input_image', 'input_file'.",
    });
    refused(withInput({ role: 'user' }), { param: 'input[0].content', code: 'missing_required_parameter', message: "Missing required field 'input[0].content'." });
    assert.ok(validateResponsesRequest(withInput({ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [] }, { type: 'refusal', refusal: 'No.' }] }), NO_EXTRAS));
  });

  test('function_call and function_call_output', () => {
    refused(withInput({ type: 'function_call', name: 'weather', arguments: '{}' }), { param: 'input[0].call_id', code: 'missing_required_parameter', message: "Missing required field 'input[0].call_id'." });
    refused(withInput({ type: 'function_call', call_id: 'c'.repeat(257), name: 'weather', arguments: '{}' }), { param: 'input[0].call_id', code: 'invalid_value', message: "Invalid value for 'input[0].call_id': expected at most 256 characters." });
    refused(withInput({ type: 'function_call', call_id: 'c1', name: 'get weather', arguments: '{}' }), {
      param: 'input[0].name',
      code: 'invalid_value',
      message: "Invalid value for 'input[0].name': 'get weather'. A function name must be 1 to 64 letters, digits, underscores or hyphens.",
    });
    refused(withInput({ type: 'function_call_output', call_id: 'c1', output: 7 }), { param: 'input[0].output', code: 'invalid_type', message: "Invalid type for 'input[0].output': expected a string or an array of input parts, but got an integer instead." });
    assert.ok(validateResponsesRequest(withInput({ type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'ok' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] }), NO_EXTRAS));
  });

  test('a reasoning item with encrypted_content is valid (an upstream speaking Responses reads it back)', () => {
    assert.ok(validateResponsesRequest(withInput({ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thought.' }], encrypted_content: 'gAAAA' }), NO_EXTRAS));
    refused(withInput({ type: 'reasoning', id: 'rs_1' }), { param: 'input[0].summary', code: 'missing_required_parameter', message: "Missing required field 'input[0].summary'." });
  });

  test('a reasoning item as Codex replays it: no id, content of reasoning_text and text parts, encrypted_content null', () => {
    assert.ok(validateResponsesRequest(withInput({ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'a' }, { type: 'text', text: 'b' }], encrypted_content: null }), NO_EXTRAS));
    assert.ok(validateResponsesRequest(withInput({ type: 'reasoning', summary: [], content: null }), NO_EXTRAS));
  });

  test("hosted items: known fields pass, unknown ones are named; an unknown type lists what is accepted", () => {
    assert.ok(validateResponsesRequest(withInput({ type: 'web_search_call', id: 'ws_1', action: { type: 'search', query: 'x' }, status: 'completed' }), NO_EXTRAS));
    // Replayed statelessly, without the id and status the SDK's type marks required: the upstream judges.
    assert.ok(validateResponsesRequest(withInput({ type: 'web_search_call', action: { type: 'search' } }, { type: 'local_shell_call', call_id: null, action: { type: 'exec', command: ['ls'] }, status: 'completed' }), NO_EXTRAS));
    refused(withInput({ type: 'custom_tool_call', call_id: 'c'.repeat(257), name: 'apply_patch', input: '' }), { param: 'input[0].call_id', code: 'invalid_value', message: "Invalid value for 'input[0].call_id': expected at most 256 characters." });
    refused(withInput({ type: 'web_search_call', id: 'ws_1', action: {}, status: 'completed', extra: 1 }), {
      param: 'input[0].extra',
      code: 'unknown_parameter',
      message: "Unknown field 'input[0].extra': a web_search_call item takes only 'type', 'id', 'action', 'status'. Remove it.",
    });
    assert.throws(() => validateResponsesRequest(withInput({ type: 'telepathy_call' }), NO_EXTRAS), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError);
      assert.equal(error.param, 'input[0].type');
      assert.match(error.message, /^Invalid value for 'input\[0\]\.type': 'telepathy_call' is not an input item type\. Accepted: 'message', 'function_call', 'function_call_output', 'reasoning', 'file_search_call', /);
      return true;
    });
  });

  test('with the response store on: previous_response_id is a response id; conversation, item_reference and background true stay refused, saying why', () => {
    const STORE_ON: ResponsesValidationOptions = { extraFields: new Set(), responseStore: true };
    const continued = body({ previous_response_id: 'resp_0123456789abcdef', store: true });
    assert.equal(validateResponsesRequest(continued, STORE_ON), continued);
    assert.ok(validateResponsesRequest(body({ previous_response_id: null }), STORE_ON));
    assert.ok(validateResponsesRequest(body({ previous_response_id: 'r'.repeat(256) }), STORE_ON));
    refused(body({ previous_response_id: 'r'.repeat(257) }), { param: 'previous_response_id', code: 'invalid_value', message: "Invalid value for 'previous_response_id': a response id is 1 to 256 characters; got 257." }, STORE_ON);
    refused(body({ previous_response_id: '' }), { param: 'previous_response_id', code: 'invalid_value', message: "Invalid value for 'previous_response_id': a response id is 1 to 256 characters; got 0." }, STORE_ON);
    refused(body({ previous_response_id: 5 }), { param: 'previous_response_id', code: 'invalid_type', message: "Invalid type for 'previous_response_id': expected a string, but got an integer instead." }, STORE_ON);
    refused(body({ conversation: 'conv_1' }), {
      param: 'conversation',
      code: 'invalid_value',
      message: "Invalid value for 'conversation': conversation names a conversation stored at OpenAI, and the gateway's response store keeps responses, not conversations. Continue with 'previous_response_id', or send the whole conversation in 'input'.",
    }, STORE_ON);
    const reference = "Invalid value for 'input[0]': an item_reference names one item stored with a previous response, and the gateway's response store continues whole responses. Send the item itself, or continue with 'previous_response_id'.";
    refused(withInput({ type: 'item_reference', id: 'msg_1' }), { param: 'input[0]', code: 'invalid_value', message: reference }, STORE_ON);
    refused(withInput({ id: 'msg_1' }), { param: 'input[0]', code: 'invalid_value', message: reference }, STORE_ON);
    refused(body({ background: true }), {
      param: 'background',
      code: 'invalid_value',
      message: "Invalid value for 'background': true. A background response is polled from a response store, and the gateway's response store keeps only finished responses. Leave 'background' out and wait for the answer, or stream it.",
    }, STORE_ON);
  });

  test('an item_reference (with or without its type): the store is off', () => {
    const message = "Invalid value for 'input[0]': an item_reference names an item stored with a previous response, and the gateway's response store is off. Send the item itself instead.";
    refused(withInput({ type: 'item_reference', id: 'msg_1' }), { param: 'input[0]', code: 'invalid_value', message });
    refused(withInput({ id: 'msg_1' }), { param: 'input[0]', code: 'invalid_value', message });
  });

  test('input is a string or an array of items', () => {
    refused(body({ input: { role: 'user' } }), { param: 'input', code: 'invalid_type', message: "Invalid type for 'input': expected a string or an array of input items, but got an object instead." });
    refused(withInput('Hi'), { param: 'input[0]', code: 'invalid_type', message: "Invalid type for 'input[0]': expected an object (an input item), but got a string instead." });
  });
});

describe('validateResponsesRequest: tools and tool_choice', () => {
  test('function tools are checked in full; names are unique', () => {
    refused(body({ tools: [WEATHER, WEATHER] }), { param: 'tools[1].name', code: 'invalid_value', message: "Invalid value for 'tools[1].name': 'weather' is already the name of an earlier tool. Tool names must be unique." });
    refused(body({ tools: [{ ...WEATHER, parameters: 'none' }] }), { param: 'tools[0].parameters', code: 'invalid_type', message: "Invalid type for 'tools[0].parameters': expected an object (a JSON schema) or null, but got a string instead." });
    refused(body({ tools: [{ ...WEATHER, input_schema: {} }] }), {
      param: 'tools[0].input_schema',
      code: 'unknown_parameter',
      message: "Unknown field 'tools[0].input_schema': a function tool takes only 'type', 'name', 'parameters', 'strict', 'description', 'defer_loading', 'allowed_callers', 'async', 'output_schema'. Remove it.",
    });
  });

  test('a namespace holds at least one function or custom tool, each name once', () => {
    refused(body({ tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [] }] }), {
      param: 'tools[0].tools',
      code: 'array_below_min_length',
      message: "Invalid 'tools[0].tools': empty array. Expected an array with at least 1 entry.",
    });
    refused(body({ tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [WEATHER, WEATHER] }] }), {
      param: 'tools[0].tools[1].name',
      code: 'invalid_value',
      message: "Invalid value for 'tools[0].tools[1].name': 'weather' is already the name of an earlier tool. Names within a namespace must be unique.",
    });
    refused(body({ tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'web_search' }] }] }), {
      param: 'tools[0].tools[0].type',
      code: 'invalid_value',
      message: "Invalid value for 'tools[0].tools[0].type': 'web_search' is not accepted in a namespace's tools. Accepted: 'function', 'custom'.",
    });
  });

  test('a hosted tool: its known fields pass; an unknown type is named', () => {
    assert.ok(validateResponsesRequest(body({ tools: [{ type: 'web_search', external_web_access: false }, { type: 'file_search', vector_store_ids: ['vs_1'] }] }), NO_EXTRAS));
    refused(body({ tools: [{ type: 'file_search' }] }), { param: 'tools[0].vector_store_ids', code: 'missing_required_parameter', message: "Missing required field 'tools[0].vector_store_ids'." });
    assert.throws(() => validateResponsesRequest(body({ tools: [{ type: 'teleport' }] }), NO_EXTRAS), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError);
      assert.equal(error.param, 'tools[0].type');
      assert.match(error.message, /^Invalid value for 'tools\[0\]\.type': 'teleport' is not a tool type\. Accepted: 'function', 'custom', 'namespace', 'file_search', /);
      return true;
    });
  });

  test('tool_choice: a mode, or an object naming an offered tool', () => {
    assert.ok(validateResponsesRequest(body({ tools: [WEATHER], tool_choice: { type: 'function', name: 'weather' } }), NO_EXTRAS));
    refused(body({ tools: [WEATHER], tool_choice: { type: 'function', name: 'clock' } }), {
      param: 'tool_choice.name',
      code: 'invalid_value',
      message: "Invalid value for 'tool_choice.name': 'clock' is not the name of a tool in 'tools'. Name one of the request's function or custom tools.",
    });
    refused(body({ tool_choice: 'any' }), { param: 'tool_choice', code: 'invalid_value', message: "Invalid value for 'tool_choice': 'any'. Supported values are: 'none', 'auto', 'required'." });
    assert.ok(validateResponsesRequest(body({ tools: [{ type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'web_search' }] } }), NO_EXTRAS));
  });
});
