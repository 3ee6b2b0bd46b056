// An operator regex the config accepts runs within its step budget on
// ordinary text with many matches: a match is made longest within a bounded
// window, so the search stays linear however many matches the text holds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postChat, type TestGateway } from './harness.ts';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

let gw: TestGateway;
let rig: GuardRig;

before(async () => {
  rig = await startGuardRig({ guard: { patterns: [{ name: 'ticket', regex: 'INC-[0-9]{6}|INC-[0-9]{6}.*URGENT', action: 'mask' }] } });
  ({ gw } = rig);
});
after(() => rig.close());

test('one line listing 300 tickets (about 3 KB) is masked, not refused', async () => {
  const lines = `Closed this week: ${Array.from({ length: 300 }, (_, i) => `INC-${String(100000 + i)}`).join(', ')}`;
  const res = await postChat(gw, { model: 'service-fake', messages: [{ role: 'user', content: lines }] });
  // expected: 200 with [TICKET_n] placeholders; seen: 500 guard_failed
  assert.equal(res.status, 200, res.text);
});
