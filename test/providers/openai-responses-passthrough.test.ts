// A Responses client's own request at an OpenAI-compatible provider in
// passthrough mode: the exact URL, body and headers the upstream receives,
// what the provider refuses before any call, and the answer and events relayed
// whole beside their translation; a chat request there, and a Responses
// request at a provider in translate mode, as before.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rawAnswer, rawErrorEvent, rawEvent } from '../../src/chat/messages-origin.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible.ts';
import { ResponsesMode } from '../../src/config/provider-defaults.ts';
import { createNodeTransport } from '../../src/upstream/node-transport.ts';
import { collect } from '../support/collect.ts';
import { API_KEY, call, completionBody, json, providerFor, startEventStream, streamText } from './openai-compatible-fixtures.ts';
import { CODEX_BODY, eventStreamText, origin, originCall, originRequest, RICH_ANSWER, RICH_EVENTS, UNTRANSLATABLE } from './responses-origin-fixtures.ts';
import { failure, rendered, useFakeUpstream } from './provider-fixtures.ts';
import type { DrivenProvider } from '../support/drive-provider.ts';

const upstream = useFakeUpstream();
const passthrough = (options: Partial<OpenAICompatibleOptions> = {}): DrivenProvider => providerFor(upstream, { responses: 'passthrough', ...options });

function answerWith(body: unknown): void {
  upstream.handle = (_req, res) => json(res, 200, body);
}

function streamWith(text: string): void {
  upstream.handle = (_req, res) => {
    startEventStream(res);
    res.end(text);
  };
}

/** CODEX_BODY as the upstream must receive it: fields replaced in place, stream as the exchange says. */
function expectedBody(stream: boolean, changes: Record<string, unknown> = {}): string {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(CODEX_BODY)) {
    if (key === 'stream' && !stream) continue;
    body[key] = key in changes ? changes[key] : value;
  }
  return JSON.stringify(body);
}

/** The translated chunks the carriers hold, in order. */
function translatedOf(chunks: readonly ChatCompletionChunk[]): ChatCompletionChunk[] {
  return chunks.flatMap((c) => rawEvent(c)?.translated ?? []);
}

