// The chat shapes over an answer guard (src/gateway/answer-chunk-guard.ts),
// with a stand-in guard whose rules are plain to read: it holds back the last
// 4 characters of a channel, masks `KEY` as `[K]`, and blocks at `BAD`. What
// is checked is the shape work: per choice and channel, each channel open
// until its choice finishes, the later channels' text waiting for the earlier
// ones to end, a tool call's first delta waiting for its arguments,
// content_filter and nothing after it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../src/chat/types.ts';
import type { GuardFinding } from '../../src/guard/body-guard.ts';
import type { AnswerChannel, AnswerGuard, ChannelKind } from '../../src/guard/answer-guard.ts';
import { ChunkGuard, guardCompletion } from '../../src/gateway/answer-chunk-guard.ts';

const HOLD = 4;

/** Where a token starting before `end` runs past it, the release stops at the token. */
function releaseEnd(text: string, end: number): number {
  for (const token of ['KEY', 'BAD']) {
    for (let at = text.indexOf(token); at !== -1; at = text.indexOf(token, at + 1)) {
      if (at < end && at + token.length > end) return at;
    }
  }
  return end;
}

class StandInChannel implements AnswerChannel {
  blocked = false;
  #pending = '';
  readonly #path: string;
  readonly #findings: GuardFinding[];

  constructor(path: string, findings: GuardFinding[]) {
    this.#path = path;
    this.#findings = findings;
  }

  push(text: string): string {
    if (this.blocked) return '';
    this.#pending += text;
    return this.#release(releaseEnd(this.#pending, Math.max(0, this.#pending.length - HOLD)));
  }

  end(): string {
    if (this.blocked) return '';
    return this.#release(this.#pending.length);
  }

  #release(end: number): string {
    const bad = this.#pending.indexOf('BAD');
    if (bad !== -1 && bad < end) {
      this.blocked = true;
      const given = this.#mask(this.#pending.slice(0, bad));
      this.#findings.push({ detector: 'fake', path: this.#path, action: 'block' });
      this.#pending = '';
      return given;
    }
    const given = this.#mask(this.#pending.slice(0, end));
    this.#pending = this.#pending.slice(end);
    return given;
  }

  #mask(text: string): string {
    const parts = text.split('KEY');
    for (let i = 1; i < parts.length; i++) this.#findings.push({ detector: 'fake', path: this.#path, action: 'mask' });
    return parts.join('[K]');
  }
}

class StandInGuard implements AnswerGuard {
  readonly scanning = true;
  readonly findings: GuardFinding[] = [];
  readonly opened: Array<[string, ChannelKind]> = [];

  channel(path: string, kind: ChannelKind): AnswerChannel {
    this.opened.push([path, kind]);
    return new StandInChannel(path, this.findings);
  }

  whole(path: string, kind: ChannelKind, text: string): { text: string; blocked: boolean } {
    this.opened.push([path, kind]);
    const channel = new StandInChannel(path, this.findings);
    const out = channel.push(text) + channel.end();
    return { text: out, blocked: channel.blocked };
  }

  drain(): GuardFinding[] {
    return this.findings.splice(0);
  }
}

type Choice = ChatCompletionChunk['choices'][number];

function chunk(choices: Choice[], usage?: Usage): ChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 7, model: 'service-fake', choices, ...(usage === undefined ? {} : { usage }) };
}

/** The choices of each chunk out, for chunks in. */
function run(chunks: ChatCompletionChunk[], guard = new StandInGuard()): Choice[][] {
  const chunkGuard = new ChunkGuard(guard);
  const out: ChatCompletionChunk[] = [];
  for (const c of chunks) chunkGuard.push(c, out);
  chunkGuard.end(out);
  for (const c of out) {
    assert.equal(c.id, 'chatcmpl-1');
    assert.equal(c.created, 7);
    assert.equal(c.model, 'service-fake');
  }
  return out.map((c) => c.choices);
}

