// Masking a continued Responses request (previous_response_id) keeps the turn
// it continues: the masked body is told to the door as the one it made.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request, type FakeUpstream, type TestGateway } from './harness.ts';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
let upstream: FakeUpstream;
let gw: TestGateway;
let rig: GuardRig;

before(async () => {
  rig = await startGuardRig({ responses: { store: { enabled: true } }, guard: { detectors: { secrets: 'mask' } } });
  ({ upstream, gw } = rig);
});
after(() => rig.close());

const post = (body: unknown) =>
  request(gw.baseUrl, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('a continued turn with a masked secret still names the response it continues', async () => {
  const first = (await post({ model: 'service-fake', input: 'hello', store: true })).json() as { id: string };
  const plain = (await post({ model: 'service-fake', input: 'no secret here', previous_response_id: first.id, store: true })).json() as { previous_response_id: string | null };
  assert.equal(plain.previous_response_id, first.id);
  const res = await post({ model: 'service-fake', input: `use ${AWS_KEY}`, previous_response_id: first.id, store: true });
  assert.equal(res.status, 200, res.text);
  assert.equal(JSON.stringify(upstream.requests.at(-1)?.body).includes(AWS_KEY), false);
  // expected: previous_response_id = the first turn's id; seen: null
  assert.equal((res.json() as { previous_response_id: string | null }).previous_response_id, first.id);
});