describe('the request a Responses upstream receives', () => {
  test('streamed: POST /v1/responses, the client body byte for byte in its key order, with the upstream model and the capped max_output_tokens', async () => {
    streamWith(eventStreamText(RICH_EVENTS));
    await collect(passthrough().stream(originCall(origin())));
    assert.equal(upstream.received.length, 1);
    const received = upstream.received[0];
    assert.equal(received?.method, 'POST');
    assert.equal(received?.url, '/v1/responses');
    assert.equal(received?.text, expectedBody(true, { model: 'gpt-upstream', max_output_tokens: 32000 }));
    assert.equal(received?.headers['authorization'], `Bearer ${API_KEY}`);
    assert.equal(received?.headers['content-type'], 'application/json');
    assert.equal(received?.headers['accept'], 'text/event-stream');
    assert.equal(received?.headers['x-request-id'], 'req_resp-1');
  });

  test('not streamed: stream and stream_options left out, store forced false in place, max_completion_tokens as the cap', async () => {
    const body = { model: 'service-code', store: true, input: 'Hi', stream: true, stream_options: { include_obfuscation: false }, max_output_tokens: 50000 };
    answerWith(RICH_ANSWER);
    await passthrough().complete(originCall(origin({ body }), { max_tokens: undefined, max_completion_tokens: 2048, stream: false }));
    assert.equal(upstream.received[0]?.headers['accept'], 'application/json');
    assert.equal(upstream.received[0]?.text, '{"model":"gpt-upstream","store":false,"input":"Hi","max_output_tokens":2048}');
  });

  test('a body without max_output_tokens, store or stream gets them at its end', async () => {
    streamWith(eventStreamText(RICH_EVENTS));
    await collect(passthrough().stream(originCall(origin({ body: { model: 'a', input: 'Hi' } }), { max_tokens: 4096 })));
    assert.equal(upstream.received[0]?.text, '{"model":"gpt-upstream","input":"Hi","max_output_tokens":4096,"store":false,"stream":true}');
  });

  test('a request that reasons asks for the encrypted reasoning (store is false upstream); one that does not is left as sent', async () => {
    answerWith(RICH_ANSWER);
    const complete = (body: Record<string, unknown>) => passthrough().complete(originCall(origin({ body }), { max_tokens: 100, stream: false }));
    await complete({ model: 'a', input: 'Hi', reasoning: { effort: 'low' }, include: [] });
    assert.deepEqual(JSON.parse(upstream.received[0]!.text).include, ['reasoning.encrypted_content']);
    await complete({ model: 'a', input: [{ role: 'user', content: 'Hi' }, { type: 'reasoning', id: 'rs_1', summary: [] }] });
    assert.deepEqual(JSON.parse(upstream.received[1]!.text).include, ['reasoning.encrypted_content']);
    await complete({ model: 'a', input: 'Hi', reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content', 'message.output_text.logprobs'] });
    assert.deepEqual(JSON.parse(upstream.received[2]!.text).include, ['reasoning.encrypted_content', 'message.output_text.logprobs']);
    await complete({ model: 'a', input: 'Hi' });
    assert.equal('include' in JSON.parse(upstream.received[3]!.text), false);
  });

  test('Azure: the query stays after /responses and the key goes in api-key alone', async () => {
    answerWith(RICH_ANSWER);
    const azure = providerFor(upstream, { baseUrl: `${upstream.baseUrl}/openai/v1?api-version=preview`, apiKeyHeader: 'api-key', responses: 'passthrough' });
    await azure.complete(originCall(origin(), { stream: false }));
    const received = upstream.received[0];
    assert.equal(received?.url, '/v1/openai/v1/responses?api-version=preview');
    assert.equal(received?.headers['api-key'], API_KEY);
    assert.equal(received?.headers['authorization'], undefined);
  });

  test('an extra field the provider allows goes as the client sent it', async () => {
    const body = { model: 'm', beta_knob: { 'x-codex-window': '1' }, input: 'Hi' };
    answerWith(RICH_ANSWER);
    await passthrough({ responsesPassthrough: ['beta_knob'] }).complete(originCall(origin({ body, extraFields: ['beta_knob'] }), { stream: false }));
    assert.equal(upstream.received[0]?.text, '{"model":"gpt-upstream","beta_knob":{"x-codex-window":"1"},"input":"Hi","max_output_tokens":32000,"store":false}');
  });

  test('an extra field the provider does not allow: the 400 naming it and the setting, before any call', async () => {
    const driven = passthrough({ responsesPassthrough: ['other'] });
    const request = originCall(origin({ body: { ...CODEX_BODY, beta_knob: {} }, extraFields: ['beta_knob'] }));
    const expected = {
      status: 400,
      body: {
        error: {
          message:
            "Unknown parameter: 'beta_knob'. The provider behind this model alias does not accept it; an operator allows it by adding \"beta_knob\" to responsesPassthrough of the OpenAI provider in the gateway's config.",
          type: 'invalid_request_error',
          param: 'beta_knob',
          code: 'unknown_parameter',
        },
      },
      headers: {},
    };
    assert.deepEqual(rendered(driven.provider.refusal?.(request.request)), expected);
    assert.deepEqual(rendered(await failure(driven.complete(request))), expected);
    assert.equal(upstream.received.length, 0);
  });

  test('an untranslatable origin is no refusal here: the upstream takes the client body', () => {
    assert.equal(passthrough().provider.refusal?.(originCall(origin({ untranslatable: UNTRANSLATABLE })).request), null);
  });
});

describe('the answer relayed', () => {
  test('not streamed: the upstream JSON rides whole on the completion beside its translation for counting', async () => {
    answerWith(RICH_ANSWER);
    const completion = await passthrough().complete(originCall(origin(), { stream: false }));
    assert.deepEqual(rawAnswer(completion), RICH_ANSWER);
    // JSON: the completion as the gateway's chat shape, without the symbol-keyed raw answer.
    assert.deepEqual(JSON.parse(JSON.stringify(completion)), {
      id: 'resp_01rich',
      object: 'chat.completion',
      created: 1764000000,
      model: 'gpt-5.1-codex-2026',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Let me look.', refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls -a"}' } }] },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 40 } },
    });
  });

  test('an answer cut by the output cap finishes with length', async () => {
    answerWith({ ...RICH_ANSWER, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [RICH_ANSWER.output[2]] });
    const completion = await passthrough().complete(originCall(origin(), { stream: false }));
    assert.equal(completion.choices[0]?.finish_reason, 'length');
    assert.equal(completion.choices[0]?.message.content, 'Let me look.');
  });

  test('a malformed count is the upstream 502, naming the path', async () => {
    answerWith({ ...RICH_ANSWER, usage: { input_tokens: '12' } });
    assert.deepEqual(rendered(await failure(passthrough().complete(originCall(origin(), { stream: false })))), {
      status: 502,
      body: { error: { message: 'The upstream provider returned a malformed response (at usage.input_tokens).', type: 'upstream_error', param: null, code: 'bad_upstream_response' } },
      headers: {},
    });
  });

  test('streamed: one carrier per event, its data exactly as received, reasoning and hosted-tool events included; [DONE] is no event', async () => {
    streamWith(`${eventStreamText(RICH_EVENTS)}data: [DONE]\n\n`);
    const chunks = await collect(passthrough().stream(originCall(origin())));
    assert.deepEqual(
      chunks.map((c) => ({ event: rawEvent(c)?.event, data: rawEvent(c)?.data, choices: c.choices })),
      RICH_EVENTS.map((e) => ({ event: e.event, data: e.data, choices: [] })),
    );
  });

  test('streamed: what the events say, in chat chunks (text, the function call, the finish and the usage)', async () => {
    streamWith(eventStreamText(RICH_EVENTS));
    const chunks = translatedOf(await collect(passthrough().stream(originCall(origin()))));
    const head = { id: 'resp_02', object: 'chat.completion.chunk', created: 1764000001, model: 'gpt-5.1-codex-2026' };
    const delta = (d: object, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta: d, finish_reason: finish }] });
    assert.deepEqual(chunks, [
      delta({ role: 'assistant', content: '' }),
      delta({ content: 'Let me ' }),
      delta({ content: 'look. ✓' }),
      delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"cmd":' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '"ls -a"}' } }] }),
      delta({}, 'tool_calls'),
      { ...head, choices: [], usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 40 } } },
    ]);
  });

  test('streamed without event fields: each carrier is named by its data type', async () => {
    streamWith(RICH_EVENTS.map((e) => `data: ${e.data}\n\n`).join(''));
    const chunks = await collect(passthrough().stream(originCall(origin())));
    assert.deepEqual(
      chunks.map((c) => rawEvent(c)?.event),
      RICH_EVENTS.map((e) => e.event),
    );
  });

  test('not streamed, a failed response is the upstream 502 with its message', async () => {
    answerWith({ ...RICH_ANSWER, status: 'failed', output: [], error: { code: 'server_error', message: 'The model failed.' } });
    assert.deepEqual(rendered(await failure(passthrough().complete(originCall(origin(), { stream: false })))).body, {
      error: { message: 'The model failed.', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
  });

  test('response.failed: the upstream 502 with its message, the event riding on the error as it came', async () => {
    const failed = JSON.stringify({ type: 'response.failed', sequence_number: 2, response: { id: 'resp_02', status: 'failed', error: { code: 'server_error', message: 'The model failed.' } } });
    streamWith(`${eventStreamText(RICH_EVENTS.slice(0, 2))}event: response.failed\ndata: ${failed}\n\n`);
    const error = await failure(collect(passthrough().stream(originCall(origin()))));
    assert.deepEqual(rendered(error).body, { error: { message: 'The model failed.', type: 'upstream_error', param: null, code: 'upstream_error' } });
    assert.deepEqual(rawErrorEvent(error), { event: 'response.failed', data: failed, translated: [] });
  });

  test('a stream that ends before response.completed is truncated', async () => {
    streamWith(eventStreamText(RICH_EVENTS.slice(0, -1)));
    const { status, body } = rendered(await failure(collect(passthrough().stream(originCall(origin())))));
    assert.deepEqual({ status, code: (body as { error: { code: string } }).error.code }, { status: 502, code: 'upstream_stream_truncated' });
  });
});

describe('requests without a Responses origin, and translate mode', () => {
  test('a chat request at a passthrough provider goes to /chat/completions exactly as before', async () => {
    answerWith(completionBody());
    const completion = await passthrough().complete(call());
    assert.equal(upstream.received[0]?.url, '/v1/chat/completions');
    assert.equal(upstream.received[0]?.text, '{"model":"upstream-model","messages":[{"role":"user","content":"Hello"}],"max_tokens":64}');
    assert.equal(rawAnswer(completion), undefined);
    assert.equal(passthrough().provider.refusal?.(call().request), null);
  });

  test('the node transport: chat and Responses requests in turn each reach their own endpoint', async () => {
    const driven = passthrough({ transport: createNodeTransport() });
    upstream.handle = (req, res) => json(res, 200, req.url === '/v1/responses' ? RICH_ANSWER : completionBody());
    await driven.complete(call());
    await driven.complete(originCall(origin(), { stream: false }));
    await driven.complete(call());
    assert.deepEqual(
      upstream.received.map((r) => r.url),
      ['/v1/chat/completions', '/v1/responses', '/v1/chat/completions'],
    );
  });

  test('a streamed chat request at a passthrough provider is decoded as chat chunks', async () => {
    streamWith(streamText());
    const chunks = await collect(passthrough().stream(call({ stream: true })));
    assert.equal(upstream.received[0]?.url, '/v1/chat/completions');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'héllo wörld 😀\nnext line');
  });

  test('translate (the default): the Responses request goes as the chat translation; what that cannot say is refused', async () => {
    const translate = providerFor(upstream);
    answerWith(completionBody());
    const completion = await translate.complete(originCall(origin(), { stream: false }));
    assert.equal(upstream.received[0]?.url, '/v1/chat/completions');
    assert.equal(upstream.received[0]?.text, '{"model":"gpt-upstream","messages":[{"role":"user","content":"List the files."}],"max_tokens":32000,"stream":false}');
    assert.equal(rawAnswer(completion), undefined);
    assert.equal(translate.provider.refusal?.(originCall(origin({ untranslatable: UNTRANSLATABLE })).request), UNTRANSLATABLE);
  });
});

