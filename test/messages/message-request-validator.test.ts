import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { passthroughFields, validateCountTokensRequest, validateMessagesRequest, type MessagesValidationOptions } from '../../src/messages/message-request-validator.ts';
import { capturedRequest, capturedRequestNames } from './captured-requests.ts';

const NO_EXTRAS: MessagesValidationOptions = { extraFields: new Set() };
const MODERN: MessagesValidationOptions = { extraFields: new Set(), version: '2026-10-21' };
const CLASSIC: MessagesValidationOptions = { extraFields: new Set(), version: '2023-06-01' };

function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'claude-opus-5-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }], ...extra };
}

function withMessages(...messages: unknown[]): Record<string, unknown> {
  return body({ messages });
}

interface Expected {
  param: string | null;
  code: string;
  message: string;
}

function assertRefused(run: () => unknown, expected: Expected): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof InvalidRequestError, String(error));
    assert.deepEqual(
      { status: error.status, type: error.type, code: error.code, param: error.param, message: error.message },
      { status: 400, type: 'invalid_request_error', ...expected },
    );
    return true;
  });
}

function refused(value: unknown, expected: Expected, options: MessagesValidationOptions = NO_EXTRAS): void {
  assertRefused(() => validateMessagesRequest(value, options), expected);
}

describe('validateMessagesRequest: real clients', () => {
  for (const name of capturedRequestNames()) {
    test(`${name} passes as it was sent, and comes back as the same object`, () => {
      const captured = capturedRequest(name);
      const options: MessagesValidationOptions = { extraFields: new Set(), version: captured.headers['anthropic-version'] as string };
      const validate = captured.path.startsWith('/v1/messages/count_tokens') ? validateCountTokensRequest : validateMessagesRequest;
      assert.equal(validate(captured.body, options), captured.body);
    });
  }

  test("Claude Code's body carries what the issue names: a system message after the first user message, defer_loading, adaptive thinking", () => {
    const { body: cc } = capturedRequest('claude-code-tool-result.json');
    const messages = cc['messages'] as Array<Record<string, unknown>>;
    assert.equal(messages[0]?.['role'], 'user');
    assert.equal(messages[1]?.['role'], 'system');
    assert.deepEqual(cc['thinking'], { type: 'adaptive', display: 'omitted' });
    assert.equal(cc['max_tokens'], 128000);
    assert.ok((cc['tools'] as Array<Record<string, unknown>>).some((tool) => tool['defer_loading'] === true));
  });
});

