// The dispatcher holding answers to a strict json_schema (the context's
// answerSchema): a whole answer that breaks it falls back to the next target,
// a stream that arrives whole in its first read too, a committed stream ends
// with the error in place of its finish chunk; the breaker hears success for
// all of them (the upstream answered). Without a schema nothing is checked and
// the stream is not wrapped.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ChatCompletionChunk } from '../../src/chat/types.ts';
import { compileSchema } from '../../src/schema/compile.ts';
import { createCircuitBreaker } from '../../src/upstream/circuit-breaker.ts';
import { dispatchCompletion, dispatchStream, type AttemptRecord, type DispatchContext } from '../../src/upstream/dispatcher.ts';
import { SchemaCheckedStream } from '../../src/upstream/schema-checked-stream.ts';
import { UpstreamSchemaMismatchError } from '../../src/upstream/upstream-errors.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import type { UpstreamHandler } from '../../src/testing/fake-upstream.ts';
import { answer, chunkEvent, context, rejection, startEventStream, target, upstreamPool } from './dispatch-fixtures.ts';
import { INVALID_LIST, LIST_MISMATCH, SHOPPING_LIST_SCHEMA, VALID_LIST } from '../support/shopping-list.ts';

const pool = upstreamPool();
after(() => pool.closeAll());

const answerSchema = compileSchema(SHOPPING_LIST_SCHEMA);

function checked(records: AttemptRecord[] = [], extra: Partial<DispatchContext> = {}): DispatchContext {
  return context(records, { answerSchema, ...extra });
}

const summary = (records: AttemptRecord[]): string[] => records.map((r) => `${r.targetId}:${r.outcome}${r.status === undefined ? '' : `:${r.status}`}${r.code === undefined ? '' : `:${r.code}`}`);

/** A breaker that opens at the first counted failure: a mismatch counted against it would open it. */
const touchy = () => createCircuitBreaker({ failureThreshold: 1, openMs: 10 });

/** The content pieces as one stream in one write: a role chunk, the pieces, a finish chunk, usage, [DONE]. */
function wholeStream(...pieces: string[]): UpstreamHandler {
  return (_req, res) => {
    startEventStream(res);
    res.end(`${chunkEvent('')}${pieces.map((p) => chunkEvent(p)).join('')}${chunkEvent('', 'stop')}${usageEvent()}data: [DONE]\n\n`);
  };
}

