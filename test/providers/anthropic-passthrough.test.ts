// A Messages client's own request at the Anthropic provider: the exact body
// and headers the upstream receives, what the provider refuses before any
// call, and the answer and events relayed whole beside their translation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rawAnswer, rawEvent } from '../../src/chat/messages-origin.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { DEFAULT_ANTHROPIC_BETAS } from '../../src/config/provider-defaults.ts';
import type { AnthropicOptions } from '../../src/providers/anthropic.ts';
import { ProviderKind, type HttpProvider } from '../../src/upstream/provider.ts';
import { collect } from '../support/collect.ts';
import { API_KEY, baseRequest, json, providerFor, startEventStream } from './anthropic-fixtures.ts';
import { eventStreamText, origin, originCall, originRequest, RICH_ANSWER, RICH_EVENTS, CLAUDE_CODE_BODY } from './messages-origin-fixtures.ts';
import { failure, rendered, useFakeUpstream } from './provider-fixtures.ts';
import type { DrivenProvider } from '../support/drive-provider.ts';

// Not the strict fake: Claude Code's body carries fields and blocks its checker does not model.
const upstream = useFakeUpstream();
const provider = (options: Partial<AnthropicOptions> = {}): DrivenProvider => providerFor(upstream, options);
const http = (driven: DrivenProvider): HttpProvider => {
  assert.equal(driven.provider.kind, ProviderKind.Http);
  return driven.provider as HttpProvider;
};

function answerWith(body: unknown): void {
  upstream.handle = (_req, res) => json(res, 200, body);
}

function streamWith(text: string): void {
  upstream.handle = (_req, res) => {
    startEventStream(res);
    res.end(text);
  };
}

/** CLAUDE_CODE_BODY as the upstream must receive it: model and max_tokens replaced in place, stream as the exchange says. */
function expectedBody(stream: boolean, changes: Record<string, unknown> = {}): string {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(CLAUDE_CODE_BODY)) {
    if (key === 'stream' && !stream) continue;
    body[key] = key in changes ? changes[key] : value;
  }
  return JSON.stringify(body);
}

describe('the body an Anthropic upstream receives', () => {
  test('streamed: the client body byte for byte, in its key order, with the upstream model and the clamped max_tokens', async () => {
    streamWith(eventStreamText(RICH_EVENTS));
    await collect(provider().stream(originCall(origin())));
    assert.equal(upstream.received.length, 1);
    assert.equal(upstream.received[0]?.url, '/v1/messages');
    assert.equal(upstream.received[0]?.text, expectedBody(true, { model: 'claude-opus-upstream', max_tokens: 32000 }));
  });

  test('not streamed: stream left out; max_completion_tokens is the cap when that is what the target request carries', async () => {
    answerWith(RICH_ANSWER);
    await provider().complete(originCall(origin(), { max_tokens: undefined, max_completion_tokens: 2048, stream: false }));
    assert.equal(upstream.received[0]?.text, expectedBody(false, { model: 'claude-opus-upstream', max_tokens: 2048 }));
  });

  test('a body without stream gets stream: true at its end when streamed', async () => {
    const body = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };
    streamWith(eventStreamText(RICH_EVENTS));
    await collect(provider().stream(originCall(origin({ body }), { max_tokens: 5 })));
    assert.equal(upstream.received[0]?.text, '{"model":"claude-opus-upstream","max_tokens":5,"messages":[{"role":"user","content":"Hi"}],"stream":true}');
  });

  test('a passthrough field the provider allows goes as the client sent it', async () => {
    const body = { model: 'm', speed: { mode: 'fast' }, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };
    answerWith(RICH_ANSWER);
    await provider({ messagesPassthrough: ['speed'] }).complete(originCall(origin({ body, extraFields: ['speed'] }), { stream: false }));
    assert.equal(upstream.received[0]?.text, '{"model":"claude-opus-upstream","speed":{"mode":"fast"},"max_tokens":32000,"messages":[{"role":"user","content":"Hi"}]}');
  });
});

