import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { measurePrompt, promptBoundOf } from '../../src/chat/request-prompt-bound.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { validateResponsesRequest } from '../../src/responses/response-request-validator.ts';
import { toChatRequest, type ChatTranslation } from '../../src/responses/response-to-chat.ts';
import { capturedRequest, capturedRequestNames } from './captured-requests.ts';

/** Validated first, as the gateway does: the translation only ever sees valid requests (here with an operator's x_extra). */
function translate(extra: Record<string, unknown>): ChatTranslation {
  return toChatRequest(validateResponsesRequest({ model: 'service-chat', ...extra }, { extraFields: new Set(['x_extra', 'service_tier']) }));
}

function refusal(param: string, what: string): { status: number; code: string; param: string; message: string } {
  return {
    status: 400,
    code: 'unsupported_parameter',
    param,
    message: `'${param}': ${what} has no equivalent in OpenAI's chat completions, so no upstream of this model that speaks only chat completions can take the request; only one speaking the Responses API can. Remove it, or use a model served by a provider speaking Responses.`,
  };
}

function assertUntranslatable(extra: Record<string, unknown>, param: string, what: string): ChatTranslation {
  const translation = translate(extra);
  const error = translation.untranslatable;
  assert.ok(error instanceof InvalidRequestError, 'expected the request to be untranslatable');
  assert.deepEqual({ status: error.status, code: error.code, param: error.param, message: error.message }, refusal(param, what));
  return translation;
}

/** The translation as JSON (what is sent), asserting it says everything. */
function chatOf(extra: Record<string, unknown>): unknown {
  const { request, untranslatable } = translate(extra);
  assert.equal(untranslatable, null);
  return JSON.parse(JSON.stringify(request));
}

