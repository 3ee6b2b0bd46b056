// A strict checker of the Responses API stream grammar the gateway writes, over
// the bytes a client receives: event-stream framing (parsed by ../../src/sse/),
// then every rule of OpenAI's streaming events that clients depend on
// (https://developers.openai.com/api/reference/resources/responses/streaming-events,
// openai-node 7.57 internal/responses/response-accumulator.js and
// lib/responses/ResponseStream.js), then the response rebuilt the way that
// ResponseStream accumulates it: the snapshot from response.created, items
// appended at their output_index, parts at their content_index, deltas
// concatenated, each `.done` replacing what was accumulated, and the terminal
// event's response taking over (its output must equal what the events built),
// with output_text the output_text parts joined. Throws an AssertionError
// naming the event and the rule broken.
//
// Stricter than OpenAI's own streams where the gateway promises more: one
// output item open at a time (each done before the next is added), one part
// open at a time, sequence numbers consecutive from 0, and nothing after the
// terminal event except one `error` after response.failed. A function_call
// left without done events is allowed only when response.incomplete ends the
// stream (the output limit cut it) and the call is not in its output.
import assert from 'node:assert/strict';
import { createEventStreamParser } from '../../src/sse/event-stream-parser.ts';

type Json = Record<string, any>;

export interface CheckedResponseStream {
  /** Event types in order. */
  events: string[];
  /** The terminal event's response, with the SDK's output_text. */
  response: Json & { output_text: string };
  /** The `error` event's fields, when the stream ended with one. */
  error?: { code: string | null; message: string; param: string | null };
}

/** Keys the schema requires of every Response (output_text is the SDK's own). */
const REQUIRED_RESPONSE_KEYS = [
  'id',
  'object',
  'created_at',
  'error',
  'incomplete_details',
  'access_programs',
  'instructions',
  'metadata',
  'model',
  'output',
  'parallel_tool_calls',
  'temperature',
  'tool_choice',
  'tools',
  'top_p',
];

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

interface OpenItem {
  index: number;
  item: Json;
  /** function_call: the argument pieces joined; `done` once function_call_arguments.done came. */
  args: string;
  argsDone: boolean;
  part: { index: number; kind: 'output_text' | 'refusal'; text: string; textDone: boolean } | null;
}

