// The answer held to a strict json_schema: a whole completion's choice 0, and a
// stream's, fed whole, chunk by chunk, split at every index (a UTF-8 character
// and a surrogate pair among them), with the exact violation; and the answers
// left alone (length, content_filter, a refusal, tool calls with no content).
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { checkCompletionAnswer, StreamedAnswerCheck, type SchemaViolation } from '../../src/chat/structured-answer.ts';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall } from '../../src/chat/types.ts';
import { compileSchema } from '../../src/schema/compile.ts';

const schema = compileSchema({
  type: 'object',
  properties: {
    title: { type: 'string' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, qty: { type: 'integer' } }, required: ['name', 'qty'], additionalProperties: false },
    },
  },
  required: ['title', 'items'],
  additionalProperties: false,
});

const BOUND = 1 << 20;

interface Message {
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
}

function completion(message: Message, finish: FinishReason | null = 'stop'): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: message.content, refusal: message.refusal ?? null, tool_calls: message.tool_calls ?? [] }, logprobs: null, finish_reason: finish }],
  };
}

function chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finish: FinishReason | null = null, index = 0): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index, delta, finish_reason: finish }] };
}

const violation = (path: string, what: string): SchemaViolation => ({ path, message: `${path}: ${what}` });

const VALID = '{"title":"Shopping","items":[{"name":"milk","qty":1},{"name":"eggs","qty":12},{"name":"tea","qty":2}]}';
const WRONG_QTY = '{"title":"Shopping","items":[{"name":"milk","qty":1},{"name":"eggs","qty":12},{"name":"tea","qty":"two"}]}';
const CALL: ToolCall = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } };

/** [content, expected violation or null] for answers that finished with `stop`. */
const TABLE: [string | null, SchemaViolation | null][] = [
  [VALID, null],
  [` \n${VALID}\n `, null],
  [WRONG_QTY, violation('$.items[2].qty', 'expected integer, got string "two"')],
  ['{"title":"Ünïcödé ✓ 🎉","items":[]}', null],
  ['{"title":"x","items":[],"extra":1}', violation('$.extra', 'is not a property of the schema ("additionalProperties": false)')],
  ['{"title":"x"}', violation('$', 'missing the required property "items"')],
  ['[]', violation('$', 'expected object, got an array')],
  ['Sure! Here is the list: milk, eggs.', violation('$', 'expected a JSON value, got text that is not JSON (unexpected_byte at byte 0)')],
  ['```json\n{"title":"x","items":[]}\n```', violation('$', 'expected a JSON value, got text that is not JSON (unexpected_byte at byte 0)')],
  ['{"title":"x","items":[]', violation('$', 'expected a JSON value, got text that is not JSON (unexpected_end at byte 23)')],
  ['{"title":"x","items":[]} and more', violation('$', 'expected a JSON value, got text that is not JSON (unexpected_byte at byte 25)')],
  ['', violation('$', 'expected a JSON value, got no content')],
  [null, violation('$', 'expected a JSON value, got no content')],
  ['   ', violation('$', 'expected a JSON value, got text that is not JSON (unexpected_end at byte 3)')],
];

/** The stream of `content` cut at `cuts` (indexes into the string), a finish chunk after. */
function streamed(content: string, cuts: number[], finish: FinishReason = 'stop'): ChatCompletionChunk[] {
  const chunks: ChatCompletionChunk[] = [chunk({ role: 'assistant', content: '' })];
  let from = 0;
  for (const cut of [...cuts, content.length]) {
    chunks.push(chunk({ content: content.slice(from, cut) }));
    from = cut;
  }
  chunks.push(chunk({}, finish));
  return chunks;
}

/** The verdicts the check gives, chunk by chunk; only the finish chunk may have one. */
function verdictOf(chunks: ChatCompletionChunk[], bound = BOUND): SchemaViolation | null {
  const check = new StreamedAnswerCheck(schema, bound);
  let verdict: SchemaViolation | null = null;
  chunks.forEach((c, i) => {
    const v = check.push(c);
    if (i < chunks.length - 1) assert.equal(v, null, `no verdict before the finish chunk (chunk ${i})`);
    else verdict = v;
  });
  assert.equal(check.finished, true);
  return verdict;
}