const WEATHER = { type: 'function', name: 'weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true };
const WEATHER_CHAT = { type: 'function', function: { name: 'weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } };

describe('toChatRequest: real clients', () => {
  for (const name of capturedRequestNames()) {
    test(`${name} translates whole`, () => {
      const { untranslatable, leftOutTools } = toChatRequest(validateResponsesRequest(capturedRequest(name).body, { extraFields: new Set() }));
      assert.equal(untranslatable, null);
      assert.deepEqual(leftOutTools, name.startsWith('codex') ? ['web_search'] : []);
    });
  }

  test("Codex's tool round trip: one system message, the call and its output with the same id, the namespace as plain functions", () => {
    const { request, namespacedTools, leftOutTools } = toChatRequest(validateResponsesRequest(capturedRequest('codex-exec-tool-output.json').body, { extraFields: new Set() }));
    assert.deepEqual(
      request.messages.map((m) => [m.role, typeof m.content === 'string' ? 'text' : Array.isArray(m.content) ? `${m.content.length} parts` : null]),
      [
        ['system', '3 parts'],
        ['user', 'text'],
        ['user', 'text'],
        ['assistant', null],
        ['tool', 'text'],
      ],
    );
    assert.deepEqual(request.messages[3], { role: 'assistant', content: null, tool_calls: [{ id: 'call_capture2', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"cat notes.txt"}' } }] });
    assert.equal(request.messages[4]?.tool_call_id, 'call_capture2');
    assert.match(request.messages[4]?.content as string, /^Chunk ID: [0-9a-f]+\n[\s\S]*Output:\nThe drawbridge is up\.\n$/);
    assert.deepEqual(
      request.tools?.map((tool) => tool.function.name),
      ['exec_command', 'write_stdin', 'request_user_input', 'view_image', 'multi_agent_v1__close_agent', 'multi_agent_v1__resume_agent', 'multi_agent_v1__send_input', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__wait_agent', 'get_goal', 'create_goal', 'update_goal'],
    );
    assert.deepEqual(namespacedTools.get('multi_agent_v1__spawn_agent'), { namespace: 'multi_agent_v1', name: 'spawn_agent' });
    assert.equal(namespacedTools.size, 5);
    assert.deepEqual(leftOutTools, ['web_search']);
    // The prompt bound counts the tool left out by its JSON.
    const webSearch = (capturedRequest('codex-exec-tool-output.json').body['tools'] as unknown[]).at(-1);
    assert.deepEqual(webSearch, { type: 'web_search', external_web_access: true });
    assert.equal(promptBoundOf(request).tokens, measurePrompt(request).tokens + Buffer.byteLength(JSON.stringify(webSearch)));
    assert.deepEqual(
      { tool_choice: request.tool_choice, parallel: request.parallel_tool_calls, stream: request.stream, options: request.stream_options, max: request.max_tokens, store: request.store, key: request.prompt_cache_key },
      { tool_choice: 'auto', parallel: true, stream: true, options: { include_usage: true }, max: undefined, store: undefined, key: undefined },
    );
  });
});

describe('toChatRequest: the table by example', () => {
  test('input as a string, instructions: a system message, then the user message', () => {
    assert.deepEqual(chatOf({ input: 'say hi', instructions: 'Be brief.' }), {
      model: 'service-chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'say hi' },
      ],
    });
  });

  test('instructions, then every system and developer message in order: ONE leading system message', () => {
    assert.deepEqual(
      chatOf({
        instructions: 'First.',
        input: [
          { role: 'developer', content: 'Second.' },
          { role: 'user', content: 'Hi' },
          { role: 'system', content: [{ type: 'input_text', text: 'Third.' }] },
          { role: 'assistant', content: 'Hello' },
        ],
      }),
      {
        model: 'service-chat',
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'First.' }, { type: 'text', text: 'Second.' }, { type: 'text', text: 'Third.' }] },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
        ],
      },
    );
  });

  test('input_image by URL -> image_url (detail kept but "original"); text parts stay parts beside it', () => {
    assert.deepEqual(
      chatOf({
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is this?' },
              { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'original' },
            ],
          },
        ],
      }),
      {
        model: 'service-chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
        ],
      },
    );
  });

  test('an assistant message echoed back: output_text -> content, refusal -> refusal, annotations left', () => {
    assert.deepEqual(
      chatOf({
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hel', annotations: [{ type: 'url_citation' }] }, { type: 'output_text', text: 'lo' }] },
          { type: 'message', id: 'msg_2', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
          { role: 'user', content: 'Why?' },
        ],
      }),
      {
        model: 'service-chat',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'assistant', content: null, refusal: 'No.' },
          { role: 'user', content: 'Why?' },
        ],
      },
    );
  });

  test('function calls join the assistant message before them, with their call ids; outputs become tool messages', () => {
    assert.deepEqual(
      chatOf({
        tools: [WEATHER],
        input: [
          { role: 'user', content: 'Weather in Oslo and Bergen?' },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two cities.' }] },
          { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'weather', arguments: '{"city":"Bergen"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
          { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'Rain' }, { type: 'input_text', text: 'Wind' }] },
          { type: 'function_call', call_id: 'call_3', name: 'weather', arguments: '{"city":"Tromsø"}' },
        ],
      }),
      {
        model: 'service-chat',
        messages: [
          { role: 'user', content: 'Weather in Oslo and Bergen?' },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
              { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
          { role: 'tool', tool_call_id: 'call_2', content: 'Rain\nWind' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'weather', arguments: '{"city":"Tromsø"}' } }] },
        ],
        tools: [WEATHER_CHAT],
      },
    );
  });

  test("text after the turn's function calls (a streamed answer's trailing text) joins their assistant message, before the tool messages", () => {
    assert.deepEqual(
      chatOf({
        tools: [WEATHER],
        input: [
          { role: 'user', content: 'Weather in Oslo?' },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: '\n\n' }] },
          { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
        ],
      }) as { messages: unknown },
      {
        model: 'service-chat',
        tools: [WEATHER_CHAT],
        messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
        ],
      },
    );
  });

  test("a function output's images follow its tool messages as a user message", () => {
    assert.deepEqual(
      chatOf({
        input: [
          { type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"a.png"}' },
          { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
          { role: 'user', content: 'And?' },
        ],
      }),
      {
        model: 'service-chat',
        messages: [
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'view_image', arguments: '{"path":"a.png"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
          { role: 'user', content: 'And?' },
        ],
      },
    );
  });

  test('a reasoning item of plain summaries is left out (never into the text), and counted in the prompt bound', () => {
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'I thought hard.' }], encrypted_content: null };
    const { request, untranslatable } = translate({ input: [{ role: 'user', content: 'Hi' }, reasoning, { role: 'assistant', content: 'Hello' }] });
    assert.equal(untranslatable, null);
    assert.deepEqual(request.messages, [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
    assert.equal(promptBoundOf(request).tokens, measurePrompt(request).tokens + Buffer.byteLength(JSON.stringify(reasoning)));
  });

  test('max_output_tokens -> max_tokens; temperature and top_p; reasoning.effort -> reasoning_effort; stream -> stream with usage', () => {
    assert.deepEqual(chatOf({ input: 'Hi', max_output_tokens: 500, temperature: 0.2, top_p: 0.9, reasoning: { effort: 'low', summary: 'auto' }, stream: true }), {
      model: 'service-chat',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      reasoning_effort: 'low',
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.deepEqual(chatOf({ input: 'Hi', stream: false, max_output_tokens: null, temperature: null }), { model: 'service-chat', messages: [{ role: 'user', content: 'Hi' }] });
  });

  test('text.format json_schema -> response_format json_schema; json_object; text says nothing', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    assert.deepEqual((chatOf({ input: 'Hi', text: { format: { type: 'json_schema', name: 'answer', description: 'An answer', schema, strict: true }, verbosity: 'low' } }) as Record<string, unknown>)['response_format'], {
      type: 'json_schema',
      json_schema: { name: 'answer', schema, description: 'An answer', strict: true },
    });
    assert.deepEqual((chatOf({ input: 'Hi', text: { format: { type: 'json_schema', name: 'answer', schema, strict: null } } }) as Record<string, unknown>)['response_format'], { type: 'json_schema', json_schema: { name: 'answer', schema } });
    assert.deepEqual((chatOf({ input: 'Hi', text: { format: { type: 'json_object' } } }) as Record<string, unknown>)['response_format'], { type: 'json_object' });
    assert.equal((chatOf({ input: 'Hi', text: { format: { type: 'text' } } }) as Record<string, unknown>)['response_format'], undefined);
  });

  test('dropped on purpose: nothing of them reaches the chat request, and the request is translatable', () => {
    assert.deepEqual(
      chatOf({
        input: 'Hi',
        store: true,
        include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
        stream_options: { include_obfuscation: false },
        metadata: { a: 'b' },
        client_metadata: { session_id: 's' },
        user: 'u',
        safety_identifier: 'h',
        prompt_cache_key: 'k',
        prompt_cache_retention: '24h',
        prompt_cache_options: { mode: 'implicit', ttl: '30m' },
        service_tier: 'flex',
        truncation: 'auto',
        context_management: [{ type: 'compaction', compact_threshold: 1000 }],
        max_tool_calls: 3,
        top_logprobs: 5,
        image: { context_compression: 'auto' },
        background: false,
        previous_response_id: null,
        reasoning: { summary: 'detailed', generate_summary: 'auto', context: 'all_turns', mode: 'standard' },
        text: { verbosity: 'high' },
        parallel_tool_calls: true,
      }),
      { model: 'service-chat', messages: [{ role: 'user', content: 'Hi' }] },
    );
  });
});