describe('a stream through the chunk guard', () => {
  test('content held back by the window, a masked value, the rest out before the finish', () => {
    const guard = new StandInGuard();
    const out = run(
      [
        chunk([{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { content: ' K' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { content: 'EY ok' }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      ],
      guard,
    );
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant', content: 'H' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'el' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'lo ' }, finish_reason: null }],
      [{ index: 0, delta: { content: '[K] ok' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'stop' }],
    ]);
    assert.deepEqual(guard.opened, [['answer.choices[0].delta.content', 'text']]);
    assert.deepEqual(guard.drain(), [{ detector: 'fake', path: 'answer.choices[0].delta.content', action: 'mask' }]);
  });

  test('a chunk whose text is all held is dropped; a role-only chunk is kept', () => {
    const out = run([
      chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: '!' }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    ]);
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'Hi!' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'stop' }],
    ]);
  });

  test('a block: the text before it, finish_reason content_filter, and nothing more of the choice (not even its own finish)', () => {
    const guard = new StandInGuard();
    const out = run(
      [
        chunk([{ index: 0, delta: { role: 'assistant', content: 'one two B' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { content: 'AD three four five' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { content: 'six' }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      ],
      guard,
    );
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant', content: 'one t' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'wo ' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'content_filter' }],
    ]);
    assert.deepEqual(guard.drain(), [{ detector: 'fake', path: 'answer.choices[0].delta.content', action: 'block' }]);
  });

  test('content, then tool calls: the content goes out as released, the calls after it has ended, each with its id and name first', () => {
    const guard = new StandInGuard();
    const out = run(
      [
        chunk([{ index: 0, delta: { role: 'assistant', content: 'Let me look' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'find', arguments: '{"q":' } }] }, finish_reason: null }]),
        chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"KEY"}' } }] }, finish_reason: null }]),
        chunk([{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get', arguments: '{}' } }] }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
      ],
      guard,
    );
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant', content: 'Let me ' }, finish_reason: null }],
      [
        {
          index: 0,
          delta: {
            content: 'look',
            tool_calls: [
              { index: 0, id: 'call_a', type: 'function', function: { name: 'find', arguments: '{"q":"[K]"}' } },
              { index: 1, id: 'call_b', type: 'function', function: { name: 'get', arguments: '{}' } },
            ],
          },
          finish_reason: null,
        },
      ],
      [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
    ]);
    assert.deepEqual(guard.opened, [
      ['answer.choices[0].delta.content', 'text'],
      ['answer.choices[0].delta.tool_calls[0].function.arguments', 'json'],
      ['answer.choices[0].delta.tool_calls[1].function.arguments', 'json'],
    ]);
  });

  test('a block in a tool call before any of its arguments went out: the call is dropped whole, the choice ends content_filter', () => {
    const out = run([
      chunk([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: 'BAD' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: '}' } }] }, finish_reason: 'tool_calls' }]),
    ]);
    // Call 0 ends first (its rest out), then call 1 blocks at its end, before any of its arguments.
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a' } }] }, finish_reason: null }],
      [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '":1}' } }] }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'content_filter' }],
    ]);
  });

  test('n=2: each choice held and cut on its own; a usage chunk passes', () => {
    const usage: Usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } };
    const chunkGuard = new ChunkGuard(new StandInGuard());
    const out: ChatCompletionChunk[] = [];
    chunkGuard.push(
      chunk([
        { index: 0, delta: { role: 'assistant', content: 'alpha beta' }, finish_reason: null },
        { index: 1, delta: { role: 'assistant', content: 'gamma BAD' }, finish_reason: null },
      ]),
      out,
    );
    chunkGuard.push(
      chunk([
        { index: 0, delta: {}, finish_reason: 'stop' },
        { index: 1, delta: { content: ' delta' }, finish_reason: 'stop' },
      ]),
      out,
    );
    chunkGuard.push(chunk([], usage), out);
    chunkGuard.end(out);
    assert.deepEqual(
      out.map((c) => [c.choices, c.usage]),
      [
        [
          [
            { index: 0, delta: { role: 'assistant', content: 'alpha ' }, finish_reason: null },
            { index: 1, delta: { role: 'assistant', content: 'gamma' }, finish_reason: null },
          ],
          undefined,
        ],
        [
          [
            { index: 0, delta: { content: 'beta' }, finish_reason: null },
            { index: 1, delta: { content: ' ' }, finish_reason: null },
          ],
          undefined,
        ],
        [
          [
            { index: 0, delta: {}, finish_reason: 'stop' },
            { index: 1, delta: {}, finish_reason: 'content_filter' },
          ],
          undefined,
        ],
        [[], usage],
      ],
    );
  });

  test('the upstream ends with text held: end() gives it, scanned as ended, unfinished', () => {
    const out = run([chunk([{ index: 0, delta: { role: 'assistant', content: 'abcdefKEY' }, finish_reason: null }])]);
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant', content: 'abcde' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'f[K]' }, finish_reason: null }],
    ]);
  });

  test('the end blocks a held value: content_filter, nothing of it', () => {
    const out = run([chunk([{ index: 0, delta: { role: 'assistant', content: 'abcdefBAD' }, finish_reason: null }])]);
    assert.deepEqual(out, [
      [{ index: 0, delta: { role: 'assistant', content: 'abcde' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'f' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'content_filter' }],
    ]);
  });

  test('a finish with text: the text in a chunk of its own first; nothing held at the end, no chunk from end()', () => {
    const out = run([chunk([{ index: 0, delta: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }])]);
    assert.deepEqual(out, [[{ index: 0, delta: { role: 'assistant', content: 'done' }, finish_reason: null }], [{ index: 0, delta: {}, finish_reason: 'stop' }]]);
  });
});

