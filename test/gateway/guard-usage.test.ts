// The egress guard's findings in each key's usage: a refused request counts
// its blocked finding (and its error), a masked one its masks and logs, a
// request the guard found nothing in or did not look at counts none; the
// findings reach the store's totals and hour bucket, and the usage file
// never holds a planted value (only counts go there).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { postChat } from './harness.ts';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const CARD = '4111111111111111';
const EMAIL = 'alice.jones@example.org';

let rig: GuardRig;

before(async () => {
  rig = await startGuardRig({ guard: { detectors: { secrets: 'mask', card_number: 'block', email: 'log' } } });
});
after(() => rig.close());

async function chat(content: string, key: string): Promise<number> {
  const res = await postChat(rig.gw, { model: 'service-fake', messages: [{ role: 'user', content }] }, { authorization: `Bearer ${key}` });
  return res.status;
}

test("a key's usage counts the guard's findings by action; another key's stays at zero", async () => {
  const { gw } = rig;
  const quiet = await gw.state.keys.create('guard-quiet', {});
  assert.equal(await chat(`bill ${CARD} for ${EMAIL}`, gw.key), 400);
  assert.equal(await chat(`use ${AWS_KEY} and ${AWS_KEY}, tell ${EMAIL}`, gw.key), 200);
  assert.equal(await chat('nothing to find here', gw.key), 200);
  assert.equal(await chat('nothing here either', quiet.key), 200);
  await gw.flushUsage();

  const totals = await gw.state.usage.totals();
  const mine = totals.get(gw.keyId);
  // Refused: the card blocked, the e-mail logged. Passed: the AWS key masked twice, the e-mail logged.
  assert.deepEqual(
    { requests: mine?.requests, errors: mine?.errors, guardBlocked: mine?.guardBlocked, guardMasked: mine?.guardMasked, guardLogged: mine?.guardLogged },
    { requests: 3, errors: 1, guardBlocked: 1, guardMasked: 2, guardLogged: 2 },
  );
  const theirs = totals.get(quiet.record.id);
  assert.deepEqual({ requests: theirs?.requests, guardBlocked: theirs?.guardBlocked, guardMasked: theirs?.guardMasked, guardLogged: theirs?.guardLogged }, { requests: 1, guardBlocked: 0, guardMasked: 0, guardLogged: 0 });

  const hours = await gw.state.usage.series(gw.keyId, 'hour', Date.now());
  const last = hours.buckets.at(-1);
  assert.deepEqual([last?.guardBlocked, last?.guardMasked, last?.guardLogged], [1, 2, 2]);

  const file = readFileSync(path.join(gw.dataDir, 'usage.json'), 'utf8');
  for (const value of [AWS_KEY, CARD, EMAIL]) assert.equal(file.includes(value), false, `usage.json holds ${value.slice(0, 6)}...`);
});