describe('toChatRequest: tools offered', () => {
  test('hosted and custom tools and deferred functions are left out of the offer, and named', () => {
    const { request, untranslatable, leftOutTools } = translate({
      input: 'Hi',
      tools: [
        { type: 'web_search' },
        WEATHER,
        { type: 'file_search', vector_store_ids: ['vs_1'] },
        { type: 'custom', name: 'apply_patch', format: { type: 'text' } },
        { ...WEATHER, name: 'later', defer_loading: true },
        { type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'custom', name: 'raw' }, { type: 'function', name: 'cooked', parameters: null, strict: null }] },
      ],
    });
    assert.equal(untranslatable, null);
    assert.deepEqual(leftOutTools, ['web_search', 'file_search', 'apply_patch', 'later', 'ns.raw']);
    assert.deepEqual(request.tools, [WEATHER_CHAT, { type: 'function', function: { name: 'ns__cooked' } }]);
  });

  test('with every tool left out, tools and tool_choice auto say nothing; parallel_tool_calls goes too', () => {
    assert.deepEqual(chatOf({ input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: false }), { model: 'service-chat', messages: [{ role: 'user', content: 'Hi' }] });
    assertUntranslatable({ input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: 'required' }, 'tool_choice', "tool_choice 'required' without a function tool to call (every tool offered is left out)");
  });

  test("a namespace's function calls in the input take the offered function's name", () => {
    const { request, namespacedTools } = translate({
      tools: [{ type: 'namespace', name: 'crm', description: 'CRM', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }] }],
      input: [
        { role: 'user', content: 'Find Ada' },
        { type: 'function_call', call_id: 'call_1', namespace: 'crm', name: 'lookup', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'Ada Lovelace' },
      ],
    });
    assert.equal(request.messages[1]?.tool_calls?.[0]?.function.name, 'crm__lookup');
    assert.deepEqual(request.tools, [{ type: 'function', function: { name: 'crm__lookup', parameters: { type: 'object' } } }]);
    assert.deepEqual([...namespacedTools], [['crm__lookup', { namespace: 'crm', name: 'lookup' }]]);
  });

  test('namespaced names never collide with a plain one, and keep to 64 letters, digits, _ and -', () => {
    const long = 'n'.repeat(61);
    const { request, namespacedTools } = translate({
      input: [{ role: 'user', content: 'Hi' }, { type: 'function_call', call_id: 'c0', name: 'a__b', arguments: '{}' }],
      tools: [
        { type: 'function', name: 'crm__lookup', parameters: null },
        { type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'lookup' }] },
        { type: 'namespace', name: 'a', description: 'd', tools: [{ type: 'function', name: 'b' }] },
        { type: 'namespace', name: long, description: 'd', tools: [{ type: 'function', name: 'fn' }] },
        { type: 'namespace', name: 'mcp.server', description: 'd', tools: [{ type: 'function', name: 'x' }] },
      ],
    });
    const names = request.tools?.map((tool) => tool.function.name) ?? [];
    assert.equal(names.length, 5);
    assert.equal(new Set(names).size, 5);
    assert.equal(names[0], 'crm__lookup');
    for (const name of names) assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.match(names[1] as string, /^lookup_[0-9a-f]{10}$/);
    assert.match(names[2] as string, /^b_[0-9a-f]{10}$/);
    assert.match(names[3] as string, /^fn_[0-9a-f]{10}$/);
    assert.match(names[4] as string, /^x_[0-9a-f]{10}$/);
    assert.deepEqual(namespacedTools.get(names[1] as string), { namespace: 'crm', name: 'lookup' });
    assert.deepEqual(namespacedTools.get(names[3] as string), { namespace: long, name: 'fn' });
    // The same request again: the same names.
    const again = translate({
      input: [{ role: 'user', content: 'Hi' }, { type: 'function_call', call_id: 'c0', name: 'a__b', arguments: '{}' }],
      tools: [
        { type: 'function', name: 'crm__lookup', parameters: null },
        { type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'lookup' }] },
        { type: 'namespace', name: 'a', description: 'd', tools: [{ type: 'function', name: 'b' }] },
        { type: 'namespace', name: long, description: 'd', tools: [{ type: 'function', name: 'fn' }] },
        { type: 'namespace', name: 'mcp.server', description: 'd', tools: [{ type: 'function', name: 'x' }] },
      ],
    });
    assert.deepEqual(again.request.tools?.map((tool) => tool.function.name), names);
  });

  test('a hashed name already taken gets a counter: the name is the function name, 10 hex digits of SHA-256 of the pair, then _2', () => {
    const hashed = `lookup_${createHash('sha256').update('crm\u0000lookup').digest('hex').slice(0, 10)}`;
    const { request, namespacedTools } = translate({
      input: 'Hi',
      tools: [
        { type: 'function', name: 'crm__lookup' },
        { type: 'function', name: hashed },
        { type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'lookup' }] },
      ],
    });
    assert.deepEqual(request.tools?.map((tool) => tool.function.name), ['crm__lookup', hashed, `${hashed}_2`]);
    assert.deepEqual([...namespacedTools], [[`${hashed}_2`, { namespace: 'crm', name: 'lookup' }]]);
  });

  test('tool_choice: a mode; a function by name; allowed_tools narrows the offer', () => {
    assert.deepEqual((chatOf({ input: 'Hi', tools: [WEATHER], tool_choice: 'required' }) as Record<string, unknown>)['tool_choice'], 'required');
    assert.deepEqual((chatOf({ input: 'Hi', tools: [WEATHER], tool_choice: { type: 'function', name: 'weather' } }) as Record<string, unknown>)['tool_choice'], { type: 'function', function: { name: 'weather' } });
    const clock = { ...WEATHER, name: 'clock' };
    const narrowed = chatOf({ input: 'Hi', tools: [WEATHER, clock, { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'clock' }, { type: 'web_search' }] } }) as Record<string, unknown>;
    assert.deepEqual(narrowed['tools'], [{ type: 'function', function: { ...WEATHER_CHAT.function, name: 'clock' } }]);
    assert.equal(narrowed['tool_choice'], 'required');
    const ns = { type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'lookup' }] };
    assert.deepEqual((chatOf({ input: 'Hi', tools: [ns], tool_choice: { type: 'function', name: 'lookup' } }) as Record<string, unknown>)['tool_choice'], { type: 'function', function: { name: 'crm__lookup' } });
  });

  test('tool_choice that needs a tool left out is untranslatable', () => {
    assertUntranslatable({ input: 'Hi', tools: [{ type: 'file_search', vector_store_ids: ['vs'] }], tool_choice: { type: 'file_search' } }, 'tool_choice', "a tool_choice of type 'file_search' (a tool left out of the offer)");
    assertUntranslatable({ input: 'Hi', tools: [{ ...WEATHER, defer_loading: true }], tool_choice: { type: 'function', name: 'weather' } }, 'tool_choice.name', "a tool_choice naming 'weather', which is left out of the offer");
    assertUntranslatable(
      { input: 'Hi', tools: [WEATHER, { type: 'web_search' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] } },
      'tool_choice.tools',
      "an allowed_tools tool_choice of mode 'required' that allows no function tool offered",
    );
  });
});

