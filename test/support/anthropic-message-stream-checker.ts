// A strict checker of Anthropic's streamed Messages grammar, over the bytes a
// client receives: event-stream framing (parsed by ../../src/sse/), then every
// rule of https://platform.claude.com/docs/en/build-with-claude/streaming that
// clients depend on, then the message rebuilt the way the official SDK's
// MessageStream accumulates it (src/lib/MessageStream.ts): message_delta's
// output_tokens always, its input and cache counts when not null. Throws an
// AssertionError naming the event and the rule broken. A tool_use block whose
// input is not a whole JSON object is allowed only as the last block of a
// message that stops for max_tokens (the output limit cut the call; clients do
// not run it): it keeps `partial_json` and no `input`.
import assert from 'node:assert/strict';
import { createEventStreamParser } from '../../src/sse/event-stream-parser.ts';

export interface StreamedBlock {
  type: 'text' | 'tool_use' | 'thinking';
  text?: string;
  /** thinking: the thinking_delta pieces joined, and the signature_delta. */
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  /** tool_use: the input_json_delta pieces joined, then parsed. */
  input?: unknown;
  /** tool_use cut by max_tokens: the pieces joined, not a whole object. */
  partial_json?: string;
}

export interface CheckedMessageStream {
  /** Event names in order. */
  events: string[];
  message: {
    id: string;
    model: string;
    content: StreamedBlock[];
    stop_reason: string | null;
    stop_sequence: string | null;
    usage: Record<string, number>;
  };
  /** The error event's `error`, when the stream ended with one. */
  error?: { type: string; message: string };
}

const STOP_REASONS = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