describe('thinking within the clamped max_tokens', () => {
  const enabled = (budget: number) => ({ ...CLAUDE_CODE_BODY, thinking: { type: 'enabled', budget_tokens: budget } });

  test('a budget at or above the clamped max_tokens is lowered to max_tokens - 1; one below it goes as sent', async () => {
    answerWith(RICH_ANSWER);
    await provider().complete(originCall(origin({ body: enabled(31999) }), { max_tokens: 8192, stream: false }));
    assert.deepEqual(JSON.parse(upstream.received[0]?.text ?? '')['thinking'], { type: 'enabled', budget_tokens: 8191 });
    await provider().complete(originCall(origin({ body: enabled(4000) }), { max_tokens: 8192, stream: false }));
    assert.deepEqual(JSON.parse(upstream.received[1]?.text ?? '')['thinking'], { type: 'enabled', budget_tokens: 4000 });
  });

  test('adaptive and disabled thinking go as sent', async () => {
    answerWith(RICH_ANSWER);
    await provider().complete(originCall(origin({ body: { ...CLAUDE_CODE_BODY, thinking: { type: 'adaptive', display: 'omitted' } } }), { max_tokens: 100, stream: false }));
    assert.deepEqual(JSON.parse(upstream.received[0]?.text ?? '')['thinking'], { type: 'adaptive', display: 'omitted' });
  });

  test("a cap that leaves no room for Anthropic's least budget: the client's 400 naming both, nothing sent", async () => {
    answerWith(RICH_ANSWER);
    const error = await failure(provider().complete(originCall(origin({ body: enabled(2000) }), { max_tokens: 1024, stream: false })));
    assert.deepEqual(rendered(error), {
      status: 400,
      headers: {},
      body: {
        error: {
          message: "thinking.budget_tokens must be below max_tokens, and this model alias caps max_tokens at 1024, which leaves no room for Anthropic's least budget of 1024. Turn thinking off, or ask the gateway's operator to raise the alias's maxOutputTokens.",
          type: 'invalid_request_error',
          param: 'thinking.budget_tokens',
          code: 'invalid_value',
        },
      },
    });
    assert.equal(upstream.received.length, 0);
    // Asked before any call, so routing can try a target with room for it.
    const planned = originRequest(origin({ body: enabled(2000) }), { max_tokens: 1024, stream: false });
    assert.equal(http(provider()).refusal?.(planned)?.param, 'thinking.budget_tokens');
    assert.equal(http(provider()).refusal?.(originRequest(origin({ body: enabled(2000) }), { max_tokens: 1025, stream: false })), null);
  });
});