describe('toChatRequest: what the conversation holds is never dropped', () => {
  test('a reasoning item carrying encrypted_content', () => {
    assertUntranslatable(
      { input: [{ role: 'user', content: 'Hi' }, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAB' }] },
      'input[1].encrypted_content',
      'a reasoning item with encrypted_content (reasoning only the kind of upstream that made it can read back)',
    );
  });

  test("a hosted tool's call item", () => {
    assertUntranslatable({ input: [{ role: 'user', content: 'Hi' }, { type: 'web_search_call', id: 'ws_1', action: { type: 'search' }, status: 'completed' }] }, 'input[1]', 'a web_search_call item');
    assertUntranslatable({ input: [{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: '*** Begin Patch' }] }, 'input[0]', 'a custom_tool_call item');
  });

  test('an image by file id, and a file', () => {
    const translation = assertUntranslatable({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1', detail: 'auto' }] }] }, 'input[0].content[0].file_id', 'an image by file id (a file uploaded to OpenAI)');
    assert.equal(promptBoundOf(translation.request).imageParts, 1);
    assertUntranslatable({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'input[0].content[0]', 'an input_file part (a file)');
    assertUntranslatable(
      { input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] },
      'input[0].output[0]',
      'an input_file part (a file)',
    );
  });

  test('an image in a developer message', () => {
    assertUntranslatable({ input: [{ role: 'developer', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }, { role: 'user', content: 'Hi' }] }, 'input[0].content[0]', 'an input_image part in a developer message');
  });

  test('a function_call_output without a call_id', () => {
    assertUntranslatable({ input: [{ type: 'function_call_output', output: 'ok' }] }, 'input[0].call_id', 'a function_call_output without a call_id (a tool message needs the id of its call)');
  });
});

describe('toChatRequest: refused', () => {
  test('a request with nothing to answer', () => {
    assertUntranslatable({ input: [] }, 'input', 'a request without input');
    assertUntranslatable({}, 'input', 'a request without input');
  });

  test("reasoning effort 'max'", () => {
    assertUntranslatable({ input: 'Hi', reasoning: { effort: 'max' } }, 'reasoning.effort', "reasoning effort 'max' (chat completions' reasoning_effort goes up to 'xhigh')");
  });

  test('a prompt template, moderation, a prompt-cache warm-up, and a field passed through', () => {
    assertUntranslatable({ input: 'Hi', prompt: { id: 'pmpt_1' } }, 'prompt', 'a prompt template stored at OpenAI');
    assertUntranslatable({ input: 'Hi', moderation: { model: 'omni-moderation-latest' } }, 'moderation', 'moderation run by OpenAI');
    assertUntranslatable({ input: 'Hi', prompt_cache_options: { prewarm: true } }, 'prompt_cache_options.prewarm', 'a prompt-cache warm-up without an answer');
    assertUntranslatable({ input: 'Hi', x_extra: 1 }, 'x_extra', "the field 'x_extra' (passed through for an upstream speaking Responses)");
  });

  test('the first untranslatable thing is the one named', () => {
    assertUntranslatable(
      { input: [{ type: 'web_search_call', id: 'ws_1', action: {}, status: 'completed' }, { type: 'reasoning', id: 'rs', summary: [], encrypted_content: 'x' }], prompt: { id: 'p' } },
      'input[0]',
      'a web_search_call item',
    );
  });
});
