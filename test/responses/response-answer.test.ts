import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../src/chat/types.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { generateResponseId, outputItemId, responseUsageOf, toResponseObject, type ResponseOptions } from '../../src/responses/response-answer.ts';

function completion(
  message: { content?: string | null; refusal?: string | null; tool_calls?: ToolCall[] },
  finishReason: FinishReason | null,
  usage?: Usage,
): ChatCompletion {
  const body: ChatCompletion = {
    id: 'chatcmpl-up',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: message.content ?? null, refusal: message.refusal ?? null, tool_calls: message.tool_calls ?? [] },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
  };
  if (usage !== undefined) body.usage = usage;
  return body;
}

function call(id: string, name: string, args: string): ToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137, prompt_tokens_details: { cached_tokens: 100 } };
/** 1,800,000,000 s and a half: created_at and completed_at are whole seconds. */
const FIXED: ResponseOptions = { id: 'resp_abc', now: () => 1_800_000_000_500 };

const TAIL_DEFAULTS =
  '"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":null,"safety_identifier":null,"store":false,' +
  '"temperature":null,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":null,"truncation":"disabled"';

describe('toResponseObject', () => {
  test('a text answer: exact body bytes, model the alias, usage with cached tokens inside the input, defaults for what the client did not send', () => {
    const body = toResponseObject(completion({ content: 'Hello there.' }, 'stop', USAGE), 'service-code', FIXED);
    assert.equal(
      JSON.stringify(body),
      '{"id":"resp_abc","object":"response","created_at":1800000000,"status":"completed","completed_at":1800000000,"background":false,' +
        '"error":null,"incomplete_details":null,"access_programs":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,' +
        '"model":"service-code","output":[{"id":"msg_abc_0","type":"message","status":"completed",' +
        '"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello there."}],"role":"assistant"}],' +
        TAIL_DEFAULTS +
        ',"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100,"cache_write_tokens":0},' +
        '"output_tokens":17,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":137},"metadata":{}}',
    );
  });

  test('text and tool calls: one message item, then one function_call per call with the upstream id as call_id and its own fc_ id', () => {
    const body = toResponseObject(
      completion({ content: 'Running it.', tool_calls: [call('call_a', 'exec_command', '{"cmd":"ls"}'), call('call_b', 'get_weather', '{"city":"Oslo"}')] }, 'tool_calls'),
      'service-code',
      FIXED,
    );
    assert.equal(body.status, 'completed');
    assert.deepEqual(body.output, [
      { id: 'msg_abc_0', type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Running it.' }], role: 'assistant' },
      { id: 'fc_abc_1', type: 'function_call', status: 'completed', arguments: '{"cmd":"ls"}', call_id: 'call_a', name: 'exec_command' },
      { id: 'fc_abc_2', type: 'function_call', status: 'completed', arguments: '{"city":"Oslo"}', call_id: 'call_b', name: 'get_weather' },
    ]);
    assert.equal(body.usage, undefined, 'no usage from the upstream: none invented');
  });

  test('tool calls only, one without parameters: no message item, "" arguments are {}', () => {
    const body = toResponseObject(completion({ content: null, tool_calls: [call('call_x', 'list_files', '')] }, 'tool_calls'), 'a', FIXED);
    assert.deepEqual(body.output, [{ id: 'fc_abc_0', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'call_x', name: 'list_files' }]);
  });

  test('a function of a namespace tool is named back as the client offered it, with its namespace', () => {
    const functionNames = new Map([['multi_agent_v1__spawn', { name: 'spawn', namespace: 'multi_agent_v1' }]]);
    const body = toResponseObject(completion({ tool_calls: [call('call_n', 'multi_agent_v1__spawn', '{"task":"x"}'), call('call_p', 'plain', '{}')] }, 'tool_calls'), 'a', {
      ...FIXED,
      functionNames,
    });
    assert.equal(
      JSON.stringify(body.output),
      '[{"id":"fc_abc_0","type":"function_call","status":"completed","arguments":"{\\"task\\":\\"x\\"}","call_id":"call_n","name":"spawn","namespace":"multi_agent_v1"},' +
        '{"id":"fc_abc_1","type":"function_call","status":"completed","arguments":"{}","call_id":"call_p","name":"plain"}]',
    );
  });

  test('a refusal is a refusal part of the message, after its text; the response is completed', () => {
    const body = toResponseObject(completion({ content: 'Partly: ', refusal: 'I cannot help with that.' }, 'stop'), 'a', FIXED);
    assert.equal(body.status, 'completed');
    assert.deepEqual(body.output[0], {
      id: 'msg_abc_0',
      type: 'message',
      status: 'completed',
      content: [
        { type: 'output_text', annotations: [], logprobs: [], text: 'Partly: ' },
        { type: 'refusal', refusal: 'I cannot help with that.' },
      ],
      role: 'assistant',
    });
  });

  test('the output limit: incomplete with reason max_output_tokens, the cut message incomplete, no completed_at, usage kept', () => {
    const body = toResponseObject(completion({ content: 'The list: 1, 2,' }, 'length', USAGE), 'a', FIXED);
    assert.equal(body.status, 'incomplete');
    assert.deepEqual(body.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(body.completed_at, null);
    assert.equal(body.output[0]?.status, 'incomplete');
    assert.equal(body.usage?.output_tokens, 17);
  });

  test('a tool call the output limit cut is left out (never arguments "{}"); a whole call before it stays, as does the message before it', () => {
    const body = toResponseObject(
      completion({ content: 'Two calls.', tool_calls: [call('call_a', 'read', '{"path":"a"}'), call('call_b', 'read', '{"path":"b')] }, 'length'),
      'a',
      FIXED,
    );
    assert.equal(body.status, 'incomplete');
    assert.deepEqual(
      body.output.map((item) => [item.type, item.status, item.id]),
      [
        ['message', 'completed', 'msg_abc_0'],
        ['function_call', 'completed', 'fc_abc_1'],
      ],
    );
    const cutEmpty = toResponseObject(completion({ tool_calls: [call('call_c', 'read', '')] }, 'length'), 'a', FIXED);
    assert.deepEqual(cutEmpty.output, [], 'a call cut before any argument is left out too');
  });

  test('the upstream filter: incomplete with reason content_filter', () => {
    const body = toResponseObject(completion({ content: 'Sure, here' }, 'content_filter'), 'a', FIXED);
    assert.equal(body.status, 'incomplete');
    assert.deepEqual(body.incomplete_details, { reason: 'content_filter' });
    assert.equal(body.output[0]?.status, 'incomplete');
  });

  test('an empty answer: no output items, completed; no finish reason counts as complete', () => {
    for (const reason of ['stop', null] as const) {
      const body = toResponseObject(completion({ content: '' }, reason), 'a', FIXED);
      assert.deepEqual(body.output, []);
      assert.equal(body.status, 'completed');
    }
  });

  test('arguments that are not a JSON object are the upstream fault: 502 naming where', () => {
    const cases: Array<[string, string]> = [
      ['{"cmd":', 'are not valid JSON'],
      ['[1,2]', 'are not a JSON object'],
      ['"ls"', 'are not a JSON object'],
      ['null', 'are not a JSON object'],
    ];
    for (const [args, what] of cases) {
      assert.throws(
        () => toResponseObject(completion({ tool_calls: [call('call_ok', 'f', '{}'), call('call_bad', 'f', args)] }, 'tool_calls'), 'a', FIXED),
        (error: unknown) => {
          assert.ok(error instanceof UpstreamError);
          assert.equal(error.status, 502);
          assert.equal(error.code, 'bad_upstream_response');
          assert.equal(
            error.message,
            `The upstream provider returned tool call arguments that ${what} (at choices[0].message.tool_calls[1].function.arguments); a function_call's arguments must be a JSON object.`,
          );
          return true;
        },
        args,
      );
    }
  });

  test('the echo: what the client sent is said back; store stays false', () => {
    const body = toResponseObject(completion({ content: 'ok' }, 'stop'), 'service-code', {
      ...FIXED,
      createdAt: 1_799_999_990,
      echo: {
        instructions: 'Be brief.',
        tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' }, strict: false }],
        tool_choice: 'required',
        parallel_tool_calls: false,
        temperature: 0.2,
        top_p: 0.9,
        max_output_tokens: 512,
        text: { format: { type: 'json_object' }, verbosity: 'low' },
        reasoning: { effort: 'low', summary: 'auto' },
        metadata: { run: '7' },
        prompt_cache_key: 'k1',
        safety_identifier: 'u-hash',
        truncation: 'auto',
        user: 'alice',
      },
    });
    assert.equal(
      JSON.stringify(body),
      '{"id":"resp_abc","object":"response","created_at":1799999990,"status":"completed","completed_at":1800000000,"background":false,' +
        '"error":null,"incomplete_details":null,"access_programs":null,"instructions":"Be brief.","max_output_tokens":512,"max_tool_calls":null,' +
        '"model":"service-code","output":[{"id":"msg_abc_0","type":"message","status":"completed",' +
        '"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"ok"}],"role":"assistant"}],' +
        '"parallel_tool_calls":false,"previous_response_id":null,"prompt_cache_key":"k1","reasoning":{"effort":"low","summary":"auto"},' +
        '"safety_identifier":"u-hash","store":false,"temperature":0.2,"text":{"format":{"type":"json_object"},"verbosity":"low"},' +
        '"tool_choice":"required","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"},"strict":false}],' +
        '"top_p":0.9,"truncation":"auto","user":"alice","metadata":{"run":"7"}}',
    );
  });
});

describe('ids and usage', () => {
  test('generateResponseId: resp_ and 48 hex digits, different each time', () => {
    const a = generateResponseId();
    assert.match(a, /^resp_[0-9a-f]{48}$/);
    assert.notEqual(a, generateResponseId());
  });

  test('outputItemId: the prefix, the response id random part, the output index', () => {
    assert.equal(outputItemId('msg', 'resp_0123', 0), 'msg_0123_0');
    assert.equal(outputItemId('fc', 'resp_0123', 12), 'fc_0123_12');
    assert.equal(outputItemId('fc', 'custom', 1), 'fc_custom_1');
  });

  test('responseUsageOf: cached tokens never exceed the input', () => {
    assert.deepEqual(responseUsageOf({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_tokens_details: { cached_tokens: 9 } }), {
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 6,
    });
  });
});