describe('checkCompletionAnswer', () => {
  it('holds choice 0 content to the schema, naming the first failing path', () => {
    for (const [content, expected] of TABLE) {
      assert.deepStrictEqual(checkCompletionAnswer(schema, completion({ content }), BOUND), expected, JSON.stringify(content));
    }
  });

  it('checks an answer with no finish reason like a finished one', () => {
    assert.deepStrictEqual(checkCompletionAnswer(schema, completion({ content: WRONG_QTY }, null), BOUND), violation('$.items[2].qty', 'expected integer, got string "two"'));
  });

  it('leaves alone a cut or filtered answer, a refusal, and tool calls with no content', () => {
    assert.equal(checkCompletionAnswer(schema, completion({ content: '{"title":' }, 'length'), BOUND), null);
    assert.equal(checkCompletionAnswer(schema, completion({ content: '' }, 'content_filter'), BOUND), null);
    assert.equal(checkCompletionAnswer(schema, completion({ content: null, refusal: "I'm sorry, I can't help with that." }), BOUND), null);
    assert.equal(checkCompletionAnswer(schema, completion({ content: null, tool_calls: [CALL] }, 'tool_calls'), BOUND), null);
    assert.equal(checkCompletionAnswer(schema, completion({ content: '', tool_calls: [CALL] }, 'tool_calls'), BOUND), null);
  });

  it('checks content beside tool calls, and content beside an empty refusal', () => {
    assert.deepStrictEqual(checkCompletionAnswer(schema, completion({ content: 'calling a tool', tool_calls: [CALL] }, 'tool_calls'), BOUND),
      violation('$', 'expected a JSON value, got text that is not JSON (unexpected_byte at byte 0)'));
    assert.deepStrictEqual(checkCompletionAnswer(schema, completion({ content: '{}', refusal: '' }), BOUND), violation('$', 'missing the required property "title"'));
  });

  it('fails an answer longer than its bound at `$`, without quoting it', () => {
    assert.equal(checkCompletionAnswer(schema, completion({ content: VALID }), VALID.length), null);
    assert.deepStrictEqual(checkCompletionAnswer(schema, completion({ content: VALID }), VALID.length - 1),
      violation('$', `the answer is longer than the ${VALID.length - 1} bytes the gateway checks`));
    // Within the bound in characters, over it in bytes.
    const accented = '{"title":"ééé","items":[]}';
    assert.equal(checkCompletionAnswer(schema, completion({ content: accented }), Buffer.byteLength(accented)), null);
    assert.deepStrictEqual(checkCompletionAnswer(schema, completion({ content: accented }), accented.length),
      violation('$', `the answer is longer than the ${accented.length} bytes the gateway checks`));
  });

  it('fails a completion of more than one choice, or of another index', () => {
    const valid = completion({ content: VALID });
    const second = { ...(valid.choices[0] as ChatCompletion['choices'][number]), index: 1, message: { role: 'assistant' as const, content: 'nope', refusal: null, tool_calls: [] } };
    assert.deepStrictEqual(checkCompletionAnswer(schema, { ...valid, choices: [valid.choices[0] as ChatCompletion['choices'][number], second] }, BOUND),
      violation('$', 'the answer has a choice of index 1; the request asked for one choice, index 0'));
    assert.deepStrictEqual(checkCompletionAnswer(schema, { ...valid, choices: [{ ...second, message: { ...second.message, content: VALID } }] }, BOUND),
      violation('$', 'the answer has a choice of index 1; the request asked for one choice, index 0'));
    assert.deepStrictEqual(checkCompletionAnswer(schema, { ...valid, choices: [valid.choices[0] as ChatCompletion['choices'][number], valid.choices[0] as ChatCompletion['choices'][number]] }, BOUND),
      violation('$', 'the answer has 2 choices; the request asked for one'));
  });

  it('fails a completion with no choice at `$`', () => {
    assert.deepStrictEqual(checkCompletionAnswer(schema, { ...completion({ content: VALID }), choices: [] }, BOUND), violation('$', 'expected a JSON value, got no content'));
  });
});