describe('the headers an Anthropic upstream receives', () => {
  test("the client's anthropic-version; the operator's betas, then the client's allowed ones; the rest named in the notes", async () => {
    streamWith(eventStreamText(RICH_EVENTS));
    const driven = provider({ headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } });
    const o = origin({
      version: '2026-10-21',
      betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'prompt-caching-2024-07-31', 'made-up-2099-01-01', 'claude-code-20250219'],
    });
    const call = originCall(o);
    await collect(driven.stream(call));
    const headers = upstream.received[0]?.headers ?? {};
    assert.equal(headers['anthropic-version'], '2026-10-21');
    assert.equal(headers['anthropic-beta'], 'prompt-caching-2024-07-31,claude-code-20250219,interleaved-thinking-2025-05-14');
    assert.equal(headers['x-api-key'], API_KEY);
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['accept'], 'text/event-stream');
    assert.equal(headers['x-request-id'], 'req_msg-1');
    assert.deepEqual(http(driven).requestNotes?.(call.request), { betasDropped: 'made-up-2099-01-01' });
  });

  test('no client version: the configured one; no client betas: the operator header alone; nothing to note', async () => {
    answerWith(RICH_ANSWER);
    const driven = provider({ version: '2024-01-01', headers: { 'anthropic-beta': 'pdfs-2024-09-25' } });
    const call = originCall(origin(), { stream: false });
    await driven.complete(call);
    const headers = upstream.received[0]?.headers ?? {};
    assert.equal(headers['anthropic-version'], '2024-01-01');
    assert.equal(headers['anthropic-beta'], 'pdfs-2024-09-25');
    assert.equal(http(driven).requestNotes?.(call.request), undefined);
  });

  test('only dropped betas: no anthropic-beta header at all', async () => {
    answerWith(RICH_ANSWER);
    const driven = provider();
    const call = originCall(origin({ betas: ['files-api-2025-04-14', 'x'] }), { stream: false });
    await driven.complete(call);
    assert.equal(upstream.received[0]?.headers['anthropic-beta'], undefined);
    assert.deepEqual(http(driven).requestNotes?.(call.request), { betasDropped: 'files-api-2025-04-14,x' });
  });

  test('["*"] passes every well-formed value; a malformed one is still dropped', async () => {
    answerWith(RICH_ANSWER);
    const driven = provider({ anthropicBetas: ['*'] });
    const call = originCall(origin({ betas: ['new-thing-2027-01-01', 'bad;value'] }), { stream: false });
    await driven.complete(call);
    assert.equal(upstream.received[0]?.headers['anthropic-beta'], 'new-thing-2027-01-01');
    assert.deepEqual(http(driven).requestNotes?.(call.request), { betasDropped: 'bad;value' });
  });

  test('the default list is the documented one', async () => {
    answerWith(RICH_ANSWER);
    await provider().complete(originCall(origin({ betas: [...DEFAULT_ANTHROPIC_BETAS] }), { stream: false }));
    assert.equal(upstream.received[0]?.headers['anthropic-beta'], DEFAULT_ANTHROPIC_BETAS.join(','));
  });

  test('a chat request: no per-request headers, no notes, the translation as before', async () => {
    answerWith(RICH_ANSWER);
    const driven = provider({ headers: { 'anthropic-beta': 'pdfs-2024-09-25' } });
    const p = http(driven);
    const request = { ...baseRequest };
    assert.equal(p.codec.requestHeaders?.(request), undefined);
    assert.equal(p.requestNotes?.(request), undefined);
    await driven.complete({ request, requestId: 'r', signal: new AbortController().signal });
    assert.equal(upstream.received[0]?.headers['anthropic-beta'], 'pdfs-2024-09-25');
    assert.equal(upstream.received[0]?.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(Object.keys(JSON.parse(upstream.received[0]?.text ?? '')), ['model', 'max_tokens', 'messages', 'system']);
  });
});

describe('what the Anthropic provider refuses, before any call', () => {
  test('a top-level field outside the documented request that the provider does not allow: the 400 names it and the setting', async () => {
    const driven = provider({ messagesPassthrough: ['speed'] });
    const o = origin({ extraFields: ['speed', 'fancy_mode'] });
    const expected = {
      status: 400,
      body: {
        error: {
          message:
            "Unknown parameter: 'fancy_mode'. The provider behind this model alias does not accept it; an operator allows it by adding \"fancy_mode\" to messagesPassthrough of the Anthropic provider in the gateway's config.",
          type: 'invalid_request_error',
          param: 'fancy_mode',
          code: 'unknown_parameter',
        },
      },
      headers: {},
    };
    assert.deepEqual(rendered(http(driven).refusal?.(originRequest(o))), expected);
    assert.deepEqual(rendered(await failure(driven.complete(originCall(o)))), expected);
    assert.equal(upstream.received.length, 0);
  });

  test('an anthropic-version that is not a date', async () => {
    const driven = provider();
    const o = origin({ version: 'latest' });
    assert.deepEqual(rendered(http(driven).refusal?.(originRequest(o))).body, {
      error: {
        message: "Invalid value for header 'anthropic-version': it must be an API version date such as 2023-06-01, or left out.",
        type: 'invalid_request_error',
        param: 'anthropic-version',
        code: 'invalid_value',
      },
    });
    assert.equal(http(driven).refusal?.(originRequest(origin({ version: '2026-10-21' }))), null);
  });

  test('never the chat translation: what it would refuse (top_k, thinking history) goes through', () => {
    const p = http(provider());
    // A chat request Anthropic's translation refuses...
    const refusedChat = { ...baseRequest, response_format: { type: 'json_object' as const } };
    assert.notEqual(p.refusal?.(refusedChat), null);
    // ...is not judged so when it came with an origin.
    assert.equal(p.refusal?.(originRequest(origin(), { response_format: { type: 'json_object' } })), null);
  });
});

