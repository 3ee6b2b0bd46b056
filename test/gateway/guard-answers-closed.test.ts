// The answer guard's shell in request-guard.ts: when there is an answer guard
// at all (null unless scanning is on, or restoring with something masked),
// fail closed when the scanner faults (a whole answer: guard_failed, 500; a
// stream: the error frame, never the text), and how an answer's findings are
// recorded (the access line's `guard` after the request's, the tally).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { guardCompletion } from '../../src/gateway/answer-chunk-guard.ts';
import { pumpEventStream, type EventSink, type PumpControl } from '../../src/gateway/event-stream-pump.ts';
import type { KeyPolicy } from '../../src/gateway/key-policy.ts';
import { createRequestGuard, noteAnswerFindings, type GuardSinks } from '../../src/gateway/request-guard.ts';
import { PlaceholderBook } from '../../src/guard/answer-guard.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { streamOfChunks } from '../support/drive-provider.ts';

const KEY: KeyPolicy = { id: 'key_1', expiresAt: null, allowedAliases: null, limits: NO_LIMITS };
const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';

function sinks(): GuardSinks & { errors: Array<[string, Record<string, unknown>]> } {
  const errors: Array<[string, Record<string, unknown>]> = [];
  const logger = { error: (msg: string, fields: Record<string, unknown>) => errors.push([msg, fields]), warn: () => undefined, info: () => undefined, debug: () => undefined };
  return { log: {}, requestId: 'req_1', logger: logger as unknown as GuardSinks['logger'], tally: { blocked: 0, masked: 0, logged: 0 }, errors };
}

function configWith(guard: unknown): ReturnType<typeof parseConfig> {
  return parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { chat: { provider: 'demo' } }, ...(guard === undefined ? {} : { guard }) }, null, '/tmp');
}

const faulty = { lastSteps: 0, scan: (): void => { throw new TypeError('boom'); } };
const SCANNING = { detectors: { secrets: 'mask' }, answers: { scan: true, holdBackChars: 64 } };

describe('whether an answer has a guard', () => {
  test('scanning on with an active policy: a guard', () => {
    assert.notEqual(createRequestGuard(configWith(SCANNING)).answers(sinks(), 'chat', KEY, new PlaceholderBook()), null);
  });

  test('neither scanning nor restoring: none', () => {
    assert.equal(createRequestGuard(configWith({ detectors: { secrets: 'mask' } })).answers(sinks(), 'chat', KEY, new PlaceholderBook()), null);
  });

  test('restoring with nothing masked in the request: none; with something masked: a guard', () => {
    const guard = createRequestGuard(configWith({ detectors: { card_number: 'mask' }, answers: { restore: true } }));
    assert.equal(guard.answers(sinks(), 'chat', KEY, new PlaceholderBook()), null);
    const book = new PlaceholderBook();
    const masked = guard.inspect(sinks(), { messages: [{ role: 'user', content: 'card 4111111111111111' }] }, 'chat', KEY, book);
    assert.deepEqual(masked, { messages: [{ role: 'user', content: 'card [CARD_NUMBER_1]' }] });
    assert.equal(book.hasRestorable, true);
    assert.notEqual(guard.answers(sinks(), 'chat', KEY, book), null);
  });

  test('scanning on but every detector off: none', () => {
    assert.equal(createRequestGuard(configWith({ detectors: { secrets: 'off' }, answers: { scan: true } })).answers(sinks(), 'chat', KEY, new PlaceholderBook()), null);
  });
});

describe('fail closed', () => {
  test('a whole answer whose scan throws: guard_failed (500), logged by the error\'s name, never the text', () => {
    const s = sinks();
    const guard = createRequestGuard(configWith(SCANNING), faulty).answers(s, 'chat', KEY, new PlaceholderBook());
    assert.ok(guard !== null);
    const completion: ChatCompletion = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: `key ${AWS_KEY}`, refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }] };
    assert.throws(() => guardCompletion(guard, completion), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, 'guard_failed');
      assert.equal(error.status, 500);
      assert.equal(error.message.includes(AWS_KEY), false);
      return true;
    });
    assert.deepEqual(s.errors, [['the egress guard failed on an answer; the answer was cut', { requestId: 'req_1', error: 'TypeError' }]]);
  });

  test('a stream whose scan throws before the first event: the pump throws guard_failed (the JSON 500), nothing written', async () => {
    const answerGuard = createRequestGuard(configWith(SCANNING), faulty).answers(sinks(), 'chat', KEY, new PlaceholderBook());
    let opened = false;
    const control: PumpControl = { open: () => ((opened = true), { data: async () => undefined, end: () => undefined }), endedForShutdown: () => false, clientGone: () => false, onStreamError: () => undefined, answerGuard };
    async function* chunks(): AsyncGenerator<ChatCompletionChunk> {
      yield { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: `The key is ${AWS_KEY}, and this sentence runs on long past the hold-back window.` }, finish_reason: null }] };
    }
    await assert.rejects(pumpEventStream(streamOfChunks(chunks()), { alias: 'chat', includeUsage: false }, control), (error: unknown) => error instanceof ApiError && error.code === 'guard_failed' && error.status === 500);
    assert.equal(opened, false);
  });

  test('a stream whose scan throws after the first event: the guard_failed error frame, nothing of the text', async () => {
    const s = sinks();
    const answerGuard = createRequestGuard(configWith(SCANNING), faulty).answers(s, 'chat', KEY, new PlaceholderBook());
    const frames: string[] = [];
    const errors: string[] = [];
    const sink: EventSink = {
      data: async (payload) => void frames.push(payload),
      end: () => undefined,
    };
    const control: PumpControl = { open: () => sink, endedForShutdown: () => false, clientGone: () => false, onStreamError: (code) => void errors.push(code), answerGuard };
    const up = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: 'stop' | null = null): ChatCompletionChunk => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
    async function* chunks(): AsyncGenerator<ChatCompletionChunk> {
      yield up({ role: 'assistant', content: '' });
      yield up({ content: `The key is ${AWS_KEY}, and this sentence runs on long past the hold-back window of sixty-four characters.` });
      yield up({}, 'stop');
    }
    assert.equal(await pumpEventStream(streamOfChunks(chunks()), { alias: 'chat', includeUsage: false }, control), false);
    assert.deepEqual(errors, ['guard_failed']);
    assert.equal(frames.length, 2);
    assert.deepEqual(JSON.parse(frames[0] as string), { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'chat', choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] });
    assert.equal((JSON.parse(frames[1] as string) as { error: { code: string } }).error.code, 'guard_failed');
    assert.equal(frames.join('').includes('The key'), false);
  });
});

test('an answer\'s findings: appended to the request\'s on the line, counted in the tally', () => {
  const s = sinks();
  s.log['guard'] = 'card_number:messages[0].content:mask';
  noteAnswerFindings(s, [
    { detector: 'aws_access_key', path: 'answer.choices[0].message.content', action: 'mask' },
    { detector: 'card_number', path: 'answer.choices[0].message.content', action: 'block' },
  ]);
  assert.equal(s.log['guard'], 'card_number:messages[0].content:mask,aws_access_key:answer.choices[0].message.content:mask,card_number:answer.choices[0].message.content:block');
  assert.deepEqual(s.tally, { blocked: 1, masked: 1, logged: 0 });
  noteAnswerFindings(s, []);
  assert.deepEqual(s.tally, { blocked: 1, masked: 1, logged: 0 });
});
