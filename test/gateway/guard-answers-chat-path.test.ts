// The chat path under the answer guard, with the real guard: a stream's
// channels stay open however the upstream interleaves them, and go out in the
// upstream's order (up to the bound on waiting text); the access line's `guard` field over the request's and
// the answer's findings; log probabilities while the answer is scanned; a
// json_schema mismatch's message under the guard (through the gateway).
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/chat/types.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { ChunkGuard, guardCompletion } from '../../src/gateway/answer-chunk-guard.ts';
import type { KeyPolicy } from '../../src/gateway/key-policy.ts';
import { createRequestGuard, noteAnswerFindings, type GuardSinks } from '../../src/gateway/request-guard.ts';
import { PlaceholderBook, type AnswerGuard } from '../../src/guard/answer-guard.ts';
import type { LogFields } from '../../src/log/logger.ts';
import type { GuardFinding } from '../../src/guard/body-guard.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { guardFor } from '../guard/answer-rig.ts';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const CARD = '4111111111111111';
const KEY: KeyPolicy = { id: 'key_1', expiresAt: null, allowedAliases: null, limits: NO_LIMITS };

type Choice = ChatCompletionChunk['choices'][number];
type Delta = Choice['delta'];

function chunk(delta: Delta, finish: Choice['finish_reason'] = null): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Choice 0's deltas and finishes out, for chunks in. */
function run(guard: AnswerGuard, chunks: ChatCompletionChunk[]): Array<[Delta, Choice['finish_reason']]> {
  const chunkGuard = new ChunkGuard(guard);
  const out: ChatCompletionChunk[] = [];
  for (const c of chunks) chunkGuard.push(c, out);
  chunkGuard.end(out);
  return out.map((c) => [(c.choices[0] as Choice).delta, (c.choices[0] as Choice).finish_reason]);
}

/** Each tool call's arguments as a client joins them, by index. */
function joinedArguments(deltas: Array<[Delta, Choice['finish_reason']]>): Record<number, string> {
  const joined: Record<number, string> = {};
  for (const [delta] of deltas) for (const call of delta.tool_calls ?? []) joined[call.index] = (joined[call.index] ?? '') + (call.function?.arguments ?? '');
  return joined;
}