function usageEvent(): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1700000001, model: 'upstream-model', choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } })}\n\n`;
}

/** The first piece now; the rest, the finish, usage and [DONE] when `release` resolves. */
function streamInTwo(first: string, rest: string, release: Promise<void>): UpstreamHandler {
  return (_req, res) => {
    startEventStream(res);
    res.write(chunkEvent(first));
    void release.then(() => res.end(`${chunkEvent(rest)}${chunkEvent('', 'stop')}${usageEvent()}data: [DONE]\n\n`));
  };
}

function contents(batches: (readonly ChatCompletionChunk[])[]): string {
  return batches.flat().map((c) => c.choices[0]?.delta.content ?? '').join('');
}

/** Every batch until the end, or the error that ended the stream. */
async function drain(stream: { next(): Promise<readonly ChatCompletionChunk[] | null> }): Promise<{ batches: (readonly ChatCompletionChunk[])[]; error: unknown }> {
  const batches: (readonly ChatCompletionChunk[])[] = [];
  try {
    for (;;) {
      const batch = await stream.next();
      if (batch === null) return { batches, error: undefined };
      // The exchange reuses its batch array: keep a copy.
      batches.push([...batch]);
    }
  } catch (error) {
    return { batches, error };
  }
}

describe('dispatchCompletion with an answer schema', () => {
  test('a whole answer that breaks the schema falls back to the next target; its breaker hears success', async () => {
    const a = await pool.start(answer(INVALID_LIST));
    const b = await pool.start(answer(VALID_LIST));
    const breaker = touchy();
    const records: AttemptRecord[] = [];
    const { completion, target: chosen } = await dispatchCompletion([target('a', a.baseUrl, { breaker }), target('b', b.baseUrl, { priority: 1 })], checked(records));
    assert.equal(chosen.id, 'b');
    assert.equal(completion.choices[0]?.message.content, VALID_LIST);
    assert.deepEqual(summary(records), ['a:fallback:502:upstream_schema_mismatch', 'b:ok']);
    assert.deepEqual(records[0]?.cause, { kind: 'other', detail: 'upstream_schema_mismatch', address: null });
    // Not retried on the same target: another attempt there is as likely to break it.
    assert.equal(a.count, 1);
    assert.equal(breaker.state(), 'closed');
  });

  test('the last mismatch goes to the caller, with the path and what is wrong there', async () => {
    const a = await pool.start(answer('{"items":[]}'));
    const b = await pool.start(answer(INVALID_LIST));
    const records: AttemptRecord[] = [];
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl), target('b', b.baseUrl, { priority: 1 })], checked(records, {
      answerSchema: compileSchema({ type: 'object', properties: { items: { type: 'array', items: { type: 'string' }, minItems: 1 } }, required: ['items'], additionalProperties: false }),
    })));
    assert.ok(error instanceof UpstreamSchemaMismatchError);
    assert.equal(error.status, 502);
    assert.equal(error.path, '$.items[0]');
    assert.deepEqual(error.toBody().error.message, "The upstream's answer does not match the response_format json_schema: $.items[0]: expected string, got an object");
    assert.deepEqual(summary(records), ['a:fallback:502:upstream_schema_mismatch', 'b:fallback:502:upstream_schema_mismatch']);
  });

  test('the caller gets the exact error body; text that is not JSON is not quoted', async () => {
    const a = await pool.start(answer(INVALID_LIST));
    const error = await rejection(dispatchCompletion([target('a', a.baseUrl)], checked()));
    assert.ok(error instanceof UpstreamSchemaMismatchError);
    assert.deepEqual(error.toBody(), LIST_MISMATCH);
    const prose = await pool.start(answer('Here is your list: milk (1), eggs (12), tea (2). Secret: hunter2'));
    const notJson = await rejection(dispatchCompletion([target('p', prose.baseUrl)], checked()));
    assert.ok(notJson instanceof UpstreamSchemaMismatchError);
    assert.equal(notJson.message, "The upstream's answer does not match the response_format json_schema: $: expected a JSON value, got text that is not JSON (unexpected_byte at byte 0)");
  });

  test('a half-open breaker whose probe answers off the schema closes', async () => {
    const scheduler = new ManualScheduler();
    const a = await pool.start(answer(INVALID_LIST));
    const b = await pool.start(answer(VALID_LIST));
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(10);
    assert.equal(breaker.state(), 'half_open');
    await dispatchCompletion([target('a', a.baseUrl, { breaker }), target('b', b.baseUrl, { priority: 1 })], checked());
    assert.equal(breaker.state(), 'closed');
    assert.equal(breaker.canAttempt(), true);
  });

  test('without a schema the same answer is returned unchecked', async () => {
    const a = await pool.start(answer(INVALID_LIST));
    const { completion } = await dispatchCompletion([target('a', a.baseUrl)], context());
    assert.equal(completion.choices[0]?.message.content, INVALID_LIST);
  });
});

describe('dispatchStream with an answer schema', () => {
  test('a stream that arrives whole and breaks the schema falls back like a whole answer', async () => {
    const a = await pool.start(wholeStream('{"items":[{"name":"milk","qty":1},', '{"name":"eggs","qty":12},{"name":"tea","qty":"two"}]}'));
    const b = await pool.start(wholeStream('{"items":[{"name":"milk",', '"qty":1}]}'));
    const breaker = touchy();
    const records: AttemptRecord[] = [];
    const { stream, target: chosen } = await dispatchStream([target('a', a.baseUrl, { breaker }), target('b', b.baseUrl, { priority: 1 })], checked(records));
    assert.equal(chosen.id, 'b');
    assert.ok(stream instanceof SchemaCheckedStream);
    const { batches, error } = await drain(stream);
    assert.equal(error, undefined);
    assert.equal(contents(batches), '{"items":[{"name":"milk","qty":1}]}');
    // The finish chunk and the usage chunk after it are handed out.
    const chunks = batches.flat();
    assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, prompt_tokens_details: { cached_tokens: 0 } });
    assert.deepEqual(summary(records), ['a:fallback:502:upstream_schema_mismatch', 'b:ok']);
    assert.equal(a.count, 1);
    assert.equal(breaker.state(), 'closed');
  });

  test('a committed stream that breaks the schema throws from next() in place of its finish chunk', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = await pool.start(streamInTwo('{"items":[{"name":"milk","qty":1},', '{"name":"eggs","qty":12},{"name":"tea","qty":"two"}]}', released));
    const b = await pool.start(wholeStream(VALID_LIST));
    const scheduler = new ManualScheduler();
    const breaker = createCircuitBreaker({ failureThreshold: 1, openMs: 10 }, scheduler.now);
    breaker.onFailure();
    await scheduler.advance(10);
    const records: AttemptRecord[] = [];
    const { stream, target: chosen } = await dispatchStream([target('a', a.baseUrl, { breaker }), target('b', b.baseUrl, { priority: 1 })], checked(records));
    assert.equal(chosen.id, 'a');
    const first = await stream.next();
    assert.equal(contents([first ?? []]), '{"items":[{"name":"milk","qty":1},');
    assert.equal(breaker.state(), 'half_open');
    release();
    const { batches, error } = await drain(stream);
    // Nothing of the last read is handed out: the client has what it had, and the error.
    assert.deepEqual(batches, []);
    assert.ok(error instanceof UpstreamSchemaMismatchError);
    assert.deepEqual(error.toBody(), LIST_MISMATCH);
    // Ended: a further read says so, and closing again is harmless.
    assert.equal(await stream.next(), null);
    stream.close();
    assert.deepEqual(summary(records), ['a:ok']);
    assert.equal(b.count, 0);
    // The probe answered: the breaker closes, and nothing is counted against it.
    assert.equal(breaker.state(), 'closed');
  });

  test('a committed stream that holds the schema ends cleanly', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = await pool.start(streamInTwo('{"items":[{"name":"milk",', '"qty":1}]}', released));
    const { stream } = await dispatchStream([target('a', a.baseUrl)], checked());
    // The exchange reuses its batch array: keep a copy.
    const first = [...((await stream.next()) ?? [])];
    release();
    const { batches, error } = await drain(stream);
    assert.equal(error, undefined);
    assert.equal(contents([first, ...batches]), '{"items":[{"name":"milk","qty":1}]}');
  });

  test('without a schema the stream is not wrapped and the same answer streams whole', async () => {
    const a = await pool.start(wholeStream(INVALID_LIST));
    const { stream } = await dispatchStream([target('a', a.baseUrl)], context());
    assert.ok(!(stream instanceof SchemaCheckedStream));
    const { batches, error } = await drain(stream);
    assert.equal(error, undefined);
    assert.equal(contents(batches), INVALID_LIST);
  });
});
