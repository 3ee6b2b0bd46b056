// The charge rules of src/gateway/request-charge.ts, one case per way a request ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Usage } from '../../src/chat/types.ts';
import { costNanos } from '../../src/limits/cost.ts';
import { assertLimiterInput, MAX_CHARGE_NANOS } from '../../src/limits/limiter.ts';
import type { Reservation } from '../../src/limits/reservation.ts';
import { chargeFor, MAX_REPORTED_TOKENS, CallPhase, usageProblem, type ChargeFacts } from '../../src/gateway/request-charge.ts';

const CHEAP = { input: 1, cachedInput: 0.5, output: 2 };
const DEAR = { input: 3, cachedInput: 3, output: 15 };
const RESERVATION: Reservation = { promptTokens: 1000, outputTokens: 200, tokens: 1200, costNanos: costNanos(1000, 3) + costNanos(200, 15) };

function facts(set: Partial<ChargeFacts>): ChargeFacts {
  return { reservation: RESERVATION, phase: CallPhase.Answered, clientLeft: false, errorCode: undefined, usage: undefined, generatedBytes: 0, answeredPrice: CHEAP, prices: [CHEAP, DEAR], ...set };
}

function usage(prompt: number, completion: number, cached = 0): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
}

test('never sent upstream: nothing', () => {
  assert.deepEqual(chargeFor(facts({ phase: CallPhase.Admitted, clientLeft: true })), { basis: 'none', promptTokens: 0, completionTokens: 0, cachedTokens: 0, costNanos: 0 });
});

test('sent, the upstream failed before answering: nothing; an unusable answer: the reservation at the answering price', () => {
  assert.equal(chargeFor(facts({ phase: CallPhase.Sent, errorCode: 'upstream_timeout', answeredPrice: null })).basis, 'none');
  const bad = chargeFor(facts({ phase: CallPhase.Sent, errorCode: 'bad_upstream_response', answeredPrice: null }));
  assert.deepEqual(bad, { basis: 'reservation', promptTokens: 1000, completionTokens: 200, cachedTokens: 0, costNanos: RESERVATION.costNanos });
  // An answer off the request's strict schema was generated (and billed) upstream too.
  assert.deepEqual(chargeFor(facts({ phase: CallPhase.Sent, errorCode: 'upstream_schema_mismatch', answeredPrice: null })), bad);
});

test('sent, the client left before an answer: the prompt bound at the highest input price', () => {
  assert.deepEqual(chargeFor(facts({ phase: CallPhase.Sent, clientLeft: true, answeredPrice: null })), {
    basis: 'prompt',
    promptTokens: 1000,
    completionTokens: 0,
    cachedTokens: 0,
    costNanos: costNanos(1000, 3),
  });
});

test('a finished answer with sane usage: the usage, cached tokens at the cached price', () => {
  assert.deepEqual(chargeFor(facts({ usage: usage(700, 50, 300) })), {
    basis: 'usage',
    promptTokens: 700,
    completionTokens: 50,
    cachedTokens: 300,
    costNanos: costNanos(400, 1) + costNanos(300, 0.5) + costNanos(50, 2),
  });
});

test('a finished answer without usage: the reservation at the answering price, noted usage_missing', () => {
  assert.deepEqual(chargeFor(facts({})), {
    basis: 'reservation',
    promptTokens: 1000,
    completionTokens: 200,
    cachedTokens: 0,
    costNanos: costNanos(1000, 1) + costNanos(200, 2),
    note: 'usage_missing',
  });
});

test('absurd usage is charged the reservation with a note naming the count', () => {
  const charged = chargeFor(facts({ usage: usage(2_000_000_000, 5) }));
  assert.equal(charged.basis, 'reservation');
  assert.equal(charged.note, 'usage_bad: prompt_tokens out of range');
  assert.equal(charged.promptTokens + charged.completionTokens, 1200);
});

test('usageProblem: the bounds of each count, and cached above prompt', () => {
  assert.equal(usageProblem(usage(MAX_REPORTED_TOKENS, MAX_REPORTED_TOKENS, 0)), null);
  assert.equal(usageProblem(usage(MAX_REPORTED_TOKENS + 1, 0)), 'usage_bad: prompt_tokens out of range');
  assert.equal(usageProblem(usage(0, MAX_REPORTED_TOKENS + 1)), 'usage_bad: completion_tokens out of range');
  assert.equal(usageProblem(usage(10, 0, MAX_REPORTED_TOKENS + 1)), 'usage_bad: prompt_tokens_details.cached_tokens out of range');
  assert.equal(usageProblem(usage(10, 0, 11)), 'usage_bad: cached_tokens above prompt_tokens');
  assert.equal(usageProblem(usage(1.5, 0)), 'usage_bad: prompt_tokens out of range');
});

test('a cut stream: the running usage when reported, else the prompt bound plus the bytes generated, capped at the output maximum', () => {
  assert.equal(chargeFor(facts({ phase: CallPhase.Answering, clientLeft: true, usage: usage(900, 12) })).basis, 'usage');
  assert.deepEqual(chargeFor(facts({ phase: CallPhase.Answering, clientLeft: true, generatedBytes: 40 })), {
    basis: 'partial',
    promptTokens: 1000,
    completionTokens: 40,
    cachedTokens: 0,
    costNanos: costNanos(1000, 1) + costNanos(40, 2),
  });
  assert.equal(chargeFor(facts({ phase: CallPhase.Answering, generatedBytes: 5000 })).completionTokens, 200);
});

test('an unpriced target costs nothing but its tokens still count', () => {
  const charged = chargeFor(facts({ usage: usage(10, 5), answeredPrice: null, prices: [null] }));
  assert.deepEqual(charged, { basis: 'usage', promptTokens: 10, completionTokens: 5, cachedTokens: 0, costNanos: 0 });
});

test('the largest believed usage at the highest price is charged at most what the limiter settles (MAX_CHARGE_NANOS)', () => {
  const dearest = { input: 10_000, cachedInput: 10_000, output: 10_000 };
  const charged = chargeFor(facts({ usage: usage(MAX_REPORTED_TOKENS, MAX_REPORTED_TOKENS), answeredPrice: dearest, prices: [dearest] }));
  assert.equal(charged.basis, 'usage');
  assert.equal(charged.costNanos, MAX_CHARGE_NANOS);
  // What the call settles at close: it must not be refused, or the permit waits out its lease.
  assert.doesNotThrow(() => assertLimiterInput({ tokens: charged.promptTokens + charged.completionTokens, costNanos: charged.costNanos }, 0, 'charge'));
});