describe('a stream whose channels interleave', () => {
  test('tool calls whose argument deltas interleave: a key split across the switch is still masked', () => {
    const out = run(guardFor({ aws_access_key: 'mask' }), [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"k":"${AWS_KEY.slice(0, 9)}` } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: `${AWS_KEY.slice(9)}"}` } }] }),
      chunk({}, 'tool_calls'),
    ]);
    assert.deepEqual(joinedArguments(out), { 0: '{"k":"[AWS_ACCESS_KEY_1]"}', 1: '{}' });
    // Call 0 whole, then call 1 with its id and name first, in a chunk before the finish.
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [
        {
          tool_calls: [
            { index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"k":"[AWS_ACCESS_KEY_1]"}' } },
            { index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        null,
      ],
      [{}, 'tool_calls'],
    ]);
  });

  test('a block split across the switch: the call with the key is cut before it, the call after it dropped, content_filter', () => {
    const out = run(guardFor({ aws_access_key: 'block' }), [
      chunk({ role: 'assistant', content: 'Calling.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"k":"${AWS_KEY.slice(0, 9)}` } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: `${AWS_KEY.slice(9)}"}` } }] }),
      chunk({}, 'tool_calls'),
    ]);
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [{ content: 'Calling.', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"k":"' } }] }, null],
      [{}, 'content_filter'],
    ]);
  });

  test('content back after a tool call: one content channel, a value split across the calls still masked', () => {
    const out = run(guardFor({ card_number: 'mask' }), [
      chunk({ role: 'assistant', content: `The card ${CARD.slice(0, 6)}` }),
      chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ content: `${CARD.slice(6)} is on file.` }),
      chunk({}, 'stop'),
    ]);
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [{ content: 'The card [CARD_NUMBER_1] is on file.', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{}' } }] }, null],
      [{}, 'stop'],
    ]);
  });

  test('content, then a tool call: the content goes out as released, the call after the content has ended', () => {
    const long = 'w '.repeat(100);
    const out = run(guardFor({ card_number: 'mask' }), [
      chunk({ role: 'assistant', content: long }),
      chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"a":"${'x'.repeat(200)}"}` } }] }),
      chunk({}, 'tool_calls'),
    ]);
    // The window of 64 held back (it ends between two words: nothing to hold further back).
    const released = long.length - 64;
    assert.deepEqual(out, [
      [{ role: 'assistant', content: long.slice(0, released) }, null],
      [{ content: long.slice(released), tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"a":"${'x'.repeat(200)}"}` } }] }, null],
      [{}, 'tool_calls'],
    ]);
  });

  test('more text waiting than a channel may hold (64 KiB): the channels before it end there, and it goes out from then on', () => {
    const chunkGuard = new ChunkGuard(guardFor({ card_number: 'mask' }));
    const piece = 'x '.repeat(4000);
    const outs: ChatCompletionChunk[][] = [];
    const push = (c: ChatCompletionChunk) => {
      const out: ChatCompletionChunk[] = [];
      chunkGuard.push(c, out);
      outs.push(out);
    };
    push(chunk({ role: 'assistant', content: 'Hello there' }));
    push(chunk({ tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: `{"a":"${piece}` } }] }));
    for (let i = 0; i < 9; i++) push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }, 'tool_calls'));
    const deltas = outs.map((out) => out.map((c) => (c.choices[0] as Choice).delta));
    // 8,000 characters a chunk: the call's waiting text passes 65,536 with its 9th piece (72,006 characters in).
    assert.deepEqual(deltas.slice(0, 9), [[{ role: 'assistant' }], [], [], [], [], [], [], [], []]);
    // The content ends there and goes out, then the call's header and what it released.
    const opened = deltas[9]?.[0];
    assert.equal(opened?.content, 'Hello there');
    assert.deepEqual({ ...opened?.tool_calls?.[0], function: { ...opened?.tool_calls?.[0]?.function, arguments: '' } }, { index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '' } });
    // From then on the call goes out as released, its held rest before the finish.
    assert.equal(deltas[10]?.length, 1);
    assert.equal(deltas[10]?.[0]?.content, undefined);
    assert.equal(outs[11]?.length, 2);
    assert.deepEqual(outs[11]?.[1]?.choices, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
    assert.deepEqual(joinedArguments(outs.flat().map((c) => [(c.choices[0] as Choice).delta, null])), { 0: `{"a":"${piece.repeat(10)}"}` });
  });

  test('past that bound a text going on later is a new one: a value the upstream splits across that point is scanned in two parts', () => {
    const key = 'AKIAQ3EGRTWXZ7PLMN4K';
    const args = `{"text":"${'lorem ipsum '.repeat(6000)}"}`;
    const out = run(guardFor({ aws_access_key: 'mask' }), [
      chunk({ role: 'assistant', content: `My key is ${key.slice(0, 8)}` }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write', arguments: args } }] }),
      chunk({ content: `${key.slice(8)} ok` }),
      chunk({}, 'stop'),
    ]);
    // Neither part is a key: what the bound costs an upstream that goes back to its content after a call over 64 KiB.
    assert.equal(out.map(([delta]) => delta.content ?? '').join(''), `My key is ${key} ok`);
    assert.equal(joinedArguments(out)[0], args);
    assert.deepEqual(out[out.length - 1], [{}, 'stop']);
  });

  test('the stream ends without a finish: every channel out, in the upstream\'s order', () => {
    const out = run(guardFor({ card_number: 'mask' }), [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{"b":2}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    ]);
    assert.deepEqual(out, [
      [{ role: 'assistant' }, null],
      [
        {
          tool_calls: [
            { index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { index: 1, id: 'call_1', type: 'function', function: { name: 'g', arguments: '{"b":2}' } },
          ],
        },
        null,
      ],
    ]);
  });
});

