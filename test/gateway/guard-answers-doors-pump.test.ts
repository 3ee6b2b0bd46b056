// The door stream pump with an answer guard: failing closed when the real
// guard's scanner throws (the door's error events, nothing of the text; before
// the first event, the throw for the error boundary), and an upstream that
// fails mid-hold (the held text out, scanned, ahead of the failure).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawEventChunk, setRawErrorEvent } from '../../src/chat/messages-origin.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { ApiError, UpstreamError } from '../../src/errors/api-error.ts';
import { pumpDoorStream, type DoorPumpControl, type FrameSink } from '../../src/gateway/door-stream-pump.ts';
import { messagesDoorStream } from '../../src/gateway/messages-stream.ts';
import { createRequestGuard, type GuardSinks } from '../../src/gateway/request-guard.ts';
import { responsesDoorStream } from '../../src/gateway/responses-stream.ts';
import { PlaceholderBook, type AnswerGuard } from '../../src/guard/answer-guard.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { checkMessageStream } from '../support/anthropic-message-stream-checker.ts';
import { streamOfChunks } from '../support/drive-provider.ts';
import { checkResponseStream } from '../support/responses-stream-checker.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { at, created, ev, msgItem, start, stop, textDelta, textPart, textStart } from './guard-doors-fixtures.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
/** An answer guard whose scanner throws. */
function faultyGuard(): AnswerGuard {
  const config = parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { chat: { provider: 'demo' } }, guard: { detectors: { secrets: 'mask' }, answers: { scan: true, holdBackChars: 64 } } }, null, '/tmp');
  const faulty = { lastSteps: 0, scan: (): void => { throw new TypeError('boom'); } };
  const logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
  const sinks: GuardSinks = { log: {}, requestId: 'req_1', logger: logger as unknown as GuardSinks['logger'] };
  const guard = createRequestGuard(config, faulty).answers(sinks, 'chat', { id: 'key_1', expiresAt: null, allowedAliases: null, limits: NO_LIMITS }, new PlaceholderBook());
  assert.ok(guard !== null);
  return guard;
}

function recorder(answerGuard: AnswerGuard): { text: () => string; errors: string[]; control: DoorPumpControl } {
  let text = '';
  const errors: string[] = [];
  const sink: FrameSink = {
    async frames(t) {
      text += t;
    },
    end: () => undefined,
  };
  return { text: () => text, errors, control: { open: () => sink, endedForShutdown: () => false, clientGone: () => false, onStreamError: (code) => void errors.push(code), answerGuard } };
}

async function* items<T>(list: readonly T[]): AsyncGenerator<T> {
  for (const item of list) yield item;
}

const carrier = (event: string, data: Record<string, unknown>) => rawEventChunk({ event, data: JSON.stringify(data), translated: [] });

test('fail closed: a passed-through Messages stream whose scan throws ends with the error event, nothing of the text', async () => {
  const { text, errors, control } = recorder(faultyGuard());
  const chunks = [
    carrier('message_start', start),
    carrier('content_block_start', textStart(0)),
    carrier('content_block_delta', textDelta(0, `The key is ${AWS_KEY}, and this sentence runs on long past the hold-back window of sixty-four characters.`)),
    carrier('content_block_stop', stop(0)),
  ];
  assert.equal(await pumpDoorStream(streamOfChunks(items(chunks)), messagesDoorStream('a', () => 1), control), false);
  assert.deepEqual(errors, ['guard_failed']);
  assert.equal(text().includes('The key'), false);
  const checked = checkMessageStream(text());
  assert.deepEqual(checked.events, ['message_start', 'content_block_start', 'error']);
  assert.equal(checked.error?.type, 'api_error');
});

