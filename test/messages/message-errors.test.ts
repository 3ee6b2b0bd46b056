// The gateway's errors in Anthropic's envelope: status, type and message for
// every status the catalogue uses, the param folded into the message, and the
// generic 500 for anything unexpected.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, AuthenticationError, InvalidRequestError } from '../../src/errors/api-error.ts';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/errors/catalogue.ts';
import { anthropicErrorOf, renderAnthropicError } from '../../src/messages/message-errors.ts';

test('every catalogue status maps to Anthropic status and type', () => {
  const expected: Record<number, [number, string]> = {
    400: [400, 'invalid_request_error'],
    401: [401, 'authentication_error'],
    403: [403, 'permission_error'],
    404: [404, 'not_found_error'],
    405: [405, 'invalid_request_error'],
    408: [408, 'invalid_request_error'],
    409: [409, 'invalid_request_error'],
    413: [413, 'request_too_large'],
    415: [415, 'invalid_request_error'],
    417: [417, 'invalid_request_error'],
    426: [426, 'invalid_request_error'],
    429: [429, 'rate_limit_error'],
    431: [431, 'invalid_request_error'],
    500: [500, 'api_error'],
    502: [502, 'api_error'],
    503: [529, 'overloaded_error'],
    504: [504, 'timeout_error'],
  };
  for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
    const error = new ApiError(code, 'x');
    const want = expected[error.status];
    assert.ok(want !== undefined, `${code}: status ${error.status} has no expectation`);
    assert.deepEqual(anthropicErrorOf(error), { status: want[0], type: want[1] }, code);
  }
});

test('the envelope: type error, the error, the request id; the param starts the message unless named in it', () => {
  const rendered = renderAnthropicError(new InvalidRequestError('Expected a string.', 'messages[0].content', 'invalid_type'), 'req_1');
  assert.equal(rendered.status, 400);
  assert.equal(rendered.code, 'invalid_type');
  assert.equal(rendered.body, '{"type":"error","error":{"type":"invalid_request_error","message":"messages[0].content: Expected a string."},"request_id":"req_1"}');
  const named = renderAnthropicError(new InvalidRequestError("'top_k' must be at least 0.", 'top_k', 'invalid_value'), 'req_2');
  assert.equal(JSON.parse(named.body).error.message, "'top_k' must be at least 0.");
  const auth = renderAnthropicError(new AuthenticationError('No key.'), 'req_3');
  assert.equal(auth.status, 401);
  assert.equal(auth.headers['www-authenticate'], 'Bearer realm="portcullis"');
});

test('anything that is not an ApiError is the generic 500 api_error, with no internals', () => {
  const rendered = renderAnthropicError(new Error('secret internals at /srv/x'), 'req_4');
  assert.equal(rendered.status, 500);
  assert.equal(rendered.code, 'internal_error');
  assert.equal(rendered.body, '{"type":"error","error":{"type":"api_error","message":"The server had an error while processing your request."},"request_id":"req_4"}');
});
