// The operator's policy on OpenAI's optional fields holds on the Messages door
// too: a translation that would carry json_schema or parallel_tool_calls to an
// OpenAI-compatible upstream needs the alias to accept it; an Anthropic
// upstream takes the client's own body regardless.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPUS, postMessages, startMessagesGateway } from './messages-fixtures.ts';

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const structured = { model: OPUS, max_tokens: 64, output_config: { format: { type: 'json_schema', schema } }, messages: [{ role: 'user', content: 'Where?' }] };

test('an OpenAI-compatible alias without json_schema: 400 naming the Messages field and the setting; nothing sent', async () => {
  const setup = await startMessagesGateway('openai');
  try {
    const res = await postMessages(setup.gw, structured, { 'x-request-id': 'rf-1' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json(), {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: `'output_config.format' becomes OpenAI's 'json_schema' for an upstream that speaks only chat completions, which this model alias does not accept. An Anthropic upstream takes it as sent; the gateway's operator can accept it by adding "json_schema" to "requestFields" in the gateway's config.`,
      },
      request_id: 'rf-1',
    });
    assert.equal(setup.upstream.received.length, 0);
  } finally {
    await setup.close();
  }
});

test('with "requestFields": ["json_schema"] the translation goes, as a strict json_schema', async () => {
  const setup = await startMessagesGateway('openai', { extraConfig: { requestFields: ['json_schema'] } });
  try {
    const res = await postMessages(setup.gw, structured);
    assert.equal(res.status, 200, res.text);
    const sent = JSON.parse(setup.upstream.received.at(-1)!.text) as { response_format: unknown };
    assert.deepEqual(sent.response_format, { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
  } finally {
    await setup.close();
  }
});

test('an Anthropic alias takes output_config.format as sent, whatever requestFields says', async () => {
  const setup = await startMessagesGateway('anthropic');
  try {
    const res = await postMessages(setup.gw, structured);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(JSON.parse(setup.upstream.received.at(-1)!.text).output_config, structured.output_config);
  } finally {
    await setup.close();
  }
});