describe('StreamedAnswerCheck', () => {
  it('gives the same verdicts as a whole answer, for the content whole, in single characters and split at every index', () => {
    for (const [content, expected] of TABLE) {
      if (content === null) continue;
      assert.deepStrictEqual(verdictOf(streamed(content, [])), expected, `${JSON.stringify(content)} whole`);
      assert.deepStrictEqual(verdictOf(streamed(content, Array.from({ length: Math.max(0, content.length - 1) }, (_, i) => i + 1))), expected, `${JSON.stringify(content)} char by char`);
      for (let at = 1; at < content.length; at++) {
        assert.deepStrictEqual(verdictOf(streamed(content, [at])), expected, `${JSON.stringify(content)} split at ${at}`);
      }
    }
  });

  it('joins a surrogate pair split across two deltas, as the client joins them', () => {
    const pinned = compileSchema({ type: 'object', properties: { mood: { type: 'string', enum: ['🎉'] } }, required: ['mood'], additionalProperties: false });
    const content = '{"mood":"🎉"}';
    const at = content.indexOf('🎉') + 1;
    const check = new StreamedAnswerCheck(pinned, BOUND);
    for (const c of streamed(content, [at])) assert.equal(check.push(c), null);
    // An unpaired half has no UTF-8 encoding: the gateway's parser refuses it, as it refuses one in a request.
    const lone = new StreamedAnswerCheck(pinned, BOUND);
    let verdict: SchemaViolation | null = null;
    for (const c of [chunk({ content: '{"mood":"\ud83c' }), chunk({ content: '"}' }, 'stop')]) verdict = lone.push(c);
    assert.deepStrictEqual(verdict, violation('$', 'expected a JSON value, got text that is not JSON (invalid_utf8 at byte 9)'));
  });

  it('takes the content on the finish chunk itself', () => {
    const check = new StreamedAnswerCheck(schema, BOUND);
    assert.equal(check.push(chunk({ content: '{"title":"x",' })), null);
    assert.equal(check.push(chunk({ content: '"items":[]}' }, 'stop')), null);
    assert.equal(check.finished, true);
  });

  it('fails a chunk of another choice: one was asked for, and SDKs read the first entry whatever its index', () => {
    const other = violation('$', 'the answer has a choice of index 1; the request asked for one choice, index 0');
    // Choice 0 streams off the schema, choice 1 finishes: without this the stream would end as complete.
    const check = new StreamedAnswerCheck(schema, BOUND);
    assert.equal(check.push(chunk({ content: '{"qty":"two"}' })), null);
    assert.deepStrictEqual(check.push(chunk({}, 'stop', 1)), other);
    assert.equal(check.finished, true);
    // The whole answer under index 1.
    assert.deepStrictEqual(new StreamedAnswerCheck(schema, BOUND).push(chunk({ content: 'not json at all' }, null, 1)), other);
  });

  it('reads nothing after choice 0 finished', () => {
    const check = new StreamedAnswerCheck(schema, BOUND);
    assert.equal(check.push(chunk({ content: VALID }, 'stop')), null);
    assert.equal(check.push(chunk({ content: 'trailing garbage' }, 'stop')), null);
  });

  it('leaves alone a cut or filtered stream, a refusal, and tool calls with no content', () => {
    assert.equal(verdictOf(streamed('{"title":', [4], 'length')), null);
    assert.equal(verdictOf(streamed('', [], 'content_filter')), null);
    assert.equal(verdictOf([chunk({ role: 'assistant', refusal: '' }), chunk({ refusal: "I can't" }), chunk({}, 'stop')]), null);
    assert.equal(verdictOf([chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] }), chunk({}, 'tool_calls')]), null);
    assert.deepStrictEqual(verdictOf([chunk({ role: 'assistant', content: 'Let me look.' }), chunk({ tool_calls: [{ index: 0, function: { name: 'lookup', arguments: '{}' } }] }), chunk({}, 'tool_calls')]),
      violation('$', 'expected a JSON value, got text that is not JSON (unexpected_byte at byte 0)'));
  });

  it('fails a stream with no content, and one longer than its bound, at `$`', () => {
    assert.deepStrictEqual(verdictOf([chunk({ role: 'assistant' }), chunk({}, 'stop')]), violation('$', 'expected a JSON value, got no content'));
    assert.equal(verdictOf(streamed(VALID, [10, 20]), VALID.length), null);
    assert.deepStrictEqual(verdictOf(streamed(VALID, [10, 20]), VALID.length - 1), violation('$', `the answer is longer than the ${VALID.length - 1} bytes the gateway checks`));
  });
});