describe('validateMessagesRequest: the request body', () => {
  test('not an object', () => {
    refused([], { param: null, code: 'invalid_type', message: 'Invalid type for the request body: expected a JSON object, but got an array instead.' });
  });

  test('a required field missing, after the fields present are checked', () => {
    refused({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }, { param: 'max_tokens', code: 'missing_required_parameter', message: "Missing required field 'max_tokens'." });
    refused({ max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }, { param: 'model', code: 'missing_required_parameter', message: "Missing required field 'model'." });
  });

  test('an unknown top-level field says how an operator allows it; one in extraFields passes unchecked', () => {
    refused(body({ reasoning_effort: 'high' }), {
      param: 'reasoning_effort',
      code: 'unknown_parameter',
      message:
        "Unknown field 'reasoning_effort': the Messages API defines no such field. Remove it, or, for the gateway's operator to pass it to an Anthropic upstream unchecked, add it to `messagesPassthrough` of an Anthropic provider in the gateway's config.",
    });
    const sent = body({ reasoning_effort: { anything: [1, 2] }, stream: true });
    assert.equal(validateMessagesRequest(sent, { extraFields: new Set(['reasoning_effort']) }), sent);
    assert.deepEqual(passthroughFields(sent), ['reasoning_effort']);
    assert.deepEqual(passthroughFields(body({ tools: [], tool_choice: { type: 'auto' } })), []);
  });

  for (const name of ['fallbacks', 'fallback_credit_token', 'billing_policy', 'speed', 'inference_geo']) {
    test(`${name} changes price or routing at Anthropic: refused unless the operator allows it, then an extra field`, () => {
      const value = name === 'fallbacks' ? [{ model: 'claude-opus-4-7', max_tokens: 128000 }] : name === 'speed' ? 'fast' : name === 'inference_geo' ? 'us' : { any: 1 };
      const message = `Field '${name}' changes what the request costs or where it runs at Anthropic, so the gateway passes it only where its operator allows it. Remove it, or, for the gateway's operator to allow it, add it to \`messagesPassthrough\` of an Anthropic provider in the gateway's config.`;
      refused(body({ [name]: value }), { param: name, code: 'unknown_parameter', message });
      assertRefused(() => validateCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], [name]: value }, NO_EXTRAS), { param: name, code: 'unknown_parameter', message });
      const sent = body({ [name]: value });
      assert.equal(validateMessagesRequest(sent, { extraFields: new Set([name]) }), sent);
      assert.deepEqual(passthroughFields(sent), [name]);
    });
  }

  test('count_tokens refuses the generation fields and needs no max_tokens', () => {
    assertRefused(() => validateCountTokensRequest(body(), NO_EXTRAS), {
      param: 'max_tokens',
      code: 'unknown_parameter',
      message: "Unknown field 'max_tokens': POST /v1/messages/count_tokens does not take it (it counts the prompt only). Remove it.",
    });
    const counted = { model: 'm', messages: [{ role: 'user', content: 'Hi' }], system: 'Be brief.', tools: [{ name: 'Read', input_schema: { type: 'object' } }] };
    assert.equal(validateCountTokensRequest(counted, NO_EXTRAS), counted);
  });

  test('model: a non-empty string of at most 256 characters', () => {
    refused(body({ model: '' }), { param: 'model', code: 'invalid_value', message: "Invalid value for 'model': expected a non-empty string." });
    refused(body({ model: 'm'.repeat(257) }), { param: 'model', code: 'invalid_value', message: "Invalid value for 'model': expected at most 256 characters." });
    refused(body({ model: 7 }), { param: 'model', code: 'invalid_type', message: "Invalid type for 'model': expected a string, but got an integer instead." });
  });

  test('max_tokens: an integer from 0 to 1000000', () => {
    refused(body({ max_tokens: 12.5 }), { param: 'max_tokens', code: 'invalid_type', message: "Invalid type for 'max_tokens': expected an integer, but got a number instead." });
    refused(body({ max_tokens: 1_000_001 }), { param: 'max_tokens', code: 'invalid_value', message: "Invalid value for 'max_tokens': 1000001. Expected an integer from 0 to 1000000." });
    assert.ok(validateMessagesRequest(body({ max_tokens: 0 }), NO_EXTRAS));
  });

  test('temperature, top_p, top_k: bounded under 2023-06-01, removed from 2026-10-21 on', () => {
    refused(body({ temperature: 1.5 }), { param: 'temperature', code: 'invalid_value', message: "Invalid value for 'temperature': 1.5. Expected a number from 0 to 1." });
    refused(body({ top_k: -1 }), { param: 'top_k', code: 'invalid_value', message: "Invalid value for 'top_k': -1. Expected an integer from 0 to 1000000." });
    assert.ok(validateMessagesRequest(body({ temperature: 0.2, top_p: 0.9, top_k: 40 }), CLASSIC));
    refused(
      body({ temperature: 1 }),
      {
        param: 'temperature',
        code: 'unknown_parameter',
        message: "Unsupported field 'temperature': anthropic-version 2026-10-21 and later removed temperature, top_p and top_k. Remove it, or send anthropic-version: 2023-06-01.",
      },
      MODERN,
    );
  });

  test('the array bounds: 100000 messages (Anthropic\'s), 10000 tools, 256 stop sequences', () => {
    const hi = { role: 'user', content: 'Hi' };
    refused(body({ messages: new Array(100_001).fill(hi) }), { param: 'messages', code: 'array_above_max_length', message: "Invalid 'messages': array too long. Expected at most 100000 messages." });
    assert.ok(validateMessagesRequest(body({ messages: new Array(100_000).fill(hi) }), NO_EXTRAS));
    refused(body({ tools: new Array(10_001).fill({ name: 'x', input_schema: { type: 'object' } }) }), { param: 'tools', code: 'array_above_max_length', message: "Invalid 'tools': array too long. Expected an array with at most 10000 entries." });
    refused(body({ stop_sequences: new Array(257).fill('x') }), { param: 'stop_sequences', code: 'array_above_max_length', message: "Invalid 'stop_sequences': array too long. Expected an array with at most 256 entries." });
  });

  test('stop_sequences, metadata, service_tier, cache_control', () => {
    refused(body({ stop_sequences: ['END', 3] }), { param: 'stop_sequences[1]', code: 'invalid_type', message: "Invalid type for 'stop_sequences[1]': expected a string, but got an integer instead." });
    refused(body({ metadata: { user_id: 'u'.repeat(257) } }), { param: 'metadata.user_id', code: 'invalid_value', message: "Invalid value for 'metadata.user_id': expected at most 256 characters." });
    refused(body({ metadata: { user: 'x' } }), { param: 'metadata.user', code: 'unknown_parameter', message: "Unknown field 'metadata.user': metadata takes only 'user_id'. Remove it." });
    refused(body({ service_tier: 'priority' }), { param: 'service_tier', code: 'invalid_value', message: "Invalid value for 'service_tier': 'priority'. Supported values are: 'auto', 'standard_only'." });
    refused(body({ cache_control: { type: 'ephemeral', ttl: '10m' } }), { param: 'cache_control.ttl', code: 'invalid_value', message: "Invalid value for 'cache_control.ttl': '10m'. Supported values are: '5m', '1h'." });
  });

  test('thinking: by type, budget_tokens at least 1024, display summarized or omitted', () => {
    refused(body({ thinking: { type: 'enabled', budget_tokens: 500 } }), { param: 'thinking.budget_tokens', code: 'invalid_value', message: "Invalid value for 'thinking.budget_tokens': 500. Expected an integer from 1024 to 1000000." });
    refused(body({ thinking: { type: 'adaptive', display: 'full' } }), { param: 'thinking.display', code: 'invalid_value', message: "Invalid value for 'thinking.display': 'full'. Supported values are: 'summarized', 'omitted'." });
    refused(body({ thinking: { type: 'on' } }), {
      param: 'thinking.type',
      code: 'invalid_value',
      message: "Invalid value for 'thinking.type': 'on' is not accepted in 'thinking'. Accepted: 'enabled', 'adaptive', 'disabled', 'between_tools'.",
    });
    refused(body({ thinking: { type: 'enabled' } }), { param: 'thinking.budget_tokens', code: 'missing_required_parameter', message: "Missing required field 'thinking.budget_tokens'." });
  });

  test('output_config: effort and a json_schema format', () => {
    refused(body({ output_config: { effort: 'extreme' } }), {
      param: 'output_config.effort',
      code: 'invalid_value',
      message: "Invalid value for 'output_config.effort': 'extreme'. Supported values are: 'low', 'medium', 'high', 'xhigh', 'max'.",
    });
    refused(body({ output_config: { format: { type: 'json_schema' } } }), { param: 'output_config.format.schema', code: 'missing_required_parameter', message: "Missing required field 'output_config.format.schema'." });
  });
});