export function checkMessageStream(text: string): CheckedMessageStream {
  const raw: Array<{ event: string; data: string }> = [];
  const parser = createEventStreamParser({ onEvent: (event) => raw.push({ event: event.event, data: event.data }) });
  parser.feed(text);
  parser.end();
  assert.ok(text.endsWith('\n\n'), 'the stream ends with a complete event');

  const names: string[] = [];
  let message: CheckedMessageStream['message'] | undefined;
  let open: { index: number; json: string } | undefined;
  /** A tool_use block stopped without a whole input: why, until max_tokens explains it. */
  let cut: string | undefined;
  let deltaSeen = false;
  let stopped = false;
  let error: CheckedMessageStream['error'];
  for (const [n, { event, data }] of raw.entries()) {
    const where = `event ${n} (${event})`;
    assert.ok(!stopped && error === undefined, `${where}: nothing may follow message_stop or error`);
    names.push(event);
    const body = JSON.parse(data) as Record<string, any>;
    assert.equal(body['type'], event, `${where}: data.type equals the event name`);
    if (event === 'ping') continue;
    if (event === 'error') {
      assert.deepEqual(Object.keys(body), ['type', 'error'], `${where}: shape`);
      assert.equal(typeof body['error'].type, 'string', `${where}: error.type`);
      assert.equal(typeof body['error'].message, 'string', `${where}: error.message`);
      error = body['error'];
      continue;
    }
    if (event === 'message_start') {
      assert.equal(message, undefined, `${where}: message_start only once`);
      const m = body['message'];
      assert.match(m.id, /^msg_/, `${where}: message id`);
      assert.equal(m.type, 'message');
      assert.equal(m.role, 'assistant');
      assert.deepEqual(m.content, [], `${where}: empty content`);
      assert.equal(m.stop_reason, null);
      assert.equal(m.stop_sequence, null);
      assert.equal(typeof m.usage.input_tokens, 'number', `${where}: usage.input_tokens`);
      assert.equal(typeof m.usage.output_tokens, 'number', `${where}: usage.output_tokens`);
      message = { id: m.id, model: m.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...m.usage } };
      continue;
    }
    assert.ok(message !== undefined, `${where}: before message_start`);
    switch (event) {
      case 'content_block_start': {
        assert.equal(open, undefined, `${where}: a block starts only after the previous one stopped`);
        assert.equal(cut, undefined, `${where}: a block after a tool_use whose input is not whole`);
        assert.ok(!deltaSeen, `${where}: after message_delta`);
        assert.equal(body['index'], message.content.length, `${where}: index counts the blocks`);
        const block = body['content_block'];
        if (block.type === 'text') {
          assert.deepEqual(block, { type: 'text', text: '' }, `${where}: text block starts empty`);
          message.content.push({ type: 'text', text: '' });
        } else if (block.type === 'thinking') {
          assert.deepEqual(block, { type: 'thinking', thinking: '', signature: '' }, `${where}: thinking block starts empty`);
          message.content.push({ type: 'thinking', thinking: '', signature: '' });
        } else {
          assert.equal(block.type, 'tool_use', `${where}: block type`);
          assert.ok(typeof block.id === 'string' && block.id !== '', `${where}: tool_use id`);
          assert.ok(typeof block.name === 'string' && block.name !== '', `${where}: tool_use name`);
          assert.deepEqual(block.input, {}, `${where}: tool_use starts with input {}`);
          message.content.push({ type: 'tool_use', id: block.id, name: block.name, input: {} });
        }
        open = { index: body['index'], json: '' };
        break;
      }
      case 'content_block_delta': {
        assert.ok(open !== undefined && body['index'] === open.index, `${where}: a delta belongs to the open block`);
        const block = message.content[open.index] as StreamedBlock;
        const delta = body['delta'];
        if (block.type === 'text') {
          assert.equal(delta.type, 'text_delta', `${where}: text blocks take text_delta`);
          assert.equal(typeof delta.text, 'string');
          block.text += delta.text;
        } else if (block.type === 'thinking') {
          if (delta.type === 'thinking_delta') {
            assert.equal(block.signature, '', `${where}: thinking after the signature`);
            assert.equal(typeof delta.thinking, 'string');
            block.thinking += delta.thinking;
          } else {
            assert.equal(delta.type, 'signature_delta', `${where}: thinking blocks take thinking_delta and signature_delta`);
            assert.ok(typeof delta.signature === 'string' && delta.signature !== '', `${where}: signature`);
            assert.equal(block.signature, '', `${where}: one signature_delta`);
            block.signature = delta.signature;
          }
        } else {
          assert.equal(delta.type, 'input_json_delta', `${where}: tool_use blocks take input_json_delta`);
          assert.equal(typeof delta.partial_json, 'string');
          open.json += delta.partial_json;
        }
        break;
      }
      case 'content_block_stop': {
        assert.ok(open !== undefined && body['index'] === open.index, `${where}: stops the open block`);
        const block = message.content[open.index] as StreamedBlock;
        // Without its signature a thinking block is refused when the client sends it back.
        if (block.type === 'thinking') assert.notEqual(block.signature, '', `${where}: thinking block without its signature`);
        if (block.type === 'tool_use') {
          // An input that never arrived would leave the SDK's `input: {}`: the
          // empty-input failure that sends agents into a loop.
          let input: unknown;
          try {
            input = JSON.parse(open.json);
          } catch {
            // Judged at message_delta: only max_tokens explains it.
          }
          if (open.json === '') cut = `${where}: tool_use input never arrived`;
          else if (typeof input !== 'object' || input === null || Array.isArray(input)) cut = `${where}: tool input is not a JSON object: ${open.json}`;
          if (cut === undefined) block.input = input;
          else {
            delete block.input;
            block.partial_json = open.json;
          }
        }
        open = undefined;
        break;
      }
      case 'message_delta': {
        assert.equal(open, undefined, `${where}: every block stopped before message_delta`);
        assert.ok(!deltaSeen, `${where}: message_delta only once`);
        deltaSeen = true;
        assert.ok(STOP_REASONS.has(body['delta'].stop_reason), `${where}: stop_reason ${body['delta'].stop_reason}`);
        assert.ok(Object.hasOwn(body['delta'], 'stop_sequence'), `${where}: stop_sequence present`);
        if (cut !== undefined) assert.equal(body['delta'].stop_reason, 'max_tokens', cut);
        message.stop_reason = body['delta'].stop_reason;
        message.stop_sequence = body['delta'].stop_sequence;
        const usage = body['usage'];
        assert.equal(typeof usage.output_tokens, 'number', `${where}: usage.output_tokens`);
        message.usage['output_tokens'] = usage.output_tokens;
        for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
          if (usage[key] !== undefined && usage[key] !== null) message.usage[key] = usage[key];
        }
        break;
      }
      case 'message_stop':
        assert.ok(deltaSeen, `${where}: message_delta before message_stop`);
        stopped = true;
        break;
      default:
        assert.fail(`${where}: unknown event`);
    }
  }
  assert.ok(message !== undefined || error !== undefined, 'the stream has a message_start or an error');
  assert.ok(stopped || error !== undefined, 'the stream ends with message_stop or error');
  const checked: CheckedMessageStream = {
    events: names,
    message: message ?? { id: '', model: '', content: [], stop_reason: null, stop_sequence: null, usage: {} },
  };
  if (error !== undefined) checked.error = error;
  return checked;
}
