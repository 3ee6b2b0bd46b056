import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import { measurePrompt, promptBoundOf } from '../../src/chat/request-prompt-bound.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { toChatRequest } from '../../src/messages/message-to-chat.ts';
import { validateMessagesRequest } from '../../src/messages/message-request-validator.ts';
import type { MessagesRequest } from '../../src/messages/message-request-types.ts';
import { DOCUMENT_READ_TOKENS, SERVER_TOOL_DEFAULT_USES, SERVER_TOOL_USE_TOKENS } from '../../src/messages/upstream-reads.ts';
import { capturedRequest, capturedRequestNames } from './captured-requests.ts';

/** Validated first, as the gateway does: the translation only ever sees valid requests (here with an
 * operator's messagesPassthrough of x_extra and three fields that change price or routing at Anthropic). */
function translate(extra: Record<string, unknown>): { request: ChatRequest; untranslatable: InvalidRequestError | null } {
  const req = validateMessagesRequest({ model: 'claude-opus-5-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }], ...extra }, { extraFields: new Set(['x_extra', 'speed', 'inference_geo', 'fallbacks']), version: '2023-06-01' });
  return toChatRequest(req);
}

function refusal(param: string, what: string): { status: number; code: string; param: string; message: string } {
  return {
    status: 400,
    code: 'unsupported_parameter',
    param,
    message: `'${param}': ${what} has no equivalent in OpenAI's chat completions, so no OpenAI-compatible upstream of this model can take the request; only an Anthropic upstream can. Remove it, or use a model served by an Anthropic provider.`,
  };
}

function assertUntranslatable(extra: Record<string, unknown>, param: string, what: string): ChatRequest {
  const { request, untranslatable } = translate(extra);
  assert.ok(untranslatable instanceof InvalidRequestError);
  assert.deepEqual({ status: untranslatable.status, code: untranslatable.code, param: untranslatable.param, message: untranslatable.message }, refusal(param, what));
  return request;
}

describe('toChatRequest: real clients', () => {
  for (const name of capturedRequestNames().filter((n) => !n.includes('count-tokens'))) {
    test(`${name} translates whole`, () => {
      const { body, headers } = capturedRequest(name);
      const { untranslatable } = toChatRequest(validateMessagesRequest(body, { extraFields: new Set(), version: headers['anthropic-version'] as string }));
      assert.equal(untranslatable, null);
    });
  }

  for (const name of ['claude-code-first.json', 'claude-code-tool-result.json']) {
    test(`${name}: one system message, first (the chat templates of Qwen, Llama and Gemma refuse any other)`, () => {
      const { request } = toChatRequest(validateMessagesRequest(capturedRequest(name).body, { extraFields: new Set(), version: '2023-06-01' }));
      const roles = request.messages.map((m) => m.role);
      assert.equal(roles.filter((r) => r === 'system').length, 1, roles.join(','));
      assert.equal(roles[0], 'system');
    });
  }

  test("Claude Code's tool round trip: system blocks then its system message, as one leading system message; the call and its result; the deferred placeholder left out", () => {
    const { body } = capturedRequest('claude-code-tool-result.json');
    const { request } = toChatRequest(validateMessagesRequest(body, { extraFields: new Set(), version: '2023-06-01' }));
    const system = body['system'] as Array<{ text: string }>;
    const messages = body['messages'] as Array<{ content: string | Array<{ text: string }> }>;
    const late = messages[1]?.content ?? '';
    const lateParts = typeof late === 'string' ? [{ type: 'text', text: late }] : late.map((block) => ({ type: 'text', text: block.text }));
    assert.deepEqual(request.messages[0], { role: 'system', content: [...system.map((block) => ({ type: 'text', text: block.text })), ...lateParts] });
    assert.deepEqual(
      request.messages.slice(1).map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    assert.deepEqual(request.messages[2], {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'toolu_capture2', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/tmp/project/notes.txt"}' } }],
    });
    assert.deepEqual(request.messages[3], { role: 'tool', tool_call_id: 'toolu_capture2', content: '1\tThe drawbridge is up.\n2\t' });
    assert.deepEqual(
      request.tools?.map((tool) => tool.function.name),
      ['Agent', 'Bash', 'Edit', 'ListAgents', 'Read', 'ReportFindings', 'ScheduleWakeup', 'Skill', 'ToolSearch', 'Workflow', 'Write'],
    );
    assert.equal(request.max_tokens, 128000);
    assert.equal(request.stream, true);
    assert.deepEqual(request.stream_options, { include_usage: true });
    assert.deepEqual(Object.keys(request).sort(), ['max_tokens', 'messages', 'model', 'stream', 'stream_options', 'tools']);
  });

  test("@ai-sdk/anthropic's second step, exactly", () => {
    const { body } = capturedRequest('ai-sdk-stream-text-tool-result.json');
    const { request, untranslatable } = toChatRequest(validateMessagesRequest(body, { extraFields: new Set(), version: '2023-06-01' }));
    assert.equal(untranslatable, null);
    assert.deepEqual(request, {
      model: 'claude-haiku-4-5',
      max_tokens: 64000,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_capture7', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_capture7', content: 'Sunny in Oslo' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            description: 'The weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
          },
        },
      ],
      tool_choice: 'auto',
      stream: true,
      stream_options: { include_usage: true },
    });
  });
});