describe('the access line\'s guard field', () => {
  const sinks = (log: LogFields): GuardSinks => ({ log, requestId: 'r', logger: { error() {} } as unknown as GuardSinks['logger'] });
  const many = (n: number, path: string): GuardFinding[] => Array.from({ length: n }, () => ({ detector: 'email', path, action: 'log' as const }));
  const split = (field: unknown) => {
    const parts = String(field).split(',');
    return { findings: parts.filter((p) => !p.startsWith('+')).length, counts: parts.filter((p) => p.startsWith('+')) };
  };

  test('20 request findings and 20 of the answer: 16 listed, the request\'s first, and one count of the rest at the end', () => {
    const guard = createRequestGuard(configWith({ detectors: { email: 'log' } }));
    const log: LogFields = {};
    const text = Array.from({ length: 20 }, (_, i) => `u${i}@example.com`).join(' ');
    guard.inspect(sinks(log), { messages: [{ role: 'user', content: text }] }, 'chat', KEY);
    assert.deepEqual(split(log['guard']), { findings: 16, counts: ['+4 more'] });
    noteAnswerFindings(sinks(log), many(20, 'answer.choices[0].message.content'));
    assert.deepEqual(split(log['guard']), { findings: 16, counts: ['+24 more'] });
    assert.equal(String(log['guard']).includes('answer.'), false);
  });

  test('an answer\'s findings drained in turns fill the list up to 16, then count on', () => {
    const log: LogFields = {};
    noteAnswerFindings(sinks(log), many(3, 'answer.a'));
    assert.equal(log['guard'], 'email:answer.a:log,email:answer.a:log,email:answer.a:log');
    noteAnswerFindings(sinks(log), many(12, 'answer.b'));
    noteAnswerFindings(sinks(log), many(2, 'answer.c'));
    noteAnswerFindings(sinks(log), many(5, 'answer.d'));
    const parts = String(log['guard']).split(',');
    assert.equal(parts.length, 17);
    assert.equal(parts[15], 'email:answer.c:log');
    assert.equal(parts[16], '+6 more');
  });
});

function configWith(guard: unknown): ReturnType<typeof parseConfig> {
  return parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { chat: { provider: 'demo' } }, guard }, null, '/tmp');
}

function completionWith(content: string, logprobs: Record<string, unknown> | null): ChatCompletion {
  return { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, tool_calls: [] }, logprobs, finish_reason: 'stop' }] };
}

