// A Responses stream that ends in failure: the message of its `error` event, like the error message of
// response.failed, may repeat what the model wrote, and is guarded as text (the fake guard blocks BLOCK).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawEventGuard } from '../../src/gateway/answer-raw-guard.ts';
import { FakeAnswerGuard } from './answer-guard-fake.ts';
import { created, ev } from './guard-doors-fixtures.ts';

test('response.failed: an error message repeating a blocked value is cut', () => {
  const raw = new RawEventGuard('responses', new FakeAnswerGuard());
  raw.push(ev('response.created', created), []);
  const failed = raw.failure(ev('response.failed', { type: 'response.failed', sequence_number: 1, response: { ...created.response, status: 'failed', error: { code: 'server_error', message: 'could not parse "BLOCK"' } } }));
  assert.equal(failed.data.includes('BLOCK'), false, failed.data);
});

test('an error event whose message repeats a blocked value: cut as well', () => {
  const raw = new RawEventGuard('responses', new FakeAnswerGuard());
  raw.push(ev('response.created', created), []);
  const failed = raw.failure(ev('error', { type: 'error', sequence_number: 1, code: 'server_error', message: 'could not parse "BLOCK"', param: null }));
  assert.equal(failed.data.includes('BLOCK'), false, failed.data);
});
