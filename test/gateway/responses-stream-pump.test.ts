// The named-event pump with the Responses door's part: a passed-through
// stream's own failure event reaches the client as it came (its code kept,
// the alias as the response's model), not replaced by the gateway's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawEventChunk, setRawErrorEvent } from '../../src/chat/messages-origin.ts';
import { UpstreamError } from '../../src/errors/api-error.ts';
import { pumpDoorStream, type DoorPumpControl, type FrameSink } from '../../src/gateway/door-stream-pump.ts';
import { responsesDoorStream } from '../../src/gateway/responses-stream.ts';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { streamOfChunks } from '../support/drive-provider.ts';

async function* fromArray(items: ChatCompletionChunk[], failAfter: Error): AsyncGenerator<ChatCompletionChunk> {
  for (const item of items) yield item;
  throw failAfter;
}

test("a passed-through stream's response.failed goes as it came, with the alias as model", async () => {
  let text = '';
  const errors: string[] = [];
  const sink: FrameSink = {
    async frames(t) {
      text += t;
    },
    end: () => undefined,
  };
  const control: DoorPumpControl = { open: () => sink, endedForShutdown: () => false, clientGone: () => false, onStreamError: (code) => errors.push(code) };
  const created = '{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"gpt-upstream","status":"in_progress","output":[]}}';
  const failed = '{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","object":"response","model":"gpt-upstream","status":"failed","error":{"code":"insufficient_quota","message":"Quota exceeded"},"output":[]}}';
  const failure = new UpstreamError('upstream_error', 'Quota exceeded');
  setRawErrorEvent(failure, { event: 'response.failed', data: failed, translated: [] });
  const ended = await pumpDoorStream(streamOfChunks(fromArray([rawEventChunk({ event: 'response.created', data: created, translated: [] })], failure)), responsesDoorStream({ alias: 'service-code' }), control);
  assert.equal(ended, false);
  assert.deepEqual(errors, ['upstream_error']);
  assert.equal(
    text,
    `event: response.created\ndata: ${created.replace('gpt-upstream', 'service-code')}\n\n` + `event: response.failed\ndata: ${failed.replace('gpt-upstream', 'service-code')}\n\n`,
  );
});

test('a shutdown in the middle of a translated stream ends it with response.failed and error, numbered after what was written', async () => {
  const chunk: ChatCompletionChunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] };
  let written = '';
  let make: (() => string) | undefined;
  const control: DoorPumpControl = {
    open: () => ({ frames: async (t: string) => void (written += t), end: () => undefined }),
    endedForShutdown: () => false,
    clientGone: () => false,
    onStreamError: () => undefined,
    onShutdownEvents: (m) => (make = m),
  };
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  async function* held(): AsyncGenerator<ChatCompletionChunk> {
    yield chunk;
    await gate;
  }
  const pumping = pumpDoorStream(streamOfChunks(held()), responsesDoorStream({ alias: 'service-code' }), control);
  await new Promise((resolve) => setImmediate(resolve));
  const events = make!();
  const last = Math.max(...[...written.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1])));
  assert.match(events, new RegExp(`^event: response\\.failed\\ndata: \\{"type":"response\\.failed","sequence_number":${last + 1},`));
  assert.match(events, new RegExp(`event: error\\ndata: \\{"type":"error","sequence_number":${last + 2},"code":"server_shutting_down"`));
  release();
  await pumping;
});