describe('toChatRequest: the translation table by example', () => {
  test('system string -> a leading system message; a late role system message joins it, in order', () => {
    const { request, untranslatable } = translate({
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'system', content: [{ type: 'text', text: 'Env: linux' }] },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Bye' },
      ],
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.messages, [
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Env: linux' }] },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'Bye' },
    ]);
  });

  test('a system message with clear_at next_user_message is left out once a later user message exists', () => {
    const { request } = translate({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Only for this turn', clear_at: 'next_user_message' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Again' },
        { role: 'system', content: 'Still shown', clear_at: 'next_user_message' },
      ],
    });
    assert.deepEqual(
      request.messages.map((m) => [m.role, m.content]),
      [
        ['system', 'Still shown'],
        ['user', 'Hi'],
        ['assistant', 'Hello'],
        ['user', 'Again'],
      ],
    );
  });

  test('images: base64 -> a data URL, url -> image_url; text parts kept in order', () => {
    const { request, untranslatable } = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/b.jpg' }, cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/b.jpg' } },
        ],
      },
    ]);
  });

  test('a final assistant message is a prefill: untranslatable; an empty one is left out', () => {
    assertUntranslatable({ messages: [{ role: 'user', content: 'Name a colour' }, { role: 'assistant', content: 'The colour is' }] }, 'messages[1]', 'a final assistant message (a prefill the answer continues)');
    const { request, untranslatable } = translate({ messages: [{ role: 'user', content: 'Name a colour' }, { role: 'assistant', content: [] }] });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.messages, [{ role: 'user', content: 'Name a colour' }]);
  });

  test('an image by file id is untranslatable', () => {
    assertUntranslatable({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] }, 'messages[0].content[0].source', 'an image by file reference');
  });

  test('tool_use -> tool_calls (ids kept, arguments the JSON of input); tool_result -> tool messages first, text joined with a newline, is_error said as "Error: "', () => {
    const { request, untranslatable } = translate({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_a', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_b', name: 'weather', input: { city: 'Oslo', unit: 'c' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '18°C' }, { type: 'text', text: 'sunny' }] },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'city not found', is_error: true },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.messages.slice(1), [
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [
          { id: 'toolu_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo","unit":"c"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_a', content: '18°C\nsunny' },
      { role: 'tool', tool_call_id: 'toolu_b', content: 'Error: city not found' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
  });

  test("images inside tool results (Claude Code's Read of a PNG): the tool messages carry the text, the images follow as one user message, before the user's own parts", () => {
    const png = 'iVBORw0KGgo=';
    const { request, untranslatable } = translate({
      messages: [
        { role: 'user', content: 'Look at both screenshots.' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'Read', input: { file_path: '/tmp/a.png' } },
            { type: 'tool_use', id: 'toolu_b', name: 'Read', input: { file_path: '/tmp/b.png' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: 'b.png' }, { type: 'image', source: { type: 'url', url: 'https://x/b.png' } }] },
            { type: 'text', text: 'Which is newer?' },
          ],
        },
      ],
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.messages.slice(2), [
      { role: 'tool', tool_call_id: 'toolu_a', content: '' },
      { role: 'tool', tool_call_id: 'toolu_b', content: 'b.png' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'image_url', image_url: { url: 'https://x/b.png' } },
          { type: 'text', text: 'Which is newer?' },
        ],
      },
    ]);
    // The images count in the bound as images, once each.
    assert.equal(promptBoundOf(request).imageParts, 2);
  });

  test('an image by file id inside a tool_result is untranslatable; a document there too', () => {
    assertUntranslatable(
      { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] }] },
      'messages[0].content[0].content[0].source',
      'an image by file reference',
    );
    assertUntranslatable(
      { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }] }] },
      'messages[0].content[0].content[0]',
      'a document block in a tool_result',
    );
  });

  test('stop_sequences -> stop; more than 4 is untranslatable', () => {
    assert.deepEqual(translate({ stop_sequences: ['END', '###'] }).request.stop, ['END', '###']);
    assertUntranslatable({ stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, 'stop_sequences', 'more than 4 stop sequences');
  });

  test('max_tokens, temperature, top_p carried; top_k untranslatable', () => {
    const { request, untranslatable } = translate({ max_tokens: 300, temperature: 0.3, top_p: 0.8 });
    assert.equal(untranslatable, null);
    assert.deepEqual(request, { model: 'claude-opus-5-5', max_tokens: 300, temperature: 0.3, top_p: 0.8, messages: [{ role: 'user', content: 'Hi' }] });
    assertUntranslatable({ top_k: 5 }, 'top_k', 'top_k');
    assertUntranslatable({ max_tokens: 0 }, 'max_tokens', 'max_tokens 0 (a prompt-cache warm-up without an answer)');
  });

  test('tools: custom -> function tools (strict kept); defer_loading left out; server tools untranslatable', () => {
    const { request, untranslatable } = translate({
      tools: [
        { name: 'Read', description: 'Reads', input_schema: { type: 'object' }, strict: true, cache_control: { type: 'ephemeral' }, eager_input_streaming: true },
        { name: 'Later', input_schema: { type: 'object' }, defer_loading: true },
      ],
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.tools, [{ type: 'function', function: { name: 'Read', description: 'Reads', parameters: { type: 'object' }, strict: true } }]);
    assertUntranslatable({ tools: [{ type: 'web_search_20260318', name: 'web_search' }] }, 'tools[0]', "the server tool 'web_search_20260318'");
    assertUntranslatable({ tools: [{ name: 'R', input_schema: { type: 'object' }, input_examples: [{ a: 1 }] }] }, 'tools[0].input_examples', 'input_examples');
    assertUntranslatable({ tools: [{ name: 'n'.repeat(65), input_schema: { type: 'object' } }] }, 'tools[0].name', 'a tool name longer than 64 characters');
  });

  test('tool_choice: auto, any -> required, tool -> function, none; disable_parallel_tool_use -> parallel_tool_calls false', () => {
    const tools = [{ name: 'Read', input_schema: { type: 'object' } }];
    assert.equal(translate({ tools, tool_choice: { type: 'auto' } }).request.tool_choice, 'auto');
    assert.equal(translate({ tools, tool_choice: { type: 'any' } }).request.tool_choice, 'required');
    assert.equal(translate({ tools, tool_choice: { type: 'none' } }).request.tool_choice, 'none');
    const named = translate({ tools, tool_choice: { type: 'tool', name: 'Read', disable_parallel_tool_use: true } }).request;
    assert.deepEqual([named.tool_choice, named.parallel_tool_calls], [{ type: 'function', function: { name: 'Read' } }, false]);
    const deferred = [{ name: 'Later', input_schema: { type: 'object' }, defer_loading: true }];
    assertUntranslatable({ tools: deferred, tool_choice: { type: 'any' } }, 'tool_choice', "a tool_choice of type 'any' without a client tool to call");
  });

  test('history only an Anthropic upstream understands: thinking, redacted thinking, server tools, documents, search results', () => {
    const user = { role: 'user', content: 'Hi' };
    assertUntranslatable({ messages: [user, { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm', signature: 'sig' }, { type: 'text', text: 'Hello' }] }, user] }, 'messages[1].content[0]', 'a thinking block');
    assertUntranslatable({ messages: [user, { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'abc' }] }, user] }, 'messages[1].content[0]', 'a redacted_thinking block');
    assertUntranslatable({ messages: [user, { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }, user] }, 'messages[1].content[0]', 'a server_tool_use block');
    assertUntranslatable({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }] }, 'messages[0].content[0]', 'a document block');
    assertUntranslatable(
      { messages: [{ role: 'user', content: [{ type: 'search_result', source: 'https://x', title: 'X', content: [{ type: 'text', text: 'x' }] }] }] },
      'messages[0].content[0]',
      'a search_result block',
    );
  });

  test('mcp_servers, container, inference_geo and a passthrough field are untranslatable; the first one is reported', () => {
    assertUntranslatable({ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'docs' }] }, 'mcp_servers', 'mcp_servers (MCP servers Anthropic connects to)');
    assertUntranslatable({ container: 'container_1' }, 'container', 'a code-execution container');
    assertUntranslatable({ inference_geo: 'eu' }, 'inference_geo', 'inference_geo (where the answer may be computed)');
    assertUntranslatable({ x_extra: 1 }, 'x_extra', "the field 'x_extra' (passed through for an Anthropic upstream)");
    assertUntranslatable({ container: 'c', top_k: 3 }, 'container', 'a code-execution container');
  });

  test('dropped on purpose: thinking config, effort, context_management, cache_control, metadata, service_tier, speed', () => {
    const { request, untranslatable } = translate({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      output_config: { effort: 'high' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      cache_control: { type: 'ephemeral' },
      metadata: { user_id: 'u-1' },
      service_tier: 'auto',
      speed: 'fast',
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(request, { model: 'claude-opus-5-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] });
  });

  test('output_config.format -> a strict json_schema response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    assert.deepEqual(translate({ output_config: { format: { type: 'json_schema', schema } } }).request.response_format, { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
  });

  test('the translation never changes the validated request', () => {
    const sent = { model: 'm', max_tokens: 10, stop_sequences: ['x'], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] };
    const copy = structuredClone(sent);
    toChatRequest(validateMessagesRequest(sent, { extraFields: new Set() }) as MessagesRequest);
    assert.deepEqual(sent, copy);
  });
});

describe('toChatRequest: the prompt bound counts what the translation leaves out', () => {
  function jsonBytes(value: unknown): number {
    return Buffer.byteLength(JSON.stringify(value), 'utf8');
  }

  test('a translation that says everything: the bound of the chat request itself, not enumerable', () => {
    const { request } = translate({ system: 'Be brief.', tools: [{ name: 'Read', input_schema: { type: 'object' } }] });
    assert.deepEqual(promptBoundOf(request), measurePrompt(request));
    assert.equal(Object.keys(request).includes('promptBound'), false);
  });

  test('thinking blocks, documents, server and deferred tools count by the bytes of their JSON; images by file id as images', () => {
    const thinking = { type: 'thinking', thinking: 'Let me think about the weather in Oslo.', signature: 'EqQBCgIYAhIM'.repeat(20) };
    const document = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'é'.repeat(1000) } };
    const server = { type: 'web_search_20260318', name: 'web_search' };
    const deferred = { name: 'Later', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, defer_loading: true };
    const { request } = translate({
      tools: [server, deferred],
      messages: [
        { role: 'user', content: [document, { type: 'image', source: { type: 'file', file_id: 'file_1' } }, { type: 'text', text: 'Summarise' }] },
        { role: 'assistant', content: [thinking, { type: 'text', text: 'Sure.' }] },
        { role: 'user', content: 'Go on' },
      ],
    });
    const measured = measurePrompt(request);
    assert.deepEqual(promptBoundOf(request), {
      tokens: measured.tokens + jsonBytes(document) + jsonBytes(thinking) + jsonBytes(server) + 10 * 20_000 + jsonBytes(deferred),
      imageParts: measured.imageParts + 1,
    });
  });

  test('the constants of what Anthropic reads: 100 pages of 3,000 tokens per document, 10 uses of 20,000 tokens per server tool', () => {
    assert.deepEqual([DOCUMENT_READ_TOKENS, SERVER_TOOL_DEFAULT_USES, SERVER_TOOL_USE_TOKENS], [300_000, 10, 20_000]);
  });

  /** The bound beyond the JSON of what is left out. */
  function readsOf(extra: Record<string, unknown>, leftOut: unknown[]): number {
    const { request } = translate(extra);
    return promptBoundOf(request).tokens - measurePrompt(request).tokens - leftOut.reduce<number>((sum, value) => sum + jsonBytes(value), 0);
  }

  test('a document by URL or by file id counts the most Anthropic reads of one: 100 pages of 3,000 tokens', () => {
    const byUrl = { type: 'document', source: { type: 'url', url: 'https://example.com/annual-report.pdf' } };
    const byFile = { type: 'document', source: { type: 'file', file_id: 'file_011' } };
    const inline = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'short' } };
    assert.equal(readsOf({ messages: [{ role: 'user', content: [byUrl, { type: 'text', text: 'Summarise.' }] }] }, [byUrl]), 300_000);
    assert.equal(readsOf({ messages: [{ role: 'user', content: [byFile, byUrl, inline] }] }, [byFile, byUrl, inline]), 600_000);
    // In a tool result too.
    const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Fetched.' }, byUrl] };
    const call = { type: 'tool_use', id: 'toolu_1', name: 'Fetch', input: {} };
    assert.equal(
      readsOf({ messages: [{ role: 'user', content: 'Go' }, { role: 'assistant', content: [call] }, { role: 'user', content: [result] }] }, [byUrl]),
      300_000,
    );
  });

  test('a server tool counts its uses (max_uses, else 10) times one use (20,000 tokens; web_fetch: max_content_tokens, else a whole document)', () => {
    // Claude Code's WebSearch request.
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 8 };
    assert.equal(readsOf({ tools: [search] }, [search]), 8 * 20_000);
    const code = { type: 'code_execution_20250825', name: 'code_execution' };
    assert.equal(readsOf({ tools: [code] }, [code]), 10 * 20_000);
    const fetchCapped = { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 3, max_content_tokens: 5000 };
    assert.equal(readsOf({ tools: [fetchCapped] }, [fetchCapped]), 3 * 5000);
    const fetchWhole = { type: 'web_fetch_20250910', name: 'web_fetch' };
    assert.equal(readsOf({ tools: [fetchWhole] }, [fetchWhole]), 10 * 300_000);
    const both = [search, fetchCapped];
    assert.equal(readsOf({ tools: both }, both), 8 * 20_000 + 3 * 5000);
  });

  test('a max_uses or max_content_tokens that is not a positive integer counts as absent; huge ones stay a safe integer', () => {
    const odd = { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 0, max_content_tokens: 'many' };
    assert.equal(readsOf({ tools: [odd] }, [odd]), 10 * 300_000);
    const huge = { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: Number.MAX_SAFE_INTEGER, max_content_tokens: Number.MAX_SAFE_INTEGER };
    const reads = readsOf({ tools: [huge] }, [huge]);
    assert.equal(reads, 10_000 * 300_000);
    assert.ok(Number.isSafeInteger(reads));
  });
});
