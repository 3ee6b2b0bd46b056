// The named-event stream pump (the Messages door's part) with a recording sink: a translated stream
// (chat chunks -> Anthropic's grammar), a passed-through one (an Anthropic
// upstream's events as they came, message_start's model renamed), usage noted
// from either, and failures before and after the first event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawEventChunk, setRawErrorEvent } from '../../src/chat/messages-origin.ts';
import type { ChatCompletionChunk, Usage } from '../../src/chat/types.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { pumpDoorStream, type DoorPumpControl, type FrameSink } from '../../src/gateway/door-stream-pump.ts';
import { messagesDoorStream } from '../../src/gateway/messages-stream.ts';
import { checkMessageStream } from '../support/anthropic-message-stream-checker.ts';
import { streamOfChunks } from '../support/drive-provider.ts';

type Choice = ChatCompletionChunk['choices'][number];

function chunk(choices: Choice[], usage?: Usage): ChatCompletionChunk {
  const c: ChatCompletionChunk = { id: 'up-1', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices };
  if (usage !== undefined) c.usage = usage;
  return c;
}

const usage: Usage = { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32, prompt_tokens_details: { cached_tokens: 10 } };

async function* fromArray(items: ChatCompletionChunk[], failAfter?: Error): AsyncGenerator<ChatCompletionChunk> {
  for (const item of items) yield item;
  if (failAfter !== undefined) throw failAfter;
}

interface Recorded {
  text: string;
  ended: boolean;
  errors: string[];
  usages: Usage[];
}

function recorder(): { recorded: Recorded; control: DoorPumpControl } {
  const recorded: Recorded = { text: '', ended: false, errors: [], usages: [] };
  const sink: FrameSink = {
    async frames(text) {
      recorded.text += text;
    },
    end() {
      recorded.ended = true;
    },
  };
  return {
    recorded,
    control: {
      open: () => sink,
      endedForShutdown: () => false,
      clientGone: () => false,
      onStreamError: (code) => recorded.errors.push(code),
      noteUsage: (u) => recorded.usages.push(u),
    },
  };
}

test('a translated stream: Anthropic grammar, the alias as model, usage in message_delta and noted', async () => {
  const { recorded, control } = recorder();
  const chunks = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'Hi' }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    chunk([], usage),
  ];
  const ended = await pumpDoorStream(streamOfChunks(fromArray(chunks)), messagesDoorStream('claude-opus-5-5', () => 41), control);
  assert.equal(ended, true);
  assert.equal(recorded.ended, true);
  const checked = checkMessageStream(recorded.text);
  assert.deepEqual(checked.events, ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  assert.equal(checked.message.model, 'claude-opus-5-5');
  assert.deepEqual(checked.message.content, [{ type: 'text', text: 'Hi' }]);
  assert.equal(checked.message.stop_reason, 'end_turn');
  assert.deepEqual(checked.message.usage, { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, output_tokens: 2 });
  assert.match(recorded.text, /"usage":\{"input_tokens":41,/);
  assert.deepEqual(recorded.usages, [usage]);
});

test('a passed-through stream: every event as it came, only message_start renamed; usage from the translation', async () => {
  const { recorded, control } = recorder();
  const start = '{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"claude-opus-upstream","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":1}}}';
  const thinking = '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}';
  const signature = '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}';
  const chunks = [
    rawEventChunk({ event: 'message_start', data: start, translated: [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])] }),
    rawEventChunk({ event: 'ping', data: '{"type": "ping"}', translated: [] }),
    rawEventChunk({ event: 'content_block_start', data: thinking, translated: [] }),
    rawEventChunk({ event: 'content_block_delta', data: signature, translated: [] }),
    rawEventChunk({ event: 'message_stop', data: '{"type":"message_stop"}', translated: [chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]), chunk([], usage)] }),
  ];
  assert.equal(await pumpDoorStream(streamOfChunks(fromArray(chunks)), messagesDoorStream('claude-opus-5-5', () => 41), control), true);
  assert.equal(
    recorded.text,
    `event: message_start\ndata: ${start.replace('claude-opus-upstream', 'claude-opus-5-5')}\n\n` +
      'event: ping\ndata: {"type": "ping"}\n\n' +
      `event: content_block_start\ndata: ${thinking}\n\n` +
      `event: content_block_delta\ndata: ${signature}\n\n` +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  );
  assert.deepEqual(recorded.usages, [usage]);
});

test('a failure after the first event: an error event in Anthropic shape, then the end', async () => {
  const { recorded, control } = recorder();
  const chunks = [chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }])];
  const broken = new UpstreamError('upstream_stream_truncated', 'The upstream stream ended before the completion finished.');
  assert.equal(await pumpDoorStream(streamOfChunks(fromArray(chunks, broken)), messagesDoorStream('a', () => 1), control), false);
  assert.equal(recorded.ended, true);
  assert.deepEqual(recorded.errors, ['upstream_stream_truncated']);
  assert.match(recorded.text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The upstream stream ended before the completion finished."\}\}\n\n$/);
  assert.equal(checkMessageStream(recorded.text).error?.type, 'api_error');
});

test('an unexpected failure after the first event is the generic api_error; before it, the caller gets the throw', async () => {
  const { recorded, control } = recorder();
  const chunks = [chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }])];
  assert.equal(await pumpDoorStream(streamOfChunks(fromArray(chunks, new TypeError('internal detail'))), messagesDoorStream('a', () => 1), control), false);
  assert.deepEqual(recorded.errors, ['internal_error']);
  assert.doesNotMatch(recorded.text, /internal detail/);
  assert.match(recorded.text, /"type":"api_error","message":"The server had an error while processing your request."/);
  const early = recorder();
  await assert.rejects(pumpDoorStream(streamOfChunks(fromArray([], new UpstreamError('upstream_error', 'x'))), messagesDoorStream('a', () => 1), early.control), /x/);
  assert.equal(early.recorded.text, '');
});

test("an Anthropic upstream's own error event after the first event goes as it came, its type kept", async () => {
  const { recorded, control } = recorder();
  const start = '{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}';
  const overloaded = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
  const failure = new UpstreamError('upstream_error', 'Overloaded');
  setRawErrorEvent(failure, { event: 'error', data: overloaded, translated: [] });
  const chunks = [rawEventChunk({ event: 'message_start', data: start, translated: [] })];
  assert.equal(await pumpDoorStream(streamOfChunks(fromArray(chunks, failure)), messagesDoorStream('a', () => 1), control), false);
  assert.deepEqual(recorded.errors, ['upstream_error']);
  assert.equal(recorded.text.slice(recorded.text.indexOf('event: error')), `event: error\ndata: ${overloaded}\n\n`);
});

test('a passed-through stream: thinking deltas count as generated output for a cut stream, and the estimate is never asked for', async () => {
  const { recorded, control } = recorder();
  let counted: { generatedBytes: number } | undefined;
  control.onRelay = (r) => {
    counted = r;
  };
  const start = '{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}';
  const thinking = '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think about the drawbridge."}}';
  const chunks = [rawEventChunk({ event: 'message_start', data: start, translated: [] }), rawEventChunk({ event: 'content_block_delta', data: thinking, translated: [] })];
  const cut = new UpstreamError('upstream_stream_truncated', 'cut');
  const estimate = (): number => assert.fail('the estimate is only for translated streams');
  assert.equal(await pumpDoorStream(streamOfChunks(fromArray(chunks, cut)), messagesDoorStream('a', estimate), control), false);
  assert.equal(counted?.generatedBytes, thinking.length);
  assert.match(recorded.text, /thinking_delta/);
});