describe('validateMessagesRequest: messages', () => {
  test('at least one message', () => {
    refused(withMessages(), { param: 'messages', code: 'array_below_min_length', message: "Invalid 'messages': empty array. Expected at least one message." });
  });

  test('the first message uses the user role; consecutive messages of one role are fine', () => {
    refused(withMessages({ role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Hi' }), {
      param: 'messages[0].role',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].role': 'assistant'. The first message must use the 'user' role.",
    });
    refused(withMessages({ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }), {
      param: 'messages[0].role',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].role': 'system'. The first message must use the 'user' role. Put the system prompt in the top-level 'system' field.",
    });
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'tool', content: 'x' }), {
      param: 'messages[1].role',
      code: 'invalid_value',
      message: "Invalid value for 'messages[1].role': 'tool'. Supported values are: 'user', 'assistant', 'system'.",
    });
    assert.ok(validateMessagesRequest(withMessages({ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { role: 'assistant', content: 'c' }, { role: 'assistant', content: 'd' }), NO_EXTRAS));
  });

  test('a message takes role and content only; a system message also clear_at and output_config', () => {
    refused(withMessages({ role: 'user', content: 'Hi', name: 'ana' }), {
      param: 'messages[0].name',
      code: 'unknown_parameter',
      message: "Unknown field 'messages[0].name': user messages take only 'role' and 'content'. Remove it.",
    });
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'system', content: 'Env', clear_at: 'later' }), {
      param: 'messages[1].clear_at',
      code: 'invalid_value',
      message: "Invalid value for 'messages[1].clear_at': 'later'. Supported values are: 'next_user_message', 'never'.",
    });
    assert.ok(validateMessagesRequest(withMessages({ role: 'user', content: 'Hi' }, { role: 'system', output_config: { effort: 'low' } }), NO_EXTRAS));
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'system', output_config: {} }), {
      param: 'messages[1].content',
      code: 'missing_required_parameter',
      message: "Missing required field 'messages[1].content'. A system message needs content or an output_config.",
    });
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }), {
      param: 'messages[1].content[0].type',
      code: 'invalid_value',
      message: "Invalid value for 'messages[1].content[0].type': 'image' is not accepted in system message content. Accepted: 'text', 'tool_addition', 'tool_removal'.",
    });
  });

  test('content is non-empty, except in a final assistant message', () => {
    refused(withMessages({ role: 'user', content: '' }), {
      param: 'messages[0].content',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].content': a message's content must be non-empty (only a final assistant message may be empty).",
    });
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'assistant', content: [] }, { role: 'user', content: 'Again' }), {
      param: 'messages[1].content',
      code: 'invalid_value',
      message: "Invalid value for 'messages[1].content': a message's content must be non-empty (only a final assistant message may be empty).",
    });
    assert.ok(validateMessagesRequest(withMessages({ role: 'user', content: 'Hi' }, { role: 'assistant', content: '' }), NO_EXTRAS));
    refused(withMessages({ role: 'user', content: [{ type: 'text', text: '' }] }), { param: 'messages[0].content[0].text', code: 'invalid_value', message: "Invalid value for 'messages[0].content[0].text': expected a non-empty string." });
  });

  test('an unknown block type names the accepted ones', () => {
    refused(withMessages({ role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'video', url: 'x' }] }), {
      param: 'messages[0].content[1].type',
      code: 'invalid_value',
      message:
        "Invalid value for 'messages[0].content[1].type': 'video' is not accepted in message content. Accepted: 'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result', 'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'advisor_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result', 'tool_search_tool_result', 'mcp_tool_use', 'mcp_tool_result', 'container_upload', 'compaction', 'tool_addition', 'tool_removal', 'mcp_tool_listing', 'fallback'.",
    });
  });

  test('an unknown field inside a block names what the block takes', () => {
    refused(withMessages({ role: 'user', content: [{ type: 'text', text: 'Hi', detail: 'high' }] }), {
      param: 'messages[0].content[0].detail',
      code: 'unknown_parameter',
      message: "Unknown field 'messages[0].content[0].detail': a text block takes only 'type', 'text', 'cache_control', 'citations'. Remove it.",
    });
  });

  test('an image source: its media type, named by the full path', () => {
    refused(withMessages({ role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'Qk0=' } }] }), {
      param: 'messages[0].content[1].source.media_type',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].content[1].source.media_type': 'image/bmp'. Supported values are: 'image/jpeg', 'image/png', 'image/gif', 'image/webp'.",
    });
    refused(withMessages({ role: 'user', content: [{ type: 'image', source: { type: 'url' } }] }), { param: 'messages[0].content[0].source.url', code: 'missing_required_parameter', message: "Missing required field 'messages[0].content[0].source.url'." });
  });

  test('where blocks stand: tool_result in user messages, tool_use and thinking in assistant messages', () => {
    refused(withMessages({ role: 'user', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] }), {
      param: 'messages[0].content[0]',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].content[0]': tool_use blocks belong in assistant messages, not in user messages.",
    });
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] }), {
      param: 'messages[1].content[0]',
      code: 'invalid_value',
      message: "Invalid value for 'messages[1].content[0]': tool_result blocks belong in user messages, not in assistant messages.",
    });
  });

  test('tool_use input is an object; tool_result content is a string or blocks', () => {
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: '{"a":1}' }] }), {
      param: 'messages[1].content[0].input',
      code: 'invalid_type',
      message: "Invalid type for 'messages[1].content[0].input': expected an object, but got a string instead.",
    });
    refused(withMessages({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }] }), {
      param: 'messages[0].content[0].content[0].type',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].content[0].content[0].type': 'thinking' is not accepted in tool_result content. Accepted: 'text', 'image', 'search_result', 'document', 'tool_reference', 'browser_state'.",
    });
  });

  test('from 2026-10-21 on: no document directly in assistant messages, no citations on user text', () => {
    const pdf = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
    const assistantDocument = withMessages({ role: 'user', content: 'Hi' }, { role: 'assistant', content: [pdf] });
    assert.ok(validateMessagesRequest(assistantDocument, CLASSIC));
    refused(
      assistantDocument,
      {
        param: 'messages[1].content[0]',
        code: 'invalid_value',
        message: "Invalid value for 'messages[1].content[0]': with anthropic-version 2026-10-21 and later, document blocks belong in user messages. Move it, or send anthropic-version: 2023-06-01.",
      },
      MODERN,
    );
    const cited = withMessages({ role: 'user', content: [{ type: 'text', text: 'As said', citations: [{ type: 'char_location', cited_text: 'x', document_index: 0, document_title: null, start_char_index: 0, end_char_index: 1 }] }] });
    assert.ok(validateMessagesRequest(cited, CLASSIC));
    refused(
      cited,
      {
        param: 'messages[0].content[0].citations',
        code: 'invalid_value',
        message: "Invalid value for 'messages[0].content[0].citations': with anthropic-version 2026-10-21 and later, text in user messages may not carry citations. Remove them, or send anthropic-version: 2023-06-01.",
      },
      MODERN,
    );
  });

  test('server-tool blocks pass with their known fields; their content is the upstream\'s to check', () => {
    const history = withMessages(
      { role: 'user', content: 'Search' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Let me search.', signature: 'EqQBCgIYAhIM' },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'portcullis' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://x', title: 'X', encrypted_content: 'abc' }] },
          { type: 'text', text: 'Found it.' },
        ],
      },
    );
    assert.equal(validateMessagesRequest(history, NO_EXTRAS), history);
    refused(withMessages({ role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {}, extra: 1 }] }), {
      param: 'messages[1].content[0].extra',
      code: 'unknown_parameter',
      message: "Unknown field 'messages[1].content[0].extra': a server_tool_use block takes only 'type', 'id', 'name', 'input', 'cache_control', 'caller'. Remove it.",
    });
  });
});