function completion(message: Partial<ChatCompletion['choices'][number]['message']>, logprobs: Record<string, unknown> | null = null): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 7,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [], ...message }, logprobs, finish_reason: 'stop' }],
  };
}

describe('a whole completion through the guard', () => {
  test('nothing to change: the same object', () => {
    const whole = completion({ content: 'all fine', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] });
    assert.equal(guardCompletion(new StandInGuard(), whole), whole);
  });

  test('a masked value in content and in tool arguments; the logprobs, which name the original tokens, dropped', () => {
    const guard = new StandInGuard();
    const whole = completion({ content: 'the KEY', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"k":"KEY"}' } }] }, { content: [] });
    const guarded = guardCompletion(guard, whole);
    assert.deepEqual(guarded.choices, [
      {
        index: 0,
        message: { role: 'assistant', content: 'the [K]', refusal: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"k":"[K]"}' } }] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    assert.equal(whole.choices[0]?.message.content, 'the KEY');
    assert.deepEqual(guard.opened, [
      ['answer.choices[0].message.content', 'text'],
      ['answer.choices[0].message.tool_calls[0].function.arguments', 'json'],
    ]);
  });

  test('a block in content: cut before it, content_filter, the tool calls dropped', () => {
    const whole = completion({ content: 'so BAD here', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] });
    assert.deepEqual(guardCompletion(new StandInGuard(), whole).choices, [
      { index: 0, message: { role: 'assistant', content: 'so ', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'content_filter' },
    ]);
  });

  test('a block in the second tool call: the first stays, the blocked one and those after are dropped', () => {
    const calls = ['{"a":1}', '{"b":"BAD"}', '{}'].map((args, i) => ({ id: `c${i}`, type: 'function' as const, function: { name: 'f', arguments: args } }));
    const guarded = guardCompletion(new StandInGuard(), completion({ content: 'calling', tool_calls: calls }));
    assert.deepEqual(guarded.choices[0]?.message.tool_calls, [calls[0]]);
    assert.equal(guarded.choices[0]?.finish_reason, 'content_filter');
    assert.equal(guarded.choices[0]?.message.content, 'calling');
  });
});