test('fail closed: a translated Responses stream whose scan throws ends failed (guard_failed); before the first event the pump throws it', async () => {
  const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
  const role: ChatCompletionChunk = { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
  const said: ChatCompletionChunk = { ...base, choices: [{ index: 0, delta: { content: `The key is ${AWS_KEY}, and this sentence runs on long past the hold-back window of sixty-four characters.` }, finish_reason: null }] };
  const { text, errors, control } = recorder(faultyGuard());
  assert.equal(await pumpDoorStream(streamOfChunks(items([role, said])), responsesDoorStream({ alias: 'a' }), control), false);
  assert.deepEqual(errors, ['guard_failed']);
  assert.equal(text().includes('The key'), false);
  const checked = checkResponseStream(text());
  assert.deepEqual(checked.events, ['response.created', 'response.in_progress', 'response.failed', 'error']);
  assert.equal(checked.error?.code, 'guard_failed');

  const first = recorder(faultyGuard());
  await assert.rejects(pumpDoorStream(streamOfChunks(items([said])), responsesDoorStream({ alias: 'a' }), first.control), (error: unknown) => error instanceof ApiError && error.code === 'guard_failed');
  assert.equal(first.text(), '');
});

test('an upstream that fails mid-hold: the held text of a translated stream goes out scanned, then the error event', async () => {
  const config = parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { chat: { provider: 'demo' } }, guard: { detectors: { secrets: 'mask' }, answers: { scan: true, holdBackChars: 64 } } }, null, '/tmp');
  const logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
  const sinks: GuardSinks = { log: {}, requestId: 'req_1', logger: logger as unknown as GuardSinks['logger'] };
  const guard = createRequestGuard(config).answers(sinks, 'chat', { id: 'key_1', expiresAt: null, allowedAliases: null, limits: NO_LIMITS }, new PlaceholderBook());
  assert.ok(guard !== null);
  const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
  const said = (content: string): ChatCompletionChunk => ({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] });
  async function* failing(): AsyncGenerator<ChatCompletionChunk> {
    yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
    yield said(`short, with ${AWS_KEY}`);
    throw new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.');
  }
  const { text, errors, control } = recorder(guard);
  assert.equal(await pumpDoorStream(streamOfChunks(failing()), messagesDoorStream('a', () => 1), control), false);
  assert.deepEqual(errors, ['upstream_stream_truncated']);
  const checked = checkMessageStream(text());
  assert.deepEqual(checked.events, ['message_start', 'content_block_start', 'content_block_delta', 'error']);
  assert.deepEqual(checked.message.content, [{ type: 'text', text: 'short, with [AWS_ACCESS_KEY_1]' }]);
  assert.equal(text().includes(AWS_KEY), false);
});

test('a passed-through stream that fails mid-hold: the held text goes out, then the failure (Responses: its output as the client got it)', async () => {
  async function* failing<T>(list: readonly T[], error: Error): AsyncGenerator<T> {
    yield* list;
    throw error;
  }
  const messages = recorder(new FakeAnswerGuard());
  const cut = new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.');
  const messageChunks = [carrier('message_start', start), carrier('content_block_start', textStart(0)), carrier('content_block_delta', textDelta(0, 'hi SECRET there'))];
  assert.equal(await pumpDoorStream(streamOfChunks(failing(messageChunks, cut)), messagesDoorStream('a', () => 1), messages.control), false);
  const checked = checkMessageStream(messages.text());
  assert.deepEqual(checked.events, ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'error']);
  assert.deepEqual(checked.message.content, [{ type: 'text', text: 'hi [SECRET_1] there' }]);

  const responses = recorder(new FakeAnswerGuard());
  const failed = { type: 'response.failed', sequence_number: 4, response: { ...created.response, status: 'failed', output: [msgItem('in_progress', [textPart('abc SECRET xyz')])] } };
  const failure = new UpstreamError('upstream_error', 'The upstream failed.');
  setRawErrorEvent(failure, ev('response.failed', failed));
  const responseChunks = [
    carrier('response.created', created),
    carrier('response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('in_progress', []) }),
    carrier('response.content_part.added', { type: 'response.content_part.added', sequence_number: 2, ...at, part: textPart('') }),
    carrier('response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: 'abc SECRET xyz', logprobs: [] }),
  ];
  assert.equal(await pumpDoorStream(streamOfChunks(failing(responseChunks, failure)), responsesDoorStream({ alias: 'a' }), responses.control), false);
  const events = responses.text().split('\n\n').filter((e) => e !== '').map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 'data: '.length)) as Record<string, unknown>);
  assert.deepEqual(events.slice(3), [
    { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: 'abc [SECRET_1]', logprobs: [] },
    { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: ' xyz', logprobs: [] },
    { ...failed, sequence_number: 5, response: { ...failed.response, model: 'a', output: [msgItem('in_progress', [textPart('abc [SECRET_1] xyz')])] } },
  ]);
});

test('a passed-through Responses stream that goes from its deltas to its end with no done events: the held text goes out, scanned, before the terminal event', async () => {
  const responses = recorder(new FakeAnswerGuard());
  const whole = 'abc SECRET xyz';
  const chunks = [
    carrier('response.created', created),
    carrier('response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: msgItem('in_progress', []) }),
    carrier('response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 2, ...at, delta: whole, logprobs: [] }),
    carrier('response.completed', { type: 'response.completed', sequence_number: 3, response: { ...created.response, status: 'completed', output: [msgItem('completed', [textPart(whole)])] } }),
  ];
  assert.equal(await pumpDoorStream(streamOfChunks(items(chunks)), responsesDoorStream({ alias: 'a' }), responses.control), true);
  const events = responses.text().split('\n\n').filter((e) => e !== '').map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 'data: '.length)) as Record<string, unknown>);
  assert.deepEqual(events.slice(2), [
    { type: 'response.output_text.delta', sequence_number: 2, ...at, delta: 'abc [SECRET_1]', logprobs: [] },
    { type: 'response.output_text.delta', sequence_number: 3, ...at, delta: ' xyz', logprobs: [] },
    { type: 'response.completed', sequence_number: 4, response: { ...created.response, model: 'a', status: 'completed', output: [msgItem('completed', [textPart('abc [SECRET_1] xyz')])] } },
  ]);
});