describe('validateMessagesRequest: tools and tool_choice', () => {
  const read = { name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } };

  test('a custom tool: name pattern, input_schema of type object, its own fields only', () => {
    refused(body({ tools: [{ ...read, name: 'read file' }] }), {
      param: 'tools[0].name',
      code: 'invalid_value',
      message: "Invalid value for 'tools[0].name': 'read file'. A tool name must be 1 to 128 letters, digits, underscores or hyphens.",
    });
    refused(body({ tools: [{ ...read, input_schema: { type: 'array' } }] }), { param: 'tools[0].input_schema.type', code: 'invalid_value', message: "Invalid value for 'tools[0].input_schema.type': a tool's input_schema must have \"type\": \"object\"." });
    refused(body({ tools: [{ ...read, parameters: {} }] }), {
      param: 'tools[0].parameters',
      code: 'unknown_parameter',
      message:
        "Unknown field 'tools[0].parameters': a custom tool takes only 'name', 'input_schema', 'type', 'description', 'cache_control', 'strict', 'defer_loading', 'input_examples', 'eager_input_streaming', 'allowed_callers'. Remove it.",
    });
    refused(body({ tools: [read, read] }), { param: 'tools[1].name', code: 'invalid_value', message: "Invalid value for 'tools[1].name': the tool name 'Read' is used by more than one tool; tool names must be unique." });
  });

  test('a server tool: a known family with any version date', () => {
    const tools = [{ type: 'web_search_20260318', name: 'web_search', max_uses: 3 }, { type: 'bash_20991231', name: 'bash' }, { type: 'mcp_toolset', mcp_server_name: 'docs' }];
    assert.ok(validateMessagesRequest(body({ tools }), NO_EXTRAS));
    refused(body({ tools: [{ type: 'function', function: { name: 'Read' } }] }), {
      param: 'tools[0].type',
      code: 'invalid_value',
      message:
        "Invalid value for 'tools[0].type': 'function' is not a tool type the Messages API defines. Leave 'type' out (or set \"custom\") for a tool your client runs, or name a server tool: 'web_search', 'web_fetch', 'code_execution', 'bash', 'text_editor', 'computer', 'computer_toolset', 'browser_toolset', 'memory', 'advisor', 'tool_search_tool_regex', 'tool_search_tool_bm25', 'mcp_toolset', with its version date (such as web_search_20260318).",
    });
  });

  test('tool_choice: by type; a tool it names is defined, wherever tool_choice stands in the body', () => {
    refused({ tool_choice: { type: 'tool', name: 'Write' }, ...body({ tools: [read] }) }, {
      param: 'tool_choice.name',
      code: 'invalid_value',
      message: "Invalid value for 'tool_choice.name': no tool named 'Write' is defined in 'tools'.",
    });
    refused(body({ tool_choice: { type: 'none', disable_parallel_tool_use: true } }), {
      param: 'tool_choice.disable_parallel_tool_use',
      code: 'unknown_parameter',
      message: "Unknown field 'tool_choice.disable_parallel_tool_use': a none tool_choice takes only 'type'. Remove it.",
    });
    refused(body({ tool_choice: { type: 'required' } }), { param: 'tool_choice.type', code: 'invalid_value', message: "Invalid value for 'tool_choice.type': 'required'. Supported values are: 'auto', 'any', 'tool', 'none'." });
    assert.ok(validateMessagesRequest({ tool_choice: { type: 'tool', name: 'Read', disable_parallel_tool_use: true }, ...body({ tools: [read] }) }, NO_EXTRAS));
  });
});