describe("the upstream's account: hosted tools the operator lists, and no stored references", () => {
  const refusalOf = (body: Record<string, unknown>, hostedTools?: string[]) => {
    const provider = createOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1', responses: ResponsesMode.Passthrough, responsesPassthrough: [], ...(hostedTools === undefined ? {} : { responsesHostedTools: hostedTools }) });
    return provider.refusal?.(originRequest(origin({ body: { model: 'a', ...body } }), { max_tokens: 100 })) ?? null;
  };

  test('web_search goes by default; file_search, code_interpreter, mcp need the operator; client-run tools go', () => {
    assert.equal(refusalOf({ input: 'hi', tools: [{ type: 'web_search' }, { type: 'function', name: 'f', parameters: {} }, { type: 'shell' }] }), null);
    const refused = refusalOf({ input: 'hi', tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs_1'] }] });
    assert.equal(refused?.param, 'tools[1].type');
    assert.equal(
      refused?.message,
      `The tool 'file_search' runs in the upstream's account, billed there per use and outside this key's usage; the provider behind this model alias does not allow it. An operator allows it by adding "file_search" to responsesHostedTools of the OpenAI provider in the gateway's config.`,
    );
    assert.equal(refusalOf({ input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, ['file_search']), null);
    assert.equal(refusalOf({ input: 'hi', tools: [{ type: 'web_search' }] }, [])?.param, 'tools[0].type');
  });

  test('a file by file_id, a stored prompt, an existing container: refused naming the path', () => {
    const file = refusalOf({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_file', file_id: 'file_1' }] }] });
    assert.equal(file?.param, 'input[0].content[1].file_id');
    assert.match(file?.message ?? '', /which every key sharing that account could use/);
    assert.equal(refusalOf({ input: 'hi', prompt: { id: 'pmpt_1' } })?.param, 'prompt');
    assert.equal(refusalOf({ input: 'hi', tools: [{ type: 'code_interpreter', container: 'cntr_1' }] }, ['code_interpreter'])?.param, 'tools[0].container');
    assert.equal(refusalOf({ input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, ['code_interpreter']), null);
  });
});
