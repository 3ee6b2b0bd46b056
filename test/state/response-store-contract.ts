// The response store port (src/state/response-store-port.ts) as one set of cases, run
// against the local adapter in memory and in a directory
// (test/state/local-response-store.test.ts) and the Redis adapter
// (test/state/redis-response-store.system.test.ts). `makeStore()` gives a fresh, empty
// store on the scheduler and with the limits it is handed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConversationTooLongError, DuplicateResponseIdError, ResponseStoreFullError } from '../../src/state/errors.ts';
import { recordJson, type ResponseStore, type ResponseStoreLimits, type StoredResponse } from '../../src/state/response-store-port.ts';
import { ManualScheduler } from '../support/manual-scheduler.ts';

const TTL = 60_000;
export const DEFAULT_TEST_LIMITS: ResponseStoreLimits = { ttlMs: TTL, maxRecordBytes: 64 * 1024, maxTotalBytes: 1024 * 1024, maxChainDepth: 10 };

export type MakeResponseStore = (scheduler: ManualScheduler, limits: ResponseStoreLimits) => Promise<ResponseStore>;

const user = (text: string): unknown => ({ role: 'user', content: text });
const said = (text: string): unknown => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });

/** A first turn (or, with `previous`, the turn after it) made at the scheduler's now. */
export function turn(scheduler: ManualScheduler, id: string, keyId: string, text: string, previous?: StoredResponse): StoredResponse {
  const now = scheduler.now();
  return {
    id,
    keyId,
    createdAt: now,
    expiresAt: now + TTL,
    previousId: previous?.id ?? null,
    depth: (previous?.depth ?? 0) + 1,
    input: [...(previous === undefined ? [] : [...previous.input, ...previous.output]), user(text)],
    output: [said(`re: ${text}`)],
    usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
  };
}

