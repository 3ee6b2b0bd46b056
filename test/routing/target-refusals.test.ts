import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError } from '../../src/errors/api-error.ts';
import { everyTargetRefused, targetLabel } from '../../src/routing/target-refusals.ts';

const refusal = (param: string, why: string) => new InvalidRequestError(`Invalid value for '${param}': ${why}.`, param, 'invalid_value');

test('one target: its own refusal, unchanged', () => {
  const only = refusal('top_p', 'set only one');
  assert.equal(everyTargetRefused('service-a', [{ targetId: 'claude/c1', label: 'target 1 (anthropic)', refusal: only }]), only);
});

test('targets refusing different parameters: each named by position and provider type with its reason, no param; no provider name or model', () => {
  const error = everyTargetRefused('service-a', [
    { targetId: 'claude/c1', label: targetLabel(1, 'anthropic'), refusal: refusal('stop[0]', 'blank') },
    { targetId: 'other/o1', label: targetLabel(3, 'openai'), refusal: refusal('temperature', 'too high') },
  ]);
  assert.deepEqual(error.toBody(), {
    error: {
      message: "No upstream of model 'service-a' can take this request. target 1 (anthropic): Invalid value for 'stop[0]': blank. target 3 (openai): Invalid value for 'temperature': too high.",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_value',
    },
  });
  assert.equal(error.status, 400);
  assert.equal(/claude|c1|other|o1/.test(error.message), false, error.message);
});

test('no refusal at all is a programming error', () => {
  assert.throws(() => everyTargetRefused('service-a', []), TypeError);
});