describe('log probabilities under the answer guard', () => {
  const logprobs = { content: [{ token: 'fine', logprob: -0.1, bytes: [], top_logprobs: [] }] };
  const noSinks = (): GuardSinks => ({ log: {}, requestId: 'r', logger: { error() {} } as unknown as GuardSinks['logger'] });

  test('scanning: a whole choice goes out with logprobs null, though nothing in it changed', () => {
    const guard = createRequestGuard(configWith({ detectors: { card_number: 'mask' }, answers: { scan: true } })).answers(noSinks(), 'chat', KEY, new PlaceholderBook());
    assert.ok(guard !== null);
    const guarded = guardCompletion(guard, completionWith('all fine', logprobs));
    assert.deepEqual(guarded.choices[0], { index: 0, message: { role: 'assistant', content: 'all fine', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' });
  });

  test('restoring only: a whole choice keeps its logprobs, its text restored', () => {
    const requestGuard = createRequestGuard(configWith({ detectors: { card_number: 'mask' }, answers: { restore: true } }));
    const book = new PlaceholderBook();
    requestGuard.inspect(noSinks(), { messages: [{ role: 'user', content: `card ${CARD}` }] }, 'chat', KEY, book);
    const guard = requestGuard.answers(noSinks(), 'chat', KEY, book);
    assert.ok(guard !== null);
    const guarded = guardCompletion(guard, completionWith('charged [CARD_NUMBER_1]', logprobs));
    assert.deepEqual(guarded.choices[0], { index: 0, message: { role: 'assistant', content: `charged ${CARD}`, refusal: null, tool_calls: [] }, logprobs, finish_reason: 'stop' });
  });

  test('a stream: scanning drops what a chunk\'s choice carries beside its delta; restoring only keeps it', () => {
    const carrying = (): ChatCompletionChunk => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs } as Choice] });
    const through = (guard: AnswerGuard): unknown[] => {
      const out: ChatCompletionChunk[] = [];
      new ChunkGuard(guard).push(carrying(), out);
      return out.map((c) => c.choices[0]);
    };
    assert.deepEqual(through(guardFor({ card_number: 'mask' })), [
      { index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'stop' },
    ]);
    // The text goes out before the finish, and what the choice carries goes with the text.
    assert.deepEqual(through(guardFor({ card_number: 'mask' }, { scan: false })), [
      { index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null, logprobs },
      { index: 0, delta: {}, finish_reason: 'stop' },
    ]);
  });
});

describe('an answer that breaks the request\'s json_schema', () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  let content = '';

  before(async () => {
    up = await startFakeUpstream((_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c2', object: 'chat.completion', created: 1, model: 'up', choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
    const provider = { type: 'openai', baseUrl: up.baseUrl, apiKeyEnv: 'K', retry: { maxAttempts: 1 } };
    gw = await startGateway({
      configValue: {
        providers: { up: provider },
        aliases: {
          guarded: { provider: 'up', model: 'up', requestFields: ['json_schema'], guard: { detectors: { card_number: 'mask' }, answers: { scan: true } } },
          plain: { provider: 'up', model: 'up', requestFields: ['json_schema'] },
        },
      },
      env: { K: 'sk-up' },
    });
  });
  after(async () => {
    await gw.close();
    await up.close();
  });

  const schema = { type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } }, required: ['n', 'tags'], additionalProperties: false };
  async function ask(model: string): Promise<{ status: number; message: string; text: string }> {
    const body = { model, messages: [{ role: 'user', content: 'a number please' }], response_format: { type: 'json_schema', json_schema: { name: 'n', strict: true, schema } } };
    const res = await request(gw.baseUrl, 'POST', '/v1/chat/completions', { headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` }, body: JSON.stringify(body) });
    return { status: res.status, message: (res.json() as { error: { message: string } }).error.message, text: res.text };
  }
  const PREFIX = "The upstream's answer does not match the response_format json_schema: ";

  test('under the guard: the path and the types, never the value, in the answer or the logs', async () => {
    content = `{"n":"${CARD}","tags":[]}`;
    const got = await ask('guarded');
    assert.equal(got.status, 502);
    assert.equal(got.message, `${PREFIX}$.n: expected integer, got a string`);
    assert.deepEqual(gw.logs.filter((l) => JSON.stringify(l).includes(CARD)), []);
  });

  test('under the guard: an enum value, and a property the schema does not have, named by path only', async () => {
    content = `{"n":1,"tags":["${CARD}"]}`;
    assert.equal((await ask('guarded')).message, `${PREFIX}$.tags[0]: a string is not one of the enum values`);
    content = `{"n":1,"tags":[],"${CARD}":1}`;
    const got = await ask('guarded');
    assert.equal(got.message, `${PREFIX}$: has a property that is not in the schema ("additionalProperties": false)`);
    assert.equal(got.text.includes(CARD), false);
  });

  test('without a guard: the value is quoted, as before', async () => {
    content = `{"n":"${CARD}","tags":[]}`;
    assert.equal((await ask('plain')).message, `${PREFIX}$.n: expected integer, got string "${CARD}"`);
  });
});