export function runResponseStoreContract(name: string, makeStore: MakeResponseStore): void {
  describe(`response store contract: ${name}`, () => {
    test('the owning key reads its record back as put; another key reads null and cannot delete it', async () => {
      const scheduler = new ManualScheduler();
      const store = await makeStore(scheduler, DEFAULT_TEST_LIMITS);
      const record = turn(scheduler, 'resp_a1', 'key_a', 'hello');
      await store.put(record);
      assert.deepEqual(await store.get('resp_a1', 'key_a'), record);
      assert.equal(await store.get('resp_a1', 'key_b'), null);
      assert.equal(await store.resolveConversation('resp_a1', 'key_b'), null);
      assert.equal(await store.delete('resp_a1', 'key_b'), false);
      assert.deepEqual(await store.get('resp_a1', 'key_a'), record, 'the other key’s delete changed nothing');
      assert.equal(await store.delete('resp_a1', 'key_a'), true);
      assert.equal(await store.get('resp_a1', 'key_a'), null);
      assert.equal(await store.delete('resp_a1', 'key_a'), false);
      await store.close();
    });

    test('an id never stored: null, false, null', async () => {
      const scheduler = new ManualScheduler();
      const store = await makeStore(scheduler, DEFAULT_TEST_LIMITS);
      assert.equal(await store.get('resp_none', 'key_a'), null);
      assert.equal(await store.delete('resp_none', 'key_a'), false);
      assert.equal(await store.resolveConversation('resp_none', 'key_a'), null);
      await store.close();
    });

    test('a record is there 1 ms before its deadline and gone at it', async () => {
      const scheduler = new ManualScheduler();
      const store = await makeStore(scheduler, DEFAULT_TEST_LIMITS);
      const record = turn(scheduler, 'resp_t1', 'key_a', 'hello');
      await store.put(record);
      await scheduler.advance(TTL - 1);
      assert.deepEqual(await store.get('resp_t1', 'key_a'), record);
      assert.deepEqual((await store.resolveConversation('resp_t1', 'key_a'))?.depth, 1);
      await scheduler.advance(1);
      assert.equal(await store.get('resp_t1', 'key_a'), null);
      assert.equal(await store.resolveConversation('resp_t1', 'key_a'), null);
      assert.equal(await store.delete('resp_t1', 'key_a'), false);
      await store.close();
    });

    test('the total bound: a put that does not fit is refused until the oldest record expires, then stored', async () => {
      const scheduler = new ManualScheduler();
      const one = recordJson(turn(scheduler, 'resp_f1', 'key_a', 'x')).bytes;
      const store = await makeStore(scheduler, { ...DEFAULT_TEST_LIMITS, maxTotalBytes: 2 * one });
      const first = turn(scheduler, 'resp_f1', 'key_a', 'x');
      await store.put(first);
      await scheduler.advance(1000);
      const second = turn(scheduler, 'resp_f2', 'key_b', 'y');
      await store.put(second);
      const third = turn(scheduler, 'resp_f3', 'key_a', 'z');
      await assert.rejects(store.put(third), (error: unknown) => {
        assert.ok(error instanceof ResponseStoreFullError);
        assert.equal(error.code, 'response_store_full');
        assert.equal(error.status, 503);
        return true;
      });
      assert.equal(await store.get('resp_f3', 'key_a'), null, 'a refused put keeps nothing');
      assert.deepEqual(await store.get('resp_f1', 'key_a'), first);
      await scheduler.advance(TTL - 1000);
      const again = turn(scheduler, 'resp_f3', 'key_a', 'z');
      await store.put(again);
      assert.equal(await store.get('resp_f1', 'key_a'), null);
      assert.deepEqual(await store.get('resp_f2', 'key_b'), second);
      assert.deepEqual(await store.get('resp_f3', 'key_a'), again);
      // Full again, and a delete makes room at once.
      await assert.rejects(store.put(turn(scheduler, 'resp_f4', 'key_a', 'w')), ResponseStoreFullError);
      assert.equal(await store.delete('resp_f2', 'key_b'), true);
      await store.put(turn(scheduler, 'resp_f4', 'key_a', 'w'));
      await store.close();
    });

    test('the record bound: exactly maxRecordBytes is stored, one byte more is conversation_too_long and keeps nothing', async () => {
      const scheduler = new ManualScheduler();
      const fits = turn(scheduler, 'resp_r1', 'key_a', 'hello');
      const bytes = recordJson(fits).bytes;
      const store = await makeStore(scheduler, { ...DEFAULT_TEST_LIMITS, maxRecordBytes: bytes });
      await store.put(fits);
      // One character more in the id: one byte more in the record.
      const over = turn(scheduler, 'resp_r12', 'key_a', 'hello');
      await assert.rejects(store.put(over), (error: unknown) => {
        assert.ok(error instanceof ConversationTooLongError);
        assert.equal(error.status, 400);
        assert.equal(error.code, 'conversation_too_long');
        assert.equal(error.param, null);
        assert.equal(error.message, `The conversation takes ${bytes + 1} bytes with this response, past the ${bytes} the gateway stores for one (responses.store.maxRecordBytes). Start a new conversation, or send this one whole in 'input' with 'store': false.`);
        return true;
      });
      assert.equal(await store.get('resp_r12', 'key_a'), null);
      await store.close();
    });

    test('a chain resolves to every item, oldest first, for its own key only', async () => {
      const scheduler = new ManualScheduler();
      const store = await makeStore(scheduler, DEFAULT_TEST_LIMITS);
      const first = turn(scheduler, 'resp_c1', 'key_a', 'one');
      await store.put(first);
      assert.deepEqual(await store.resolveConversation('resp_c1', 'key_a'), { items: [user('one'), said('re: one')], depth: 1 });
      await scheduler.advance(TTL - 1);
      const second = turn(scheduler, 'resp_c2', 'key_a', 'two', first);
      await store.put(second);
      await scheduler.advance(1);
      // The first response has expired; the conversation lives on in the second.
      assert.equal(await store.get('resp_c1', 'key_a'), null);
      assert.deepEqual(await store.resolveConversation('resp_c2', 'key_a'), {
        items: [user('one'), said('re: one'), user('two'), said('re: two')],
        depth: 2,
      });
      assert.equal(await store.resolveConversation('resp_c2', 'key_b'), null);
      await store.close();
    });

    test('the chain bound: a conversation at maxChainDepth cannot be continued, and a deeper record is not stored', async () => {
      const scheduler = new ManualScheduler();
      const store = await makeStore(scheduler, { ...DEFAULT_TEST_LIMITS, maxChainDepth: 2 });
      const first = turn(scheduler, 'resp_d1', 'key_a', 'one');
      const second = turn(scheduler, 'resp_d2', 'key_a', 'two', first);
      await store.put(first);
      await store.put(second);
      assert.equal((await store.resolveConversation('resp_d1', 'key_a'))?.depth, 1);
      await assert.rejects(store.resolveConversation('resp_d2', 'key_a'), (error: unknown) => {
        assert.ok(error instanceof ConversationTooLongError);
        assert.equal(error.param, 'previous_response_id');
        assert.equal(error.message, "The conversation resp_d2 ends already has 2 responses, the most the gateway stores (responses.store.maxChainDepth). Start a new conversation, or send this one whole in 'input' with 'store': false.");
        return true;
      });
      assert.equal(await store.resolveConversation('resp_d2', 'key_b'), null, 'another key learns nothing, not even the bound');
      await assert.rejects(store.put(turn(scheduler, 'resp_d3', 'key_a', 'three', second)), ConversationTooLongError);
      assert.equal(await store.get('resp_d3', 'key_a'), null);
      await store.close();
    });

    test('an id stored twice is refused and the first record stays', async () => {
      const scheduler = new ManualScheduler();
      const store = await makeStore(scheduler, DEFAULT_TEST_LIMITS);
      const record = turn(scheduler, 'resp_u1', 'key_a', 'one');
      await store.put(record);
      await assert.rejects(store.put(turn(scheduler, 'resp_u1', 'key_b', 'two')), DuplicateResponseIdError);
      assert.deepEqual(await store.get('resp_u1', 'key_a'), record);
      assert.equal(await store.get('resp_u1', 'key_b'), null);
      await store.close();
    });
  });
}
