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

test("the config's upstream-run tools are hosted tools the validator knows", async () => {
  const { UPSTREAM_RUN_TOOLS } = await import('../../src/config/responses-passthrough-config.ts');
  const { HOSTED_TOOLS } = await import('../../src/responses/response-request-tools.ts');
  for (const type of UPSTREAM_RUN_TOOLS) assert.ok(HOSTED_TOOLS.has(type), type);
});