export function checkResponseStream(text: string): CheckedResponseStream {
  const raw: Array<{ event: string; data: string; id: string | undefined }> = [];
  const parser = createEventStreamParser({ onEvent: (event) => raw.push({ event: event.event, data: event.data, id: event.id }) });
  parser.feed(text);
  parser.end();
  assert.ok(text.endsWith('\n\n'), 'the stream ends with a complete event');

  const names: string[] = [];
  let snapshot: Json | undefined;
  let open: OpenItem | undefined;
  const done: Json[] = [];
  const itemIds = new Set<string>();
  const callIds = new Set<string>();
  let nextOutputIndex = 0;
  let terminal: Json | undefined;
  let terminalType: string | undefined;
  let error: CheckedResponseStream['error'];

  for (const [n, { event, data, id }] of raw.entries()) {
    const where = `event ${n} (${event})`;
    assert.equal(id, undefined, `${where}: no SSE id field (openai-python mis-dispatches after one)`);
    assert.ok(error === undefined, `${where}: nothing may follow error`);
    names.push(event);
    const body = JSON.parse(data) as Json;
    assert.equal(body['type'], event, `${where}: data.type equals the event name`);
    assert.equal(body['sequence_number'], n, `${where}: sequence_number counts the events from 0`);
    if (event === 'error') {
      assert.ok(terminalType === undefined || terminalType === 'response.failed', `${where}: error only after response.failed or instead of a terminal event`);
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'param', 'sequence_number', 'type'], `${where}: the published flat shape`);
      assert.ok(body['code'] === null || typeof body['code'] === 'string', `${where}: code`);
      assert.equal(typeof body['message'], 'string', `${where}: message`);
      assert.ok(body['param'] === null || typeof body['param'] === 'string', `${where}: param`);
      error = { code: body['code'], message: body['message'], param: body['param'] };
      continue;
    }
    assert.equal(terminalType, undefined, `${where}: nothing but error may follow ${terminalType}`);
    if (n === 0) {
      assert.equal(event, 'response.created', `${where}: the stream starts with response.created`);
      const response = checkResponse(body['response'], where, 'in_progress');
      assert.deepEqual(response['output'], [], `${where}: output starts empty`);
      snapshot = response;
      continue;
    }
    assert.ok(snapshot !== undefined);
    if (event === 'response.in_progress') {
      assert.equal(n, 1, `${where}: response.in_progress right after response.created`);
      const response = checkResponse(body['response'], where, 'in_progress');
      assert.equal(response['id'], snapshot['id'], `${where}: the same response`);
      continue;
    }
    if (TERMINAL.has(event)) {
      const status = event.slice('response.'.length);
      const response = checkResponse(body['response'], where, status);
      assert.equal(response['id'], snapshot['id'], `${where}: the same response`);
      assert.equal(response['model'], snapshot['model'], `${where}: the same model`);
      assert.equal(response['created_at'], snapshot['created_at'], `${where}: the same created_at`);
      assert.deepEqual(response['output'], done, `${where}: output is the items done, in order`);
      if (event === 'response.completed') {
        assert.equal(open, undefined, `${where}: an item is still open`);
        assert.equal(typeof response['completed_at'], 'number', `${where}: completed_at`);
        assert.equal(response['incomplete_details'], null);
        assert.equal(response['error'], null);
      } else {
        assert.equal(response['completed_at'], null, `${where}: completed_at only when completed`);
      }
      if (event === 'response.incomplete') {
        assert.ok(['max_output_tokens', 'content_filter'].includes(response['incomplete_details']?.reason), `${where}: incomplete_details.reason`);
        assert.equal(response['error'], null);
        // Only a call the cut left unfinished may stay open; it is not in the output.
        if (open !== undefined) assert.equal(open.item['type'], 'function_call', `${where}: a message left open`);
      }
      if (event === 'response.failed') {
        assert.deepEqual(Object.keys(response['error']).sort(), ['code', 'message'], `${where}: error {code, message}`);
        assert.ok(['server_error', 'rate_limit_exceeded'].includes(response['error'].code), `${where}: error.code`);
        assert.equal(response['incomplete_details'], null);
        assert.equal(response['usage'], undefined, `${where}: no usage on a failure`);
      }
      if (response['usage'] !== undefined) checkUsage(response['usage'], where);
      terminal = response;
      terminalType = event;
      continue;
    }
    checkOutputEvent(event, body, where);
  }
  assert.ok(terminal !== undefined, 'the stream ends with response.completed, response.incomplete or response.failed');
  assert.ok(terminalType !== 'response.failed' || error !== undefined, 'response.failed is followed by error');
  let outputText = '';
  for (const item of terminal['output'] as Json[]) {
    if (item['type'] !== 'message') continue;
    for (const part of item['content'] as Json[]) if (part['type'] === 'output_text') outputText += part['text'];
  }
  const checked: CheckedResponseStream = { events: names, response: { ...terminal, output_text: outputText } };
  if (error !== undefined) checked.error = error;
  return checked;

  function checkOutputEvent(event: string, body: Json, where: string): void {
    switch (event) {
      case 'response.output_item.added': {
        assert.equal(open, undefined, `${where}: an item is added only after the previous one is done`);
        assert.equal(body['output_index'], nextOutputIndex, `${where}: output_index counts the items`);
        const item = body['item'] as Json;
        assert.equal(item['status'], 'in_progress', `${where}: added in_progress`);
        assert.ok(typeof item['id'] === 'string' && item['id'] !== '' && !itemIds.has(item['id']), `${where}: a new item id`);
        itemIds.add(item['id']);
        if (item['type'] === 'message') {
          assert.deepEqual(item, { id: item['id'], type: 'message', status: 'in_progress', content: [], role: 'assistant' }, `${where}: message added empty`);
          assert.match(item['id'], /^msg_/, `${where}: message id`);
        } else {
          assert.equal(item['type'], 'function_call', `${where}: item type`);
          assert.match(item['id'], /^fc_/, `${where}: function_call id`);
          assert.equal(item['arguments'], '', `${where}: arguments start empty`);
          assert.ok(typeof item['call_id'] === 'string' && item['call_id'] !== '' && !callIds.has(item['call_id']), `${where}: a new call_id`);
          callIds.add(item['call_id']);
          assert.ok(typeof item['name'] === 'string' && item['name'] !== '', `${where}: name`);
          const keys = ['id', 'type', 'status', 'arguments', 'call_id', 'name'];
          if (item['namespace'] !== undefined) keys.push('namespace');
          assert.deepEqual(Object.keys(item), keys, `${where}: function_call keys`);
        }
        open = { index: nextOutputIndex++, item, args: '', argsDone: false, part: null };
        return;
      }
      case 'response.output_item.done': {
        const current = openAt(body, where, null, false);
        const item = body['item'] as Json;
        assert.equal(item['id'], current.item['id'], `${where}: the same item`);
        if (item['type'] === 'message') {
          assert.equal(current.part, null, `${where}: a part is still open`);
          assert.ok(['completed', 'incomplete'].includes(item['status']), `${where}: status`);
          assert.deepEqual(item, { ...current.item, status: item['status'], content: current.item['content'] }, `${where}: the message as its parts built it`);
        } else {
          assert.ok(current.argsDone, `${where}: function_call_arguments.done first`);
          assert.deepEqual(item, { ...current.item, status: 'completed', arguments: current.args }, `${where}: the call as its events built it`);
        }
        done.push(item);
        open = undefined;
        return;
      }
      case 'response.content_part.added': {
        const current = openAt(body, where, 'message');
        assert.equal(current.part, null, `${where}: a part is added only after the previous one is done`);
        assert.equal(body['content_index'], current.item['content'].length, `${where}: content_index counts the parts`);
        const part = body['part'] as Json;
        if (part['type'] === 'output_text') assert.deepEqual(part, { type: 'output_text', annotations: [], logprobs: [], text: '' }, `${where}: output_text starts empty`);
        else assert.deepEqual(part, { type: 'refusal', refusal: '' }, `${where}: refusal starts empty`);
        current.part = { index: body['content_index'], kind: part['type'] as 'output_text' | 'refusal', text: '', textDone: false };
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const part = partAt(body, where, event === 'response.output_text.delta' ? 'output_text' : 'refusal');
        assert.ok(!part.textDone, `${where}: after the part's text was done`);
        assert.equal(typeof body['delta'], 'string', `${where}: delta`);
        if (event === 'response.output_text.delta') assert.deepEqual(body['logprobs'], [], `${where}: logprobs`);
        part.text += body['delta'];
        return;
      }
      case 'response.output_text.done':
      case 'response.refusal.done': {
        const text = event === 'response.output_text.done';
        const part = partAt(body, where, text ? 'output_text' : 'refusal');
        assert.ok(!part.textDone, `${where}: done twice`);
        assert.equal(text ? body['text'] : body['refusal'], part.text, `${where}: the whole text is the deltas joined`);
        part.textDone = true;
        return;
      }
      case 'response.content_part.done': {
        const current = openAt(body, where, 'message');
        const part = current.part;
        assert.ok(part !== null && body['content_index'] === part.index, `${where}: the open part`);
        assert.ok(part.textDone, `${where}: the part's text was not done`);
        const whole = part.kind === 'output_text' ? { type: 'output_text', annotations: [], logprobs: [], text: part.text } : { type: 'refusal', refusal: part.text };
        assert.deepEqual(body['part'], whole, `${where}: the whole part`);
        current.item['content'].push(whole);
        current.part = null;
        return;
      }
      case 'response.function_call_arguments.delta': {
        const current = openAt(body, where, 'function_call');
        assert.ok(!current.argsDone, `${where}: after the arguments were done`);
        assert.ok(typeof body['delta'] === 'string' && body['delta'] !== '', `${where}: delta`);
        current.args += body['delta'];
        return;
      }
      case 'response.function_call_arguments.done': {
        const current = openAt(body, where, 'function_call');
        assert.ok(!current.argsDone, `${where}: done twice`);
        assert.equal(body['arguments'], current.args, `${where}: the whole arguments are the deltas joined`);
        let value: unknown;
        try {
          value = JSON.parse(current.args);
        } catch {
          value = undefined;
        }
        assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${where}: arguments are a JSON object`);
        current.argsDone = true;
        return;
      }
      default:
        assert.fail(`${where}: an event the gateway never writes`);
    }
  }

  function openAt(body: Json, where: string, type: 'message' | 'function_call' | null, itemId = true): OpenItem {
    assert.ok(open !== undefined, `${where}: no item is open`);
    assert.equal(body['output_index'], open.index, `${where}: output_index of the open item`);
    if (itemId) assert.equal(body['item_id'], open.item['id'], `${where}: item_id of the open item`);
    if (type !== null) assert.equal(open.item['type'], type, `${where}: on a ${open.item['type']} item`);
    return open;
  }

  function partAt(body: Json, where: string, kind: 'output_text' | 'refusal'): NonNullable<OpenItem['part']> {
    const current = openAt(body, where, 'message');
    const part = current.part;
    assert.ok(part !== null && body['content_index'] === part.index, `${where}: content_index of the open part`);
    assert.equal(part.kind, kind, `${where}: on a ${part.kind} part`);
    return part;
  }
}

function checkResponse(response: Json, where: string, status: string): Json {
  for (const key of REQUIRED_RESPONSE_KEYS) assert.ok(Object.hasOwn(response, key), `${where}: response.${key} is required`);
  assert.match(response['id'], /^resp_/, `${where}: response id`);
  assert.equal(response['object'], 'response');
  assert.equal(response['status'], status, `${where}: status`);
  assert.ok(Number.isInteger(response['created_at']), `${where}: created_at`);
  assert.equal(response['store'], false, `${where}: store`);
  assert.ok(Array.isArray(response['output']) && Array.isArray(response['tools']), `${where}: output and tools are arrays`);
  assert.equal(Object.hasOwn(response, 'output_text'), false, `${where}: output_text is the SDK's, not the wire's`);
  if (status === 'in_progress') assert.equal(response['usage'], undefined, `${where}: no usage before the end`);
  return response;
}

function checkUsage(usage: Json, where: string): void {
  assert.deepEqual(Object.keys(usage), ['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens'], `${where}: usage keys`);
  assert.ok(usage['input_tokens_details'].cached_tokens <= usage['input_tokens'], `${where}: cached tokens are part of the input`);
  assert.equal(typeof usage['output_tokens_details'].reasoning_tokens, 'number', `${where}: reasoning_tokens`);
}