describe('the answer relayed whole, translated leniently for counting', () => {
  test('thinking, redacted thinking, a server tool, its result and citations: the raw answer rides on the completion', async () => {
    answerWith(RICH_ANSWER);
    const completion = await provider().complete(originCall(origin(), { stream: false }));
    assert.deepEqual(rawAnswer(completion), RICH_ANSWER);
    assert.deepEqual(completion.choices, [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Portcullis is a gateway.',
          refusal: null,
          tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/tmp/a.txt"}' } }],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    assert.deepEqual(completion.usage, { prompt_tokens: 3050, completion_tokens: 120, total_tokens: 3170, prompt_tokens_details: { cached_tokens: 2000 } });
  });

  test('a chat request gets no raw answer', async () => {
    answerWith(RICH_ANSWER);
    const completion = await provider().complete({ request: { ...baseRequest }, requestId: 'r', signal: new AbortController().signal });
    assert.equal(rawAnswer(completion), undefined);
  });

  test('streamed: one carrier per event, data exactly as received, pings included; the translation counts text and usage', async () => {
    streamWith(eventStreamText(RICH_EVENTS));
    const chunks = await collect(provider().stream(originCall(origin())));
    assert.equal(chunks.length, RICH_EVENTS.length);
    const events = chunks.map((chunk) => rawEvent(chunk));
    assert.deepEqual(
      events.map((e) => ({ event: e?.event, data: e?.data })),
      RICH_EVENTS.map((e) => ({ event: e.event, data: e.data })),
    );
    for (const chunk of chunks) assert.deepEqual(chunk.choices, []);
    const translated: ChatCompletionChunk[] = events.flatMap((e) => [...(e?.translated ?? [])]);
    const created = translated[0]?.created;
    assert.deepEqual(translated, [
      { id: 'msg_02rich', object: 'chat.completion.chunk', created, model: 'claude-opus-upstream-20260101', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { id: 'msg_02rich', object: 'chat.completion.chunk', created, model: 'claude-opus-upstream-20260101', choices: [{ index: 0, delta: { content: 'Portcullis is a gateway.' }, finish_reason: null }] },
      { id: 'msg_02rich', object: 'chat.completion.chunk', created, model: 'claude-opus-upstream-20260101', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      {
        id: 'msg_02rich',
        object: 'chat.completion.chunk',
        created,
        model: 'claude-opus-upstream-20260101',
        choices: [],
        usage: { prompt_tokens: 3050, completion_tokens: 120, total_tokens: 3170, prompt_tokens_details: { cached_tokens: 2000 } },
      },
    ]);
    // Which event said what: the thinking, signature, server tool and citation events say nothing to chat.
    assert.deepEqual(
      events.map((e) => e?.translated.length),
      [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1],
    );
  });

  test('an error event after some events: those go out, then the mapped 502', async () => {
    const error = { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' };
    streamWith(eventStreamText([...RICH_EVENTS.slice(0, 2), error]));
    const seen: ChatCompletionChunk[] = [];
    const thrown = await failure(
      (async () => {
        for await (const chunk of provider().stream(originCall(origin()))) seen.push(chunk);
      })(),
    );
    assert.deepEqual(
      seen.map((c) => rawEvent(c)?.event),
      ['message_start', 'content_block_start'],
    );
    const { status, body } = rendered(thrown);
    assert.equal(status, 502);
    assert.deepEqual(body, { error: { message: 'Overloaded', type: 'upstream_error', param: null, code: 'upstream_error' } });
  });

  test('events after message_stop are not the answer: no carrier for them', async () => {
    streamWith(eventStreamText([...RICH_EVENTS, { event: 'ping', data: '{"type":"ping"}' }]));
    const chunks = await collect(provider().stream(originCall(origin())));
    assert.equal(chunks.length, RICH_EVENTS.length);
  });
});
