// The request guard's refusal when a value the policy masks is in a signed
// thinking text: masking it would break the signature the upstream checks,
// so the request is refused, and the 400 says why (the detector, the path,
// that it is a thinking block), never the value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import type { KeyPolicy } from '../../src/gateway/key-policy.ts';
import { createRequestGuard, type GuardSinks } from '../../src/gateway/request-guard.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';

const KEY: KeyPolicy = { id: 'key_1', expiresAt: null, allowedAliases: null, limits: NO_LIMITS };
const CARD = '4111111111111111';
const config = parseConfig({ providers: { demo: { type: 'demo' } }, aliases: { chat: { provider: 'demo' } }, guard: { detectors: { card_number: 'mask' } } }, null, '/tmp');
const sinks = (): GuardSinks => ({ log: {}, requestId: 'r', logger: { error() {} } as unknown as GuardSinks['logger'] });

function refusalOf(body: unknown): InvalidRequestError {
  try {
    createRequestGuard(config).inspect(sinks(), body, 'chat', KEY);
  } catch (error) {
    assert.ok(error instanceof InvalidRequestError);
    return error;
  }
  assert.fail('the request passed');
}

test('a masked detector\'s value in a signed thinking text: the 400 says it is in a thinking block that cannot be masked', () => {
  const body = {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: `the card is ${CARD}`, signature: 'sig' }, { type: 'text', text: 'ok' }] },
    ],
  };
  const error = refusalOf(body);
  assert.equal(
    error.message,
    "The request was refused by the gateway's egress guard: card_number found in messages[1].content[0].thinking, a thinking block, which cannot be masked without breaking its signature. Remove that thinking block (or the turn it is in) from the request, or ask the gateway's operator about the guard's policy for this key and model.",
  );
  assert.equal(error.code, 'guard_blocked');
  assert.equal(error.param, 'messages[1].content[0].thinking');
});

test('the same value in plain text is masked, not refused', () => {
  const masked = createRequestGuard(config).inspect(sinks(), { messages: [{ role: 'user', content: `the card is ${CARD}` }] }, 'chat', KEY);
  assert.deepEqual(masked, { messages: [{ role: 'user', content: 'the card is [CARD_NUMBER_1]' }] });
});
