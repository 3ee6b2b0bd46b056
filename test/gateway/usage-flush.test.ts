// The gateway's usage flushes run one after another: flushUsage() asked for
// while the timer's flush is still writing waits for that write, so what was
// recorded before it was asked for is in the store when it returns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualScheduler } from '../support/manual-scheduler.ts';
import { postChat, startGateway } from './harness.ts';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('flushUsage during the timer flush returns only once that flush has written', async () => {
  const scheduler = new ManualScheduler({ startMs: Date.UTC(2026, 10, 28, 12) });
  const gw = await startGateway({ scheduler });
  try {
    const answer = await postChat(gw, { model: 'service-chat', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${gw.key}` });
    assert.equal(answer.status, 200);
    const store = gw.state.usage;
    const add = store.add.bind(store);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let writes = 0;
    store.add = async (...args) => {
      writes++;
      await gate;
      return add(...args);
    };
    await scheduler.advance(5000); // the timer's flush takes the counters and waits on the store
    assert.equal(writes, 1);
    let returned = false;
    const flushed = gw.flushUsage().then(() => (returned = true));
    for (let i = 0; i < 5; i++) await turn();
    assert.equal(returned, false, 'flushUsage waits for the write in progress');
    release();
    await flushed;
    assert.equal((await gw.state.usage.totals()).get(gw.keyId)?.requests, 1);
    assert.equal(writes, 1, 'nothing was left to write after it');
  } finally {
    await gw.close();
  }
});
