// The config's list of documented Responses fields (what responsesPassthrough
// may not name) is the validator's list: two folders, one fact, held equal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOCUMENTED_RESPONSES_FIELDS } from '../../src/config/responses-passthrough-config.ts';
import { DOCUMENTED_TOP_LEVEL_FIELDS, OPERATOR_CONSENT_FIELDS } from '../../src/responses/response-request-validator.ts';

test("the config's documented Responses fields are the validator's, less those that need the operator's consent", () => {
  const validator = new Set(DOCUMENTED_TOP_LEVEL_FIELDS.filter((f) => !OPERATOR_CONSENT_FIELDS.includes(f)));
  assert.deepEqual([...new Set(DOCUMENTED_RESPONSES_FIELDS)].sort(), [...validator].sort());
});
